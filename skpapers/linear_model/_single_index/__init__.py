# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Robust single-index regression (Das, Chatterjee and Batra, ICML 2026).

- ``estimator``: :class:`RobustSingleIndexRegressor`.
- ``solver``: :func:`robust_single_index`, the function ``fit`` calls, and its stages.
- ``robust_statistics``: robust whitening, filters and robust means.
- ``link_moments``: Gaussian moments of a link (step sizes, ESC constant).
"""
