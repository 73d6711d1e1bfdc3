# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Ground-cost factors and scales of transport clustering.

The squared Euclidean cost between ``X`` and ``Y`` is the rank ``d + 2`` product
``A @ B.T``; every solver stage works on that pair instead of an n x m matrix.
"""

import numpy as np

G_MIN = 1e-18  # floor of a co-cluster mass (an empty co-cluster keeps a finite cost)


def sqeuclidean_factors(X, Y):
    """Factors (A, B) with ``A @ B.T == cdist(X, Y, "sqeuclidean")``."""
    nx = np.einsum("ij,ij->i", X, X)
    ny = np.einsum("ij,ij->i", Y, Y)
    A = np.column_stack([nx, np.ones_like(nx), -2.0 * X])
    B = np.column_stack([np.ones_like(ny), ny, Y])
    return A, B


def sqeuclidean_scale(X, Y):
    """Cheap upper bound of the largest squared distance between X and Y rows.

    ``(max ||x - mu|| + max ||y - mu||)^2`` with ``mu`` the joint mean; 1 when the
    points all coincide.
    """
    mu = (X.sum(axis=0) + Y.sum(axis=0)) / (X.shape[0] + Y.shape[0])
    rx = np.sqrt(np.max(np.einsum("ij,ij->i", X - mu, X - mu)))
    ry = np.sqrt(np.max(np.einsum("ij,ij->i", Y - mu, Y - mu)))
    scale = (rx + ry) ** 2
    return scale if scale > 0 else 1.0


def safe_div(M, w):
    """Divide the rows of M by w, with zero rows where w is zero."""
    out = np.zeros_like(M)
    np.divide(M, w[:, None], out=out, where=w[:, None] > 0)
    return out
