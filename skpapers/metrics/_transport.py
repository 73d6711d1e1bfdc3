# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Metrics of low-rank transport plans ``P = Q diag(1/g) R^T``."""

import numpy as np
from sklearn.utils import check_array, check_consistent_length

from skpapers.utils._lowrank import lowrank_cost

__all__ = ["class_transfer_accuracy", "lowrank_ot_cost"]


def _check_factors(Q, R, g):
    Q = check_array(Q, dtype=np.float64)
    R = check_array(R, dtype=np.float64)
    g = check_array(g, dtype=np.float64, ensure_2d=False)
    if g.ndim != 1 or Q.shape[1] != g.shape[0] or R.shape[1] != g.shape[0]:
        raise ValueError(
            f"Q {Q.shape}, R {R.shape} and g {g.shape} do not describe a rank-K plan: "
            "expected Q (n, K), R (m, K) and g (K,)."
        )
    if np.any(g <= 0):
        raise ValueError("g must be positive (the mass of every co-cluster).")
    for name, factor in (("Q", Q), ("R", R)):
        if np.any(factor < 0):
            raise ValueError(f"{name} has negative entries: a plan's factors hold masses.")
        if not np.any(factor):
            raise ValueError(f"{name} is zero: the plan moves no mass.")
    return Q, R, g


def lowrank_ot_cost(C, Q, R, g):
    """Transport cost of a low-rank plan without forming the plan.

    Computes ``<C, Q diag(1/g) R^T> = sum_k Q[:, k] @ C @ R[:, k] / g[k]``.

    Parameters
    ----------
    C : array-like of shape (n, m) or tuple (A, B)
        Cost matrix, or a pair of factors ``A`` (n, p) and ``B`` (m, p) with
        ``C = A @ B.T``; the factored form costs O((n + m) p K) and never forms
        an n x m array.
    Q : array-like of shape (n, K)
        Source factor of the plan.
    R : array-like of shape (m, K)
        Target factor of the plan.
    g : array-like of shape (K,)
        Positive inner marginal (mass of every co-cluster).

    Returns
    -------
    cost : float
        The primal cost of the plan.

    See Also
    --------
    skpapers.cluster.TransportClustering : Fits ``Q``, ``R`` and ``g``.
    class_transfer_accuracy : Label agreement carried by the same plan.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import lowrank_ot_cost
    >>> X = np.array([[0.0], [1.0]])
    >>> Y = np.array([[0.0], [3.0]])
    >>> C = (X - Y.T) ** 2
    >>> Q = R = np.eye(2) / 2
    >>> g = np.array([0.5, 0.5])
    >>> float(lowrank_ot_cost(C, Q, R, g))
    2.0
    >>> A = np.column_stack([X[:, 0] ** 2, np.ones(2), -2 * X[:, 0]])
    >>> B = np.column_stack([np.ones(2), Y[:, 0] ** 2, Y[:, 0]])
    >>> float(lowrank_ot_cost((A, B), Q, R, g))
    2.0
    """
    Q, R, g = _check_factors(Q, R, g)
    if isinstance(C, tuple):
        if len(C) != 2:
            raise ValueError("a factored cost must be a pair (A, B) with C = A @ B.T.")
        A = check_array(C[0], dtype=np.float64)
        B = check_array(C[1], dtype=np.float64)
        if A.shape[0] != Q.shape[0] or B.shape[0] != R.shape[0] or A.shape[1] != B.shape[1]:
            raise ValueError(
                f"factors A {A.shape} and B {B.shape} do not match Q {Q.shape} and R {R.shape}."
            )
        return lowrank_cost((A, B), Q, R, g)
    C = check_array(C, dtype=np.float64)
    if C.shape != (Q.shape[0], R.shape[0]):
        raise ValueError(f"C has shape {C.shape}, expected {(Q.shape[0], R.shape[0])}.")
    return lowrank_cost(C, Q, R, g)


def class_transfer_accuracy(Q, R, g, labels_source, labels_target):
    """Class-transfer accuracy (CTA) of a low-rank plan.

    With one-hot label matrices ``Y_A`` (sources) and ``Y_B`` (targets), the
    class-to-class mass moved by ``P = Q diag(1/g) R^T`` is
    ``M = (Y_A^T Q) diag(1/g) (R^T Y_B)``; CTA is the fraction of mass that
    stays in its class, ``trace(M) / sum(M)``. The plan is never formed.

    Parameters
    ----------
    Q : array-like of shape (n, K)
        Source factor of the plan.
    R : array-like of shape (m, K)
        Target factor of the plan.
    g : array-like of shape (K,)
        Positive inner marginal.
    labels_source : array-like of shape (n,)
        Class of every source point.
    labels_target : array-like of shape (m,)
        Class of every target point (same label set; classes are matched by value).

    Returns
    -------
    cta : float
        Class-transfer accuracy in [0, 1].

    See Also
    --------
    lowrank_ot_cost : Cost of the same plan.

    Notes
    -----
    Metric (iii) of Schmidt, Halmos and Raphael (2026), Section on CIFAR-10.

    References
    ----------
    .. [1] H. Schmidt, P. Halmos, B. J. Raphael, "Transport Clustering: Solving
       Low-Rank Optimal Transport via Clustering", ICML 2026, arXiv:2603.03578.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import class_transfer_accuracy
    >>> Q = R = np.eye(2) / 2
    >>> float(class_transfer_accuracy(Q, R, [0.5, 0.5], [0, 1], [0, 1]))
    1.0
    >>> float(class_transfer_accuracy(Q, R, [0.5, 0.5], [0, 1], [1, 0]))
    0.0
    """
    Q, R, g = _check_factors(Q, R, g)
    ls = np.asarray(labels_source)
    lt = np.asarray(labels_target)
    check_consistent_length(Q, ls)
    check_consistent_length(R, lt)
    classes, inv = np.unique(np.concatenate([ls, lt]), return_inverse=True)
    inv_s, inv_t = inv[: ls.shape[0]], inv[ls.shape[0] :]
    ya = np.zeros((ls.shape[0], classes.shape[0]))
    ya[np.arange(ls.shape[0]), inv_s] = 1.0
    yb = np.zeros((lt.shape[0], classes.shape[0]))
    yb[np.arange(lt.shape[0]), inv_t] = 1.0
    # the ratio does not depend on the scale of Q, R or g: divide out their largest
    # entries so that no product overflows
    M = ((ya.T @ (Q / Q.max())) / (g / g.max())) @ (R.T @ yb / R.max())
    if not M.sum() > 0:
        raise ValueError("Q and R share no co-cluster with mass: the plan moves no mass.")
    return float(np.trace(M) / M.sum())
