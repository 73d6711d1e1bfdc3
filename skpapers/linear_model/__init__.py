# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Generalised linear models: robust single-index regression.

The method lives in the private subpackage ``_single_index``: ``estimator``
holds :class:`RobustSingleIndexRegressor`, ``solver`` the function
:func:`robust_single_index` that ``fit`` calls and its stages.
"""

from skpapers.linear_model._single_index.display import SingleIndexDisplay
from skpapers.linear_model._single_index.estimator import RobustSingleIndexRegressor
from skpapers.linear_model._single_index.solver import (
    RobustSingleIndexResult,
    fit_link_scale,
    robust_single_index,
)

__all__ = [
    "RobustSingleIndexRegressor",
    "RobustSingleIndexResult",
    "SingleIndexDisplay",
    "fit_link_scale",
    "robust_single_index",
]
