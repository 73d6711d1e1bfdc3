# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Generalized K-means by mirror descent (GKMS) on a registered cost.

The registered cost ``C~`` (n x n) is given either densely, as an ndarray, or in
factored form, as a pair ``(A, B)`` with ``C~ = A @ B.T``; the factored form
never materialises an n x n matrix and costs O(n K p) per iteration, p the
number of factor columns (d + 2 for the squared Euclidean cost).
"""

import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from skpapers.cluster._transport.cost import G_MIN, safe_div

# self-transport: k-means++ restarts of the first K-means start. With the merged
# 2K start and the swaps, 6 restarts gave the costs of 10 on 24 development seeds
# (two moons, Gaussian clouds in d = 2 and 50, K = 10 and 50) in about 0.6 of the time
_N_INIT_KMEANS = 6


def _gradient(cost, Q, g):
    """Gradient ``(C~ Q + C~^T Q) / g - quad / g^2`` and ``quad = diag(Q^T C~ Q)``.

    ``cost`` is a dense (n, n) array or the stacked factors ``(W, p)`` with
    ``W = [A, B]``: then ``[A^T Q; B^T Q] = W^T Q`` (2p x K) gives ``quad`` for
    free and the gradient is a single (n, 2p) x (2p, K) product.
    """
    if isinstance(cost, tuple):
        W, p = cost
        M = W.T @ Q
        quad = np.einsum("pk,pk->k", M[:p], M[p:])
        grad = W @ (np.vstack([M[p:], M[:p]]) / g)
    else:
        grad = cost @ Q
        quad = np.einsum("ik,ik->k", Q, grad)
        grad += cost.T @ Q
        grad /= g
    grad -= quad / g**2
    return grad, quad


def _gkms(cost, log_q0, a, *, step_size, max_iter, tol=1e-10, patience=None, progress=None):
    """Mirror descent on the semi-relaxed generalized K-means problem.

    Minimises ``F(Q) = sum_k q_k^T C~ q_k / g_k`` over nonnegative Q with row
    sums ``a`` (columns free, ``g = Q^T 1``) by exponentiated-gradient steps in
    the log domain, ``log Q <- log Q - gamma_t grad F(Q)`` followed by a row
    renormalisation, with ``gamma_t = step_size / max|grad F(Q_t)|^2``.

    Parameters
    ----------
    cost : ndarray of shape (n, n) or tuple (A, B)
        Registered cost, dense or factored (``C~ = A @ B.T``).
    log_q0 : ndarray of shape (n, K)
        Logarithm of the initial row-stochastic matrix (rows sum to one;
        ``-inf`` entries stay zero).
    a : ndarray of shape (n,)
        Row marginal of Q (nonnegative, sums to one).
    step_size : float
        ``gamma_0`` of the step rule.
    max_iter : int
        Maximum number of iterations.
    tol : float, default=1e-10
        Stop when the relative change of the objective falls below ``tol``.
    patience : int or None, default=None
        Also stop when the hard labels ``argmax(Q)`` have not changed for this
        many iterations (for a plan that is hardened afterwards, which only
        reads those labels).
    progress : Progress or None, default=None
        Reports the objective per iteration (``verbose >= 2``) and why it stopped.

    Returns
    -------
    Q : ndarray of shape (n, K)
        Soft assignment with row sums ``a``.
    n_iter : int
        Number of iterations run.
    """
    if isinstance(cost, tuple):
        cost = (np.hstack(cost), cost[0].shape[1])
    log_p = np.array(log_q0, dtype=np.float64)
    P = np.exp(log_p)
    Q = a[:, None] * P
    f_prev = f = np.inf
    n_iter = 0
    reason = f"max_iter={max_iter} reached"
    labels, still = np.argmax(log_p, axis=1), 0
    while n_iter < max_iter:
        n_iter += 1
        g = np.maximum(Q.sum(axis=0), G_MIN)
        grad, quad = _gradient(cost, Q, g)
        f = float(np.sum(quad / g))
        gmax = max(grad.max(), -grad.min())
        if gmax == 0 or abs(f_prev - f) <= tol * abs(f):
            reason = "converged (relative change of the objective below tol)"
            break
        if progress is not None:
            progress.iteration(f"generalized K-means iteration {n_iter}: objective {f:.6g}")
        f_prev = f
        gamma = step_size / gmax**2
        log_p -= gamma * grad
        if gamma * gmax > 500:  # rows moved far: recentre before exp (else rows stay <= 500)
            log_p -= np.max(log_p, axis=1, keepdims=True)
        np.exp(log_p, out=P)
        s = P.sum(axis=1)
        np.multiply(P, (a / s)[:, None], out=Q)
        log_p -= np.log(s)[:, None]
        if patience is not None:
            new = np.argmax(log_p, axis=1)
            still = still + 1 if np.array_equal(new, labels) else 0
            labels = new
            if still >= patience:
                reason = f"hard labels unchanged for {patience} iterations"
                break
    if progress is not None:
        progress.iteration(
            f"generalized K-means stopped after {n_iter} iterations: {reason}; "
            f"objective {f:.6g}",
            force=True,
        )
    return Q, n_iter


def _init_log_q(Z, a, n_clusters, init, init_mix, rng):
    """Log of the initial row-stochastic matrix ``(1 - mix) H + mix Rand``.

    ``H`` is the one-hot K-means assignment of the rows of ``Z`` (weighted by
    ``a``; ``min(K, 10, 1e5 // n)`` restarts, at least one) for
    ``init="kmeans"``, the rows of a user array normalised to one, or
    absent for ``init="random"`` (then ``Rand`` alone). ``Rand`` has |N(0, 1)|
    entries normalised per row, as in the authors' code.
    """
    n = a.shape[0]
    rand = np.abs(rng.standard_normal((n, n_clusters)))
    rand /= rand.sum(axis=1, keepdims=True)
    if isinstance(init, str) and init == "random":
        return np.log(rand)
    if isinstance(init, str):  # "kmeans"
        km = KMeans(
            n_clusters=n_clusters,
            n_init=max(1, min(n_clusters, 10, 100_000 // n)),
            random_state=rng.randint(np.iinfo(np.int32).max),
        )
        with warnings.catch_warnings():
            # duplicated points give fewer distinct clusters: the random part
            # of the mixture revives the empty ones
            warnings.simplefilter("ignore", ConvergenceWarning)
            labels = km.fit(Z, sample_weight=a if np.any(a > 0) else None).labels_
        hard = np.zeros((n, n_clusters))
        hard[np.arange(n), labels] = 1.0
    else:
        rows = init.sum(axis=1, keepdims=True)
        hard = np.divide(init, rows, out=np.full_like(init, 1.0 / n_clusters), where=rows > 0)
    mixed = (1.0 - init_mix) * hard + init_mix * rand
    with np.errstate(divide="ignore"):
        return np.log(mixed)


def _assign_by_gradient(cost, sample_cost, Q, *, block=1 << 15):
    """Hard labels of every row of a factored cost from a plan fitted on a subsample.

    ``sample_cost = (A_s, B_s)`` holds the rows of a random subsample of the
    registered pairs, ``Q`` its (soft) assignment. Every row of ``cost = (A, B)``
    goes to the co-cluster with the smallest gradient entry,
    ``argmin_k (A_i . B_s^T q_k + B_i . A_s^T q_k) / g_k - q_k^T C_s q_k / g_k^2``:
    its expected cost to the co-cluster's members, which only needs the
    subsample's co-cluster sums, in O(n K p) time and O(block K) extra memory.
    """
    A, B = cost
    g = np.maximum(Q.sum(axis=0), G_MIN)
    MA, MB = sample_cost[0].T @ Q, sample_cost[1].T @ Q
    quad = np.einsum("pk,pk->k", MA, MB) / g**2
    MA, MB = MA / g, MB / g
    labels = np.empty(A.shape[0], dtype=np.intp)
    for start in range(0, A.shape[0], block):
        sl = slice(start, min(start + block, A.shape[0]))
        G = A[sl] @ MB
        G += B[sl] @ MA
        G -= quad
        labels[sl] = np.argmin(G, axis=1)
    return labels



def _ward_merge(centers, masses, n_clusters):
    """Labels merging weighted centres into ``n_clusters`` groups by Ward's criterion.

    Greedy agglomeration: merging groups i and j raises the K-means cost by
    ``D_ij = g_i g_j / (g_i + g_j) ||mu_i - mu_j||^2``; the cheapest merge is
    made and the merged group's row of ``D`` updated by the Lance-Williams
    formula, until ``n_clusters`` groups remain (O(L^2) per merge, L centres).
    """
    g = np.asarray(masses, dtype=np.float64).copy()
    diff = centers[:, None, :] - centers[None, :, :]
    gg = g[:, None] + g[None, :]
    D = np.divide(np.outer(g, g), gg, out=np.zeros_like(gg), where=gg > 0)
    D *= np.einsum("ijk,ijk->ij", diff, diff)
    np.fill_diagonal(D, np.inf)
    groups = np.arange(g.shape[0])
    for _ in range(g.shape[0] - n_clusters):
        i, j = np.unravel_index(np.argmin(D), D.shape)
        live = np.isfinite(D[i]) & np.isfinite(D[j])  # the other groups still there
        gl, total = g[live], g[live] + g[i] + g[j]
        merged = (gl + g[i]) * D[i, live] + (gl + g[j]) * D[j, live] - gl * D[i, j]
        row = np.full_like(g, np.inf)
        row[live] = np.divide(merged, total, out=np.zeros_like(total), where=total > 0)
        D[i, :] = D[:, i] = row
        D[i, i] = np.inf
        D[j, :] = D[:, j] = np.inf
        g[i] += g[j]
        groups[groups == j] = i
    return np.unique(groups, return_inverse=True)[1]


def _swap_centres(X, a, km, *, max_swaps=20):
    """Improve a K-means solution by merge-and-split swaps of its centres.

    Each swap merges the two clusters whose merge raises the cost least
    (Ward's criterion), splits the cluster of largest within-cluster cost
    along its principal axis (two centres at ``mu +- sqrt(2 lambda / pi) v``,
    the means of the halves of a Gaussian) and runs Lloyd iterations from the
    new centres; it is kept if the cost drops, otherwise the search stops. The
    swap moves a centre across the data, out of the local optima where one
    group holds two centres and another centre spans two groups. Returns the
    fitted ``KMeans`` of the cheapest solution.
    """
    K = km.cluster_centers_.shape[0]
    if K < 3:
        return km
    for _ in range(max_swaps):
        mu, labels = km.cluster_centers_, km.labels_
        g = np.bincount(labels, weights=a, minlength=K)
        diff = mu[:, None, :] - mu[None, :, :]
        gg = g[:, None] + g[None, :]
        D = np.divide(np.outer(g, g), gg, out=np.zeros_like(gg), where=gg > 0)
        D *= np.einsum("ijk,ijk->ij", diff, diff)
        np.fill_diagonal(D, np.inf)
        i, j = np.unravel_index(np.argmin(D), D.shape)
        resid = X - mu[labels]
        within = np.bincount(labels, weights=a * np.einsum("ij,ij->i", resid, resid), minlength=K)
        within[[i, j]] = -np.inf
        k = int(np.argmax(within))
        if within[k] <= 0:
            return km
        members = labels == k
        scaled = np.sqrt(a[members])[:, None] * resid[members]
        _, sv, vt = np.linalg.svd(scaled, full_matrices=False)
        half = np.sqrt(2.0 / np.pi * sv[0] ** 2 / g[k]) * vt[0]
        merged = (g[i] * mu[i] + g[j] * mu[j]) / gg[i, j] if gg[i, j] > 0 else mu[i]
        others = np.delete(mu, [i, j, k], axis=0)
        init = np.vstack([others, merged, mu[k] - half, mu[k] + half])
        trial = KMeans(K, init=init, n_init=1).fit(X, sample_weight=a)
        if not trial.inertia_ < km.inertia_ * (1 - 1e-12):
            return km
        km = trial
    return km


def _kmeans_start(X, a, n_clusters, rng):
    """Return the labels of a K-means partition of ``X`` (weights ``a``) to harden.

    The cheaper of ``KMeans(n_init=6)`` and (when ``2 K <= n``) ``KMeans``
    with ``2 K`` clusters whose centres are merged to K by Ward's criterion
    and refined by Lloyd iterations, then improved by :func:`_swap_centres`:
    the merged start and the swaps escape the local optima where k-means++
    seeding leaves two centres in one group and one centre over two groups.
    """
    seeds = rng.randint(np.iinfo(np.int32).max, size=2)
    with warnings.catch_warnings():
        # duplicated points give fewer distinct clusters than requested
        warnings.simplefilter("ignore", ConvergenceWarning)
        best = KMeans(n_clusters, n_init=_N_INIT_KMEANS, random_state=seeds[0])
        best.fit(X, sample_weight=a)
        if 2 * n_clusters <= X.shape[0] and n_clusters > 1:
            fine = KMeans(2 * n_clusters, n_init=1, random_state=seeds[1])
            fine.fit(X, sample_weight=a)
            masses = np.bincount(fine.labels_, weights=a, minlength=2 * n_clusters)
            merged = _ward_merge(fine.cluster_centers_, masses, n_clusters)
            sums = np.zeros((n_clusters, X.shape[1]))
            np.add.at(sums, merged, masses[:, None] * fine.cluster_centers_)
            centres = safe_div(sums, np.bincount(merged, weights=masses, minlength=n_clusters))
            other = KMeans(n_clusters, init=centres, n_init=1).fit(X, sample_weight=a)
            best = other if other.inertia_ < best.inertia_ else best
        best = _swap_centres(X, a, best)
    return best.labels_
