# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Generalised linear models: robust single index model regression."""

from skpapers.linear_model._robust_sim import RobustSingleIndexRegressor

__all__ = ["RobustSingleIndexRegressor"]
