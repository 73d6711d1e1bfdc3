# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one module re-exporting scikit-learn's private parameter validation.

If scikit-learn moves these names, only this file changes.
"""

from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    StrOptions,
    validate_params,
)

__all__ = ["HasMethods", "Hidden", "Interval", "Options", "StrOptions", "validate_params"]
