# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Registration step of transport clustering: full-rank OT plans and bijections.

* ``_assignment``: optimal permutation (Hungarian / LAPJV, scipy).
* ``_exact_ot``: exact Kantorovich plan by linear programming (HiGHS, scipy).
* ``_sinkhorn``: log-domain entropic plan with epsilon-scaling, rounded onto
  the transport polytope; ``_round_to_permutation`` turns it into a bijection.
* ``_hierarchical_assignment``: bijection by recursive balanced rank-2 splits
  (squared Euclidean, linear memory).
"""

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment, linprog
from scipy.sparse.csgraph import min_weight_full_bipartite_matching
from scipy.spatial.distance import cdist

from skpapers.cluster._gkms import _gkms, _init_log_q, _sqeuclidean_factors, _sqeuclidean_scale


def _assignment(C):
    """Optimal permutation ``sigma`` (source i -> target sigma[i]) of a square cost."""
    rows, cols = linear_sum_assignment(C)
    sigma = np.empty(C.shape[0], dtype=np.intp)
    sigma[rows] = cols
    return sigma


def _round_to_polytope(P, a, b):
    """Project a nonnegative plan onto ``Pi(a, b)`` (Altschuler et al., 2017).

    Rows and then columns are scaled down to their marginals, and the missing
    mass is added back as a rank-one term, so the marginals hold to rounding
    error while ``P`` moves by at most twice its marginal violation (l1).
    """
    P = np.maximum(P, 0.0)
    r = P.sum(axis=1)
    P *= np.minimum(1.0, np.divide(a, r, out=np.zeros_like(a), where=r > 0))[:, None]
    c = P.sum(axis=0)
    P *= np.minimum(1.0, np.divide(b, c, out=np.zeros_like(b), where=c > 0))[None, :]
    err_r = a - P.sum(axis=1)
    err_c = b - P.sum(axis=0)
    total = err_r.sum()
    if total > 0:
        P += np.outer(err_r, err_c) / total
    return P


def _exact_ot(C, a, b):
    """Exact optimal coupling in ``Pi(a, b)`` by the HiGHS linear-program solver."""
    n, m = C.shape
    rows = sparse.kron(sparse.eye(n), np.ones((1, m)))
    cols = sparse.kron(np.ones((1, n)), sparse.eye(m))
    res = linprog(
        C.ravel(),
        A_eq=sparse.vstack([rows, cols]).tocsr(),
        b_eq=np.concatenate([a, b * (a.sum() / b.sum())]),
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - HiGHS solves every feasible transport LP
        raise ValueError(f"exact optimal transport failed: {res.message}")
    return _round_to_polytope(res.x.reshape(n, m), a, b)


def _lse(M, axis):
    mx = np.max(M, axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    out = np.log(np.sum(np.exp(M - mx), axis=axis, keepdims=True)) + mx
    return np.squeeze(out, axis=axis)


def _sinkhorn(C, a, b, reg, *, max_iter=2000, tol=1e-9):
    """Log-domain Sinkhorn with epsilon-scaling from 1 down to ``reg``.

    ``C`` must be normalised (max 1) and ``a``, ``b`` positive. Intermediate
    values of epsilon get at most 30 iterations each (warm-started potentials);
    the last one runs until the l1 row-marginal error is below ``tol`` or
    ``max_iter`` iterations. Returns the dual potentials ``(f, g)`` and the plan
    rounded onto ``Pi(a, b)``.
    """
    loga, logb = np.log(a), np.log(b)
    f = np.zeros(C.shape[0])
    g = np.zeros(C.shape[1])
    n_stages = max(int(np.ceil(np.log(1.0 / reg) / np.log(2.0))), 0)
    schedule = [max(reg, 0.5**k) for k in range(n_stages + 1)]
    for eps in schedule:
        last = eps == schedule[-1]
        for it in range(max_iter if last else 30):
            f = eps * loga - eps * _lse((g[None, :] - C) / eps, axis=1)
            g = eps * logb - eps * _lse((f[:, None] - C) / eps, axis=0)
            if last and it % 10 == 0:
                row = np.exp(_lse((f[:, None] + g[None, :] - C) / eps, axis=1))
                if np.abs(row - a).sum() < tol:
                    break
    P = np.exp((f[:, None] + g[None, :] - C) / schedule[-1])
    return f, g, _round_to_polytope(P, a, b)


def _round_to_permutation(C, f, g):
    """Bijection from a near-sparse entropic plan.

    Solves the minimum-cost perfect matching restricted to the ``k`` smallest
    reduced costs ``C_ij - f_i - g_j`` of every row (the largest plan entries),
    doubling ``k`` until that sparse graph has a perfect matching (dense
    assignment once ``k`` reaches n).
    """
    n = C.shape[0]
    reduced = C - f[:, None] - g[None, :]
    k = min(n, 8)
    while k < n:
        idx = np.argpartition(reduced, k - 1, axis=1)[:, :k]
        w = C[np.arange(n)[:, None], idx] + 1.0  # strictly positive edge weights
        graph = sparse.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), (n, n))
        try:
            rows, cols = min_weight_full_bipartite_matching(graph)
        except ValueError:  # no perfect matching inside the support yet
            k *= 4
            continue
        sigma = np.empty(n, dtype=np.intp)
        sigma[rows] = cols
        return sigma
    return _assignment(C)


def _split_scores(Xs, Ys, rng, *, step_size, max_iter):
    """Rank-2 transport clustering of a subsample; linear scores of both sides.

    Returns ``(wx, cx, wy, cy)`` such that ``X @ wx + cx`` is the difference of
    the co-cluster costs D[:, 0] - D[:, 1] of sources (and likewise targets).
    """
    A, B = _sqeuclidean_factors(Xs, Ys)
    C = A @ B.T
    sigma = _assignment(C)
    scale = _sqeuclidean_scale(Xs, Ys)
    a = np.full(Xs.shape[0], 1.0 / Xs.shape[0])
    log_q0 = _init_log_q(Xs, a, 2, "kmeans", 0.5, rng)
    Q, _ = _gkms((A / scale, B[sigma]), log_q0, a, step_size=step_size, max_iter=max_iter)
    R = np.empty_like(Q)
    R[sigma] = Q
    g = np.maximum(Q.sum(axis=0), 1e-18)
    mu = (Q.T @ Xs) / g[:, None]
    nu = (R.T @ Ys) / g[:, None]
    t = (Q.T @ np.einsum("ij,ij->i", Xs, Xs)) / g
    s = (R.T @ np.einsum("ij,ij->i", Ys, Ys)) / g
    return -2.0 * (nu[0] - nu[1]), s[0] - s[1], -2.0 * (mu[0] - mu[1]), t[0] - t[1]


def _hierarchical_assignment(
    X, Y, rng, *, leaf_size=1024, sample_size=1024, step_size=2.0, max_iter=250
):
    """Bijection between equal-size point clouds by recursive balanced splits.

    Every block of more than ``leaf_size`` pairs is split in two: a rank-2
    transport clustering fitted on at most ``sample_size`` random sources and
    targets of the block scores every point by the difference of its two
    co-cluster costs (a linear function), both sides are sorted by that score
    and cut at the same position (half the block), and each half is registered
    recursively. Blocks of at most ``leaf_size`` pairs are solved exactly.
    Memory is O(n d + leaf_size^2), time O(n d log n + n leaf_size^2).
    """
    n = X.shape[0]
    sigma = np.empty(n, dtype=np.intp)
    stack = [(np.arange(n), np.arange(n))]
    while stack:
        src, tgt = stack.pop()
        size = src.shape[0]
        if size <= leaf_size:
            local = _assignment(cdist(X[src], Y[tgt], "sqeuclidean"))
            sigma[src] = tgt[local]
            continue
        ns = min(size, sample_size)
        sub_x = src[rng.choice(size, ns, replace=False)]
        sub_y = tgt[rng.choice(size, ns, replace=False)]
        wx, cx, wy, cy = _split_scores(
            X[sub_x], Y[sub_y], rng, step_size=step_size, max_iter=max_iter
        )
        order_x = src[np.argsort(X[src] @ wx + cx, kind="stable")]
        order_y = tgt[np.argsort(Y[tgt] @ wy + cy, kind="stable")]
        cut = size // 2
        stack.append((order_x[cut:], order_y[cut:]))
        stack.append((order_x[:cut], order_y[:cut]))
    return sigma
