# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one module importing scikit-learn's private names.

Parameter validation (``Interval``, ``StrOptions``, ...), the ``fit`` decorator
``_fit_context``, ``_check_sample_weight`` and the test-id helper
``_get_check_estimator_ids`` are private in scikit-learn; every
skpapers module (and the plugin template) imports them from here, so that a
move in scikit-learn means editing this file only.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils.estimator_checks import _get_check_estimator_ids
from sklearn.utils.validation import _check_sample_weight

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "Options",
    "StrOptions",
    "_check_sample_weight",
    "_get_check_estimator_ids",
    "_fit_context",
    "validate_params",
]
