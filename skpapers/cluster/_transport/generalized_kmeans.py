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

from skpapers.cluster._transport.cost import G_MIN


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


def _gkms(cost, log_q0, a, *, step_size, max_iter, tol=1e-10, progress=None):
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
