# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Placeholder: replaced by the method's implementation."""

from sklearn.base import BaseEstimator


class UnlabeledPCA(BaseEstimator):  # noqa: D101
    pass
