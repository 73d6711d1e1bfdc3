# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Registration step of transport clustering: full-rank OT plans and bijections.

* ``_assignment``: optimal permutation (Hungarian / LAPJV, scipy).
* ``_exact_ot``: exact Kantorovich plan by POT's network simplex.
* ``_sinkhorn``: log-domain entropic plan with epsilon-scaling, rounded onto
  the transport polytope; ``_round_to_permutation`` turns it into a bijection.
* ``_hierarchical_assignment``: bijection by recursive balanced rank-2 splits
  (squared Euclidean, linear memory).
"""

import warnings

import numpy as np
from scipy import sparse
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import min_weight_full_bipartite_matching
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning

from skpapers.cluster._transport.cost import G_MIN, sqeuclidean_factors, sqeuclidean_scale
from skpapers.cluster._transport.generalized_kmeans import _gkms, _init_log_q


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
    err_r = np.maximum(a - P.sum(axis=1), 0.0)
    err_c = np.maximum(b - P.sum(axis=0), 0.0)
    total = err_r.sum()
    if total > 0:
        P += np.outer(err_r, err_c) / total
    return P


def _exact_ot(C, a, b):
    """Exact optimal coupling in ``Pi(a, b)`` by POT's network simplex (``ot.emd``).

    At 1000 x 700 it takes 0.05 s, where eps = 1e-5 Sinkhorn takes about 10 s
    for a plan 6 % costlier. If the simplex stops short of optimality (its
    iteration cap, 100 pivots per point), the plan is kept with a warning.
    """
    import ot  # imported here: importing POT takes about 2 s, paid by the fits that need it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported through result_code below
        P, log = ot.emd(
            a, b, np.ascontiguousarray(C), numItermax=max(100_000, 100 * sum(C.shape)), log=True
        )
    if log["result_code"] != 1:
        warnings.warn(
            f"the network simplex stopped before optimality ({log['warning']}): the "
            "registration is a feasible coupling that may cost more than the optimal one.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return _round_to_polytope(np.asarray(P, dtype=np.float64), a, b)


def _softmin(C, pot, eps, axis, buf):
    """``-eps * log sum exp((pot - C) / eps)`` along ``axis`` (in-place on ``buf``)."""
    other = pot[None, :] if axis == 1 else pot[:, None]
    np.subtract(other, C, out=buf)
    buf /= eps
    mx = np.max(buf, axis=axis, keepdims=True)
    buf -= mx
    np.maximum(buf, -700.0, out=buf)  # exp underflows anyway; avoids slow subnormals
    np.exp(buf, out=buf)
    return -eps * (np.log(np.sum(buf, axis=axis)) + np.squeeze(mx, axis=axis))


def _sinkhorn(C, a, b, reg, *, max_iter=1000, tol=1e-6):
    """Log-domain Sinkhorn with epsilon-scaling from 1 down to ``reg``.

    ``C`` must be normalised (max 1) and ``a``, ``b`` positive. Epsilon is
    halved at every stage (warm-started potentials); a stage stops when the
    l1 error of the row marginal, read off the change of the row potential,
    is below 1e-3 (``tol`` at the last stage) or after 50 iterations
    (``max_iter`` at the last stage). Returns the dual potentials ``(f, g)``
    and the plan rounded onto ``Pi(a, b)``.
    """
    loga, logb = np.log(a), np.log(b)
    f = np.zeros(C.shape[0])
    g = np.zeros(C.shape[1])
    buf = np.empty_like(C)
    n_stages = max(int(np.ceil(np.log(1.0 / reg) / np.log(2.0))), 0)
    schedule = [max(reg, 0.5**k) for k in range(n_stages + 1)]
    for eps in schedule:
        last = eps == schedule[-1]
        f = _softmin(C, g, eps, 1, buf) + eps * loga
        for _ in range(max_iter if last else 50):
            g = _softmin(C, f, eps, 0, buf) + eps * logb
            eps_f = _softmin(C, g, eps, 1, buf) + eps * loga
            # row sums of the current plan are a * exp((f - f_next) / eps)
            err = np.sum(a * np.abs(np.expm1((f - eps_f) / eps)))
            f = eps_f
            if err < (tol if last else 1e-3):
                break
    g = _softmin(C, f, schedule[-1], 0, buf) + schedule[-1] * logb
    np.subtract(f[:, None] + g[None, :], C, out=buf)
    buf /= schedule[-1]
    np.exp(buf, out=buf)
    return f, g, _round_to_polytope(buf, a, b)


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


def _two_means(Z, rng, *, n_iter=20):
    """Labels of a 2-means partition of the rows of ``Z`` (numpy Lloyd iterations).

    Started from the sign of the projection on the leading principal direction
    (a few power iterations), which is what sklearn's ``KMeans`` would find on
    two well-separated groups at a fraction of its fixed overhead.
    """
    centred = Z - Z.mean(axis=0)
    v = _leading_direction(centred, rng)
    proj = centred @ v
    labels = (proj > np.median(proj)).astype(np.intp)
    for _ in range(n_iter):
        if labels.min() == labels.max():
            break
        mu = np.stack([Z[labels == 0].mean(axis=0), Z[labels == 1].mean(axis=0)])
        new = (Z @ (mu[1] - mu[0]) > 0.5 * (mu[1] @ mu[1] - mu[0] @ mu[0])).astype(np.intp)
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


def _leading_direction(centred, rng, *, n_iter=8):
    """Return the unit leading principal direction of centred rows (power method)."""
    v = rng.standard_normal(centred.shape[1])
    for _ in range(n_iter):
        v = centred.T @ (centred @ v)
        norm = np.linalg.norm(v)
        if norm == 0:
            v = np.zeros(centred.shape[1])
            v[0] = 1.0
            return v
        v /= norm
    return v


def _split_scores(Xs, Ys, rng, *, leaf_size, step_size, max_iter):
    """Rank-2 transport clustering of a subsample; linear split scores of both sides.

    The subsample is registered like a block: exactly if it fits in a leaf of
    ``leaf_size`` pairs, else by principal-direction cuts into such leaves.

    Returns ``(wx, cx, wy, cy)``: ``X @ wx + cx`` is the difference between
    co-clusters 0 and 1 of ``D[:, k] - cbar_k / 2``, with ``D`` the co-cluster
    costs of a source (its expected cost to the targets of co-cluster k) and
    ``cbar_k`` the mean cost inside co-cluster k; this is the GKM gradient with
    the missing partner term replaced by its symmetric twin, so the spread of a
    co-cluster cancels out (the K-means rule). Likewise ``Y @ wy + cy`` for
    targets.
    """
    A, B = sqeuclidean_factors(Xs, Ys)
    if Xs.shape[0] <= leaf_size:
        sigma = _assignment(A @ B.T)
    else:
        sigma = _hierarchical_assignment(Xs, Ys, rng, leaf_size=leaf_size, split="pca")
    scale = sqeuclidean_scale(Xs, Ys)
    a = np.full(Xs.shape[0], 1.0 / Xs.shape[0])
    hard = np.zeros((Xs.shape[0], 2))
    hard[np.arange(Xs.shape[0]), _two_means(Xs, rng)] = 1.0
    log_q0 = _init_log_q(Xs, a, 2, hard, 0.5, rng)
    # the split reads the co-clusters' sums: stop once the hard labels settle
    Q, _ = _gkms(
        (A / scale, B[sigma]), log_q0, a, step_size=step_size, max_iter=max_iter, tol=1e-6,
        patience=10,
    )
    R = np.empty_like(Q)
    R[sigma] = Q
    g = np.maximum(Q.sum(axis=0), G_MIN)
    cbar = np.einsum("pk,pk->k", A.T @ Q, B.T @ R) / g**2
    mu = (Q.T @ Xs) / g[:, None]
    nu = (R.T @ Ys) / g[:, None]
    t = (Q.T @ np.einsum("ij,ij->i", Xs, Xs)) / g - cbar / 2
    s = (R.T @ np.einsum("ij,ij->i", Ys, Ys)) / g - cbar / 2
    return -2.0 * (nu[0] - nu[1]), s[0] - s[1], -2.0 * (mu[0] - mu[1]), t[0] - t[1]


def _solve_block(X, Y, src, tgt, sigma):
    """Exact assignment of the sources ``src`` to the targets ``tgt`` (equal sizes)."""
    local = _assignment(cdist(X[src], Y[tgt], "sqeuclidean"))
    sigma[src] = tgt[local]


def _hierarchical_assignment(
    X, Y, rng, *, leaf_size=None, sample_size=1024, step_size=2.0, max_iter=250,
    split="auto", seams=None,
):
    """Bijection between equal-size point clouds by recursive balanced splits.

    Every block of more than ``leaf_size`` pairs is split in two: both sides
    are scored by one linear function each, sorted by that score and cut at
    the same position, and each half is registered recursively. Blocks of at
    most ``leaf_size`` pairs are solved exactly. The scores come from a rank-2
    transport clustering fitted on at most ``sample_size`` random sources and
    targets of the block (the difference of a point's two co-cluster costs;
    ``split="tc"``; the sample is registered like a block, exactly when it fits
    in a leaf, else by principal-direction cuts into leaves: with leaves of 256
    at n = m = 2e5, d = K = 50, that took a fifth of the fit's time off for a
    final cost within -0.015 % and +0.027 % of the exactly registered samples'
    on four seeds), or from the projection of both sides on the leading
    principal direction of the block (``split="pca"``, sliced matching;
    ``"auto"`` uses it below the top four levels of the tree, for blocks of at
    most ``max(leaf_size, n / 16)`` pairs).
    ``leaf_size`` None means 1024 up to n = 65536, else 256 (the leaves cost
    O(n leaf_size^1.5) time; at n = m = 2e5, d = K = 50, leaves of 256 instead
    of 512 cost 2.3 % more in registration, 0.015 % more in the final plan,
    for 2.4 times less registration time). Samples of 512 pairs instead of
    1024 would quarter the split time but cut through clusters: 18 % above the
    exact registration with 50 clusters in d = 50 at n = 2100.

    ``seams``: once every leaf is solved, the pairs whose sources lie within
    ``leaf_size / 2`` ranks of a cut (on either side) are re-assigned exactly
    among themselves, which repairs pairs the cut separated; the cost never
    increases. None means up to n = 65536 only: at n = m = 2e5, d = K = 50
    (four seeds) they lowered the registration cost by 1.7 % but not the
    transport clustering's final cost (-0.007 % to +0.0005 %), for 15 % of
    its time. Memory is O(n d + leaf_size^2), time
    O(n d log n + n leaf_size^2).
    """
    n = X.shape[0]
    if leaf_size is None:
        leaf_size = 1024 if n <= 65536 else 256
    if seams is None:
        seams = n <= 65536
    tc_split_size = max(leaf_size, n // 16)
    sigma = np.empty(n, dtype=np.intp)
    stack = [(np.arange(n), np.arange(n))]
    windows = []
    while stack:
        src, tgt = stack.pop()
        size = src.shape[0]
        if size <= leaf_size:
            _solve_block(X, Y, src, tgt, sigma)
            continue
        if split == "tc" or (split == "auto" and size > tc_split_size):
            ns = min(size, sample_size)
            sub_x = src[rng.choice(size, ns, replace=False)]
            sub_y = tgt[rng.choice(size, ns, replace=False)]
            wx, cx, wy, cy = _split_scores(
                X[sub_x], Y[sub_y], rng, leaf_size=leaf_size, step_size=step_size,
                max_iter=max_iter
            )
            score_x = X[src] @ wx + cx
            score_y = Y[tgt] @ wy + cy
            # cut where both sides switch co-cluster (average of the two counts)
            natural = (np.count_nonzero(score_x < 0) + np.count_nonzero(score_y < 0)) // 2
        else:
            ns = min(size, 4 * sample_size)
            rows = rng.choice(size, ns, replace=False)
            joint = np.vstack([X[src[rows]], Y[tgt[rows]]])
            v = _leading_direction(joint - joint.mean(axis=0), rng)
            score_x, score_y = X[src] @ v, Y[tgt] @ v
            natural = size // 2
        order_x = src[np.argsort(score_x, kind="stable")]
        order_y = tgt[np.argsort(score_y, kind="stable")]
        cut = min(max(natural, 1), size - 1)
        if seams:
            half = leaf_size // 2
            windows.append(order_x[max(cut - half, 0): cut + half])
        stack.append((order_x[cut:], order_y[cut:]))
        stack.append((order_x[:cut], order_y[:cut]))
    for window in reversed(windows):  # deepest cuts first
        _solve_block(X, Y, window, sigma[window], sigma)
    return sigma
