# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Re-exports of scikit-learn's private validation helpers used by skpapers."""

from sklearn.utils.validation import _check_sample_weight

__all__ = ["_check_sample_weight"]
