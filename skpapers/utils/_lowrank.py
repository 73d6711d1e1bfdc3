# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The primal cost of a low-rank transport plan, shared by the solver and the metrics."""

import numpy as np

__all__ = ["lowrank_cost", "route_costs"]


def route_costs(cost, Q, R, g):
    """Each co-cluster's share ``Q[:, k]^T C R[:, k] / g_k`` of the low-rank cost.

    ``cost`` is a dense C or a factor pair ``(A, B)`` with ``C = A B^T``. No
    validation: the arrays must already have matching shapes. The factored form
    costs O((n + m) p K) and never forms an n x m array.
    """
    if isinstance(cost, tuple):
        A, B = cost
        return np.einsum("pk,pk->k", A.T @ Q, B.T @ R) / g
    return np.einsum("ik,ik->k", Q, cost @ R) / g


def lowrank_cost(cost, Q, R, g):
    """``<C, Q diag(1/g) R^T>``: the sum of :func:`route_costs`."""
    return float(np.sum(route_costs(cost, Q, R, g)))
