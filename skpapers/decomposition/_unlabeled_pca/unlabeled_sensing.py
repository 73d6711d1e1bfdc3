# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Stage II of unlabeled PCA: unlabeled sensing of every flagged sample.

Each solver finds coefficients ``c_j`` such that ``A @ c_j`` matches the sample
up to an unknown permutation of its entries. Every solver is batched: it works
on all the samples of a chunk at once, with a Python loop over iterations (or
deleted rows), never over samples. Missing entries are described by a boolean
mask ``M`` (``True`` = observed) and are zero in the data arrays passed here.
"""

import numpy as np

from skpapers.decomposition._unlabeled_pca.subspace import (
    _least_squares,
    _masked_gram,
    _solve,
)


def _lsrf(A, Y, M=None, tol=None):
    """Least squares with recursive filtration (the paper's Algorithm 2), batched.

    For each sample: fit by least squares on its remaining rows, delete the row
    with the largest absolute residual, and repeat until ``r + 1`` rows remain
    (the last deletion is not refitted, as in the paper). The normal equations are
    downdated (``G -= a_t a_t.T``, ``h -= a_t y_t``), so a step costs
    ``O(m r + r**3)`` per sample; all samples advance together. With ``tol``, a
    sample stops as soon as its largest residual is at most ``tol``.

    Parameters
    ----------
    A : ndarray of shape (m, r)
    Y : ndarray of shape (k, m)
        Zero at missing entries.
    M : ndarray of shape (k, m) of bool, default=None
        Observed entries; ``None`` means all observed.
    tol : float, default=None

    Returns
    -------
    C : ndarray of shape (k, r)
    """
    k, m = Y.shape
    r = A.shape[1]
    active = np.ones((k, m), dtype=bool) if M is None else M.copy()
    G = _masked_gram(A, active)
    h = Y @ A
    steps = active.sum(axis=1) - r
    C = _solve(G, h)
    running = steps > 0
    for step in range(int(steps.max(initial=0))):
        running &= steps > step
        if not running.any():
            break
        idx = slice(None) if running.all() else np.flatnonzero(running)
        C[idx] = _solve(G[idx], h[idx])
        res = np.abs(Y[idx] - C[idx] @ A.T)
        res[~active[idx]] = -1.0
        t = np.argmax(res, axis=1)
        rows = np.arange(len(t))
        if tol is not None:
            go = res[rows, t] > tol
            if not go.all():
                stopped = np.flatnonzero(running)[~go]
                running[stopped] = False
                idx = np.flatnonzero(running)
                t, rows = t[go], rows[go]
        if isinstance(idx, slice):
            idx = np.arange(k)
        a = A[t]
        active[idx, t] = False
        G[idx] -= a[:, :, None] * a[:, None, :]
        h[idx] -= a * Y[idx, t][:, None]
    return C


def _lad(A, Y, M=None, max_iter=200, shrink=0.5):
    """Least absolute deviations ``min_x ||A x - y||_1`` by IRLS, batched.

    Row weights ``1 / sqrt(max(|residual|, eps))`` applied to ``A`` and ``y``
    (weighted least squares by QR, which stays accurate when some weights are
    huge); ``eps`` starts at the mean absolute least-squares residual and shrinks
    by ``shrink`` per iteration down to 1e-15 of the sample's scale (a geometric
    smoothing schedule). Stops once ``eps`` is at its floor and the coefficients
    no longer move (1e-14 relative), or after ``max_iter`` iterations.
    """
    k, m = Y.shape
    W0 = np.ones((k, m)) if M is None else M.astype(np.float64)
    C = _least_squares(A, Y, M)
    res = np.abs(Y - C @ A.T) * W0
    scale = np.sqrt(np.sum(Y**2, axis=1) / W0.sum(axis=1))
    floor = 1e-15 * scale + np.finfo(np.float64).tiny
    eps = np.maximum(res.sum(axis=1) / W0.sum(axis=1), floor)
    for _ in range(max_iter):
        w = W0 / np.sqrt(np.maximum(res, eps[:, None]))
        Q, R = np.linalg.qr(w[:, :, None] * A[None])
        R = R + (1e-14 * np.abs(R).max(axis=(1, 2)) + np.finfo(np.float64).tiny)[
            :, None, None
        ] * np.eye(A.shape[1])
        C_new = np.linalg.solve(R, np.einsum("kmr,km->kr", Q, w * Y)[..., None])[..., 0]
        moved = np.max(np.abs(C_new - C), axis=1)
        C = C_new
        res = np.abs(Y - C @ A.T) * W0
        at_floor = eps <= floor
        eps = np.maximum(eps * shrink, floor)
        if np.all(at_floor & (moved <= 1e-14 * scale)):
            break
    return C


def _pseudo_likelihood(A, Y, M=None, max_iter=100, tol=1e-4, gamma=0.95):
    """Pseudo-likelihood estimator of Slawski, Ben-David & Li (2020), batched.

    Mixture model per entry: ``y_t ~ alpha N(a_t.x, s2) + (1 - alpha) N(0, |x|^2
    + s2)``. Newton steps on ``(x, s2)`` with the expected Hessian, Armijo-free
    backtracking by ``gamma`` accepting a decrease of the mean negative
    log-likelihood larger than ``tol``, ``alpha`` set to the mean posterior, at
    most ``max_iter + 1`` steps; a sample stops when no step size above
    ``tol**2`` is accepted. This follows the authors' ``PL.m``, including the
    ``N(0, |x|^2 + s2)`` term applied to orthonormal ``A``.
    """
    k, m = Y.shape
    r = A.shape[1]
    W0 = np.ones((k, m)) if M is None else M.astype(np.float64)
    n_obs = W0.sum(axis=1)
    C = _least_squares(A, Y, M)
    s2 = np.sum(((Y - C @ A.T) * W0) ** 2, axis=1) / n_obs
    s2 = np.maximum(s2, 1e-24 * np.sum(Y**2, axis=1) / n_obs + np.finfo(np.float64).tiny)
    alpha = np.full(k, 0.5)
    AA = (A[:, :, None] * A[:, None, :]).reshape(m, r * r)

    def log_parts(idx, C_, s2_, alpha_):
        Yi = Y[idx]
        res = Yi - C_ @ A.T
        v = s2_ + np.sum(C_**2, axis=1)
        with np.errstate(divide="ignore"):
            l1 = np.log(alpha_)[:, None] - 0.5 * np.log(2 * np.pi * s2_)[:, None]
            l0 = np.log1p(-alpha_)[:, None] - 0.5 * np.log(2 * np.pi * v)[:, None]
        l1 = l1 - res**2 / (2 * s2_[:, None])
        l0 = l0 - Yi**2 / (2 * v[:, None])
        return res, v, l1, l0

    def nll(idx, C_, s2_, alpha_):
        _, _, l1, l0 = log_parts(idx, C_, s2_, alpha_)
        return -np.sum(np.logaddexp(l1, l0) * W0[idx], axis=1) / n_obs[idx]

    n_trials = int(np.ceil(np.log(tol**2) / np.log(gamma)))
    current = nll(np.arange(k), C, s2, alpha)
    active = np.ones(k, dtype=bool)
    for _ in range(max_iter + 1):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        Ci, s2i = C[idx], s2[idx]
        res, v, l1, l0 = log_parts(idx, Ci, s2i, alpha[idx])
        P = np.exp(l1 - np.logaddexp(l1, l0)) * W0[idx]
        Q = W0[idx] - P
        Yi = Y[idx]
        sq = Q.sum(axis=1)
        sq_y2 = np.sum(Q * Yi**2, axis=1)
        fit = -res  # A x - y
        grad_b = ((P * fit) @ A) / s2i[:, None] - Ci * (sq_y2 / v**2 - sq / v)[:, None]
        grad_s = (
            -np.sum(P * fit**2, axis=1) / (2 * s2i**2)
            + P.sum(axis=1) / (2 * s2i)
            - sq_y2 / (2 * v**2)
            + 0.5 * sq / v
        )
        H = np.empty((idx.size, r + 1, r + 1))
        H[:, :r, :r] = (P @ AA).reshape(-1, r, r) / s2i[:, None, None] + (2 * sq / v**2)[
            :, None, None
        ] * (Ci[:, :, None] * Ci[:, None, :])
        H[:, :r, r] = H[:, r, :r] = (sq / v**2)[:, None] * Ci
        H[:, r, r] = 0.5 * P.sum(axis=1) / s2i**2 + 0.5 * sq / v**2
        grad = np.concatenate([grad_b, grad_s[:, None]], axis=1)
        direction = -np.linalg.solve(H, grad[..., None])[..., 0]
        alpha_new = np.clip(P.sum(axis=1) / n_obs[idx], 0.0, 1.0)
        pending = np.ones(idx.size, dtype=bool)
        step = 1.0
        for _ in range(n_trials):
            j = np.flatnonzero(pending)
            C_try = Ci[j] + step * direction[j, :r]
            s2_try = s2i[j] + step * direction[j, r]
            ok = s2_try > 0
            new = np.full(j.size, np.inf)
            if ok.any():
                jj = j[ok]
                new[ok] = nll(idx[jj], C_try[ok], s2_try[ok], alpha_new[jj])
            accept = current[idx[j]] - new > tol
            acc = j[accept]
            C[idx[acc]] = C_try[accept]
            s2[idx[acc]] = s2_try[accept]
            alpha[idx[acc]] = alpha_new[acc]
            current[idx[acc]] = new[accept]
            pending[acc] = False
            if not pending.any():
                break
            step *= gamma
        active[idx[pending]] = False
    return C


def _hard_em(A, Y, M, starts, max_iter=1000, tol=1e-4):
    """Hard EM for shuffled regression from several starts, batched.

    Alternates the optimal assignment of ``y`` to ``A x`` (sort both, match in
    order) and least squares, as the authors' ``SLR_hardEM_v2``; stops when the
    matched residual norm improves by less than ``tol`` times ``|y|``. Keeps, per
    sample, the start with the smallest ``|sort(y) - sort(A x)|``.

    Parameters
    ----------
    A : ndarray of shape (m, r)
    Y : ndarray of shape (k, m)
    M : ndarray of shape (k, m) of bool or None
    starts : ndarray of shape (k, s, r)

    Returns
    -------
    C : ndarray of shape (k, r)
    """
    k, s, r = starts.shape
    m = A.shape[0]
    obs = np.ones((k, m), dtype=bool) if M is None else M
    G = _masked_gram(A, obs)
    y_sorted = np.sort(np.where(obs, Y, np.inf), axis=1)  # missing entries last
    n_obs = obs.sum(axis=1)
    valid = np.arange(m)[None, :] < n_obs[:, None]  # (k, m) observed slots once sorted
    y_norm = np.linalg.norm(Y * obs, axis=1)
    X = starts.copy()
    best = np.full((k, s), np.inf)
    running = np.ones((k, s), dtype=bool)
    y_sorted0 = np.where(valid, y_sorted, 0.0)
    for _ in range(max_iter):
        Z = np.where(obs[:, None, :], X @ A.T, np.inf)  # (k, s, m)
        order = np.argsort(Z, axis=2, kind="stable")
        z_sorted = np.take_along_axis(Z, order, axis=2)
        err = np.sqrt(
            np.sum(np.where(valid[:, None, :], y_sorted0[:, None, :] - z_sorted, 0.0) ** 2, axis=2)
        )
        running &= (best - err) >= tol * y_norm[:, None]
        best = np.minimum(best, err)
        if not running.any():
            break
        matched = np.zeros((k, s, m))
        np.put_along_axis(matched, order, np.broadcast_to(y_sorted0[:, None, :], (k, s, m)), axis=2)
        G_all = np.broadcast_to(G[:, None], (k, s, r, r)).reshape(k * s, r, r)
        X_new = _solve(G_all, (matched @ A).reshape(k * s, r)).reshape(k, s, r)
        X = np.where(running[..., None], X_new, X)
    Z = np.sort(np.where(obs[:, None, :], X @ A.T, np.inf), axis=2)
    err = np.sum(np.where(valid[:, None, :], y_sorted0[:, None, :] - Z, 0.0) ** 2, axis=2)
    return X[np.arange(k), np.argmin(err, axis=1)]
