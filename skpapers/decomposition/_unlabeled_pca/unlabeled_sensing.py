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

_LSRF_BLOCK = 100_000  # entries of one block of samples of the batched LSRF (cache sized)
_LSRF_SINGLE = 100  # below this many rows left, LSRF deletes one row per step (the paper)


def _cholesky_solve(G, h, ridge=None):
    """Solve ``G[j] x[j] = h[j]`` for small positive definite ``G`` (Cholesky, vectorised).

    The loops run over the ``r x r`` entries, the arithmetic over the samples,
    which beats a batched LAPACK call for ``r <= 6``. ``ridge`` (per sample;
    default 1e-12 of the mean eigenvalue of ``G``) keeps a singular system
    solvable; LSRF passes the one of the full Gram matrix, so that a downdated
    Gram matrix of (nearly) zero rows cannot make a pivot vanish.
    """
    k, r, _ = G.shape
    if ridge is None:
        ridge = 1e-12 * np.abs(np.trace(G, axis1=1, axis2=2)) / r
    ridge = ridge + np.finfo(np.float64).tiny
    if r > 6:
        return np.linalg.solve(G + ridge[:, None, None] * np.eye(r), h[..., None])[..., 0]
    Gt = np.moveaxis(G, 0, -1)  # (r, r, k) view
    L = [[None] * r for _ in range(r)]
    for j in range(r):
        acc = Gt[j, j] + ridge
        for q in range(j):
            acc = acc - L[j][q] ** 2
        L[j][j] = np.sqrt(np.maximum(acc, ridge))
        inv = 1.0 / L[j][j]
        for i in range(j + 1, r):
            acc = Gt[i, j]
            for q in range(j):
                acc = acc - L[i][q] * L[j][q]
            L[i][j] = acc * inv
    z = []
    for i in range(r):
        acc = h[:, i]
        for q in range(i):
            acc = acc - L[i][q] * z[q]
        z.append(acc / L[i][i])
    x = [None] * r
    for i in reversed(range(r)):
        acc = z[i]
        for q in range(i + 1, r):
            acc = acc - L[q][i] * x[q]
        x[i] = acc / L[i][i]
    return np.stack(x, axis=1)


def _lsrf(A, Y, M=None, tol=None):
    """Least squares with recursive filtration (the paper's Algorithm 2), batched.

    For each sample: fit by least squares on its remaining rows, delete the row
    with the largest absolute residual, and repeat until the fit on ``r + 1``
    rows (the paper's last fit). The normal equations are downdated (``G -= a_t
    a_t.T``, ``h -= a_t y_t``), so a step costs ``O(m r + r**3)`` per sample; the
    samples advance together, in cache-sized blocks. With ``tol``, a sample stops
    as soon as its largest residual is at most ``tol``.

    While more than ``100 + r + 1`` rows remain, a step deletes the
    ``floor((rows left - r - 1) / 100)`` rows with the largest residuals at once
    (1% of them); below, one row per step as in the paper. With up to about
    ``200`` observed entries per sample this is exactly the paper's algorithm;
    for images (tens of thousands of entries) it cuts the number of steps from
    ``m`` to about ``100 log(m / 100) + 100``.

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
    block = max(1, _LSRF_BLOCK // m)
    if k > block:
        return np.concatenate([
            _lsrf(A, Y[i : i + block], None if M is None else M[i : i + block], tol)
            for i in range(0, k, block)
        ])
    r = A.shape[1]
    penalty = np.zeros((k, m)) if M is None else np.where(M, 0.0, -np.inf)  # deleted rows
    G = _masked_gram(A, M) if M is not None else np.broadcast_to(A.T @ A, (k, r, r)).copy()
    h = Y @ A
    count = np.full(k, m) if M is None else M.sum(axis=1)
    ridge = 1e-12 * np.trace(G, axis1=1, axis2=2) / r + 1e-300
    C = _cholesky_solve(G, h, ridge)
    running = count > r + 1
    rows = np.arange(k)
    while running.any():
        idx = rows if running.all() else np.flatnonzero(running)
        sub = idx is rows
        Ci = _cholesky_solve(G, h, ridge) if sub else _cholesky_solve(G[idx], h[idx], ridge[idx])
        C[idx] = Ci
        R = (Y if sub else Y[idx]) - Ci @ A.T
        np.abs(R, out=R)
        R += penalty if sub else penalty[idx]
        n_left = count[idx] - (r + 1)
        q = int(max(1, n_left.min() // _LSRF_SINGLE))
        if q == 1:
            t = np.argmax(R, axis=1)[:, None]
        else:
            t = np.argpartition(R, m - q, axis=1)[:, m - q :]
        if tol is not None:
            go = np.take_along_axis(R, t, axis=1).max(axis=1) > tol
            running[idx[~go]] = False
            idx, t = idx[go], t[go]
        a = A[t]  # (k', q, r)
        penalty[idx[:, None], t] = -np.inf
        G[idx] -= np.einsum("kqi,kqj->kij", a, a)
        h[idx] -= np.einsum("kqi,kq->ki", a, Y[idx[:, None], t])
        count[idx] -= q
        running[idx] &= count[idx] > r  # the fit on r + 1 rows is the last one
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
    err : ndarray of shape (k,)
        ``|sort(y) - sort(A c)|`` of the returned coefficients (observed entries).
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
    best = np.argmin(err, axis=1)
    return X[np.arange(k), best], np.sqrt(err[np.arange(k), best])


def moment_directions(r, n_points, n_rounds, rng):
    """Draw the unit directions of every search round, shared by all samples.

    The directions live on the unit sphere of ``R^(r - 1)``. ``r = 3``: a
    regular grid of ``n_points`` angles on the circle (the first round starts at
    angle 0, later rounds are rotated at random); ``r >= 4``: uniform random
    points; ``r = 2``: the two points of the 0-sphere; ``r = 1``: none.
    Shared by all samples, so the result does not depend on how samples are split
    into chunks (``n_jobs``).

    Returns
    -------
    dirs : ndarray of shape (n_rounds, n_points, r - 1)
        (``n_points`` is 2 for ``r = 2`` and 1 for ``r = 1``.)
    full : ndarray of shape (n_rounds, n_points, r)
        Uniform directions of ``R^r``, for samples whose first moment is
        uninformative (the entries of the basis sum to zero).
    shift : ndarray of shape (n_rounds, n_points)
        Standard normal draws of the noise of the first power sum (zero in the
        first round, drawn last so the directions do not depend on them).
    """
    full = rng.standard_normal((n_rounds, n_points, r))
    full /= np.linalg.norm(full, axis=2, keepdims=True)
    if r == 3:
        offset = np.r_[0.0, rng.random(n_rounds - 1)] * 2 * np.pi / n_points
        theta = offset[:, None] + np.arange(n_points) * 2 * np.pi / n_points
        dirs = np.stack([np.cos(theta), np.sin(theta)], axis=2)
    elif r == 2:
        dirs = np.tile(np.array([[1.0], [-1.0]]), (n_rounds, 1, 1))
    elif r == 1:
        dirs = np.zeros((n_rounds, 1, 0))
        full = np.tile(np.array([[1.0], [-1.0]]), (n_rounds, 1, 1))
    else:
        dirs = rng.standard_normal((n_rounds, n_points, r - 1))
        dirs /= np.linalg.norm(dirs, axis=2, keepdims=True)
    shift = rng.standard_normal((n_rounds, dirs.shape[1]))
    shift[0] = 0.0
    return dirs, full, shift


def _moment_frame(A, Y, M):
    """Describe the coefficients matching the first two power sums of every sample.

    With ``L L^T = A_o^T A_o`` (``A_o``: the rows observed in the sample) and ``z =
    L^T x``, the power sums ``sum_t (a_t . x)^k = sum_t y_t^k`` for ``k = 1, 2`` read
    ``s . z = S1`` and ``|z|^2 = S2``: an ``(r - 2)``-sphere of centre ``c u`` and
    radius ``rho`` in the hyperplane orthogonal to ``u = s / |s|``. Returns ``L^{-1}``
    (to map ``z`` back), ``c u``, ``rho``, an orthonormal basis ``W`` of ``u``'s
    complement, the norm ``sqrt(S2)`` and a mask of the samples whose ``|s|`` is
    zero (then only ``|z| = sqrt(S2)`` constrains ``z``), then ``u`` and ``|s|``.
    """
    k, m = Y.shape
    r = A.shape[1]
    obs = np.ones((k, m)) if M is None else M.astype(np.float64)
    G = _masked_gram(A, M if M is not None else np.ones((k, m), dtype=bool))
    G = G + (1e-12 * np.trace(G, axis1=1, axis2=2) / r)[:, None, None] * np.eye(r)
    L_inv = np.linalg.inv(np.linalg.cholesky(G))
    s = np.einsum("kij,kj->ki", L_inv, obs @ A)
    s_norm = np.linalg.norm(s, axis=1)
    radius = np.sqrt(np.sum(Y**2, axis=1))
    scale = np.sqrt(obs.sum(axis=1) * np.trace(G, axis1=1, axis2=2) / m)
    degenerate = s_norm <= 1e-8 * scale
    u = s / np.where(degenerate, 1.0, s_norm)[:, None]
    u[degenerate] = np.eye(r)[0]
    c = np.where(degenerate, 0.0, Y.sum(axis=1) / np.where(degenerate, 1.0, s_norm))
    rho = np.sqrt(np.maximum(radius**2 - c**2, 0.0))
    v = u - np.eye(r)[0]
    v_norm2 = np.sum(v**2, axis=1)
    H = np.broadcast_to(np.eye(r), (k, r, r)).copy()
    flip = v_norm2 > 1e-24
    H[flip] -= 2 * v[flip, :, None] * v[flip, None, :] / v_norm2[flip, None, None]
    return L_inv, c[:, None] * u, rho, H[:, :, 1:], radius, degenerate, u, s_norm


def _sorted_errors(A, y_sorted0, valid, obs, X):
    """``|sort(y) - sort(A x)|`` over the observed entries for candidates ``X`` (k, g, r)."""
    Z = np.sort(np.where(obs[:, None, :], X @ A.T, np.inf), axis=2)
    diff = np.where(valid[:, None, :], y_sorted0[:, None, :] - Z, 0.0)
    return np.sqrt(np.einsum("kgm,kgm->kg", diff, diff))


def _moment_search(
    A, Y, M, accept, dirs, full, n_best, n_first=None, max_entries=2_000_000, shift=None, noise=None
):
    """Hard EM from starts matching the first two power sums, round after round.

    The power sums of a sample are invariant under permutations of its entries
    (the algebraic initialisation of Tsakiris et al.). The first two fix the
    coefficients to an ``(r - 2)``-sphere (a circle for ``r = 3``, two points for
    ``r = 2``); every round scores the points ``dirs[i]`` of that sphere by
    ``|sort(y) - sort(A x)|``, runs hard EM from the ``n_best`` best (the local
    minima along the circle for ``r = 3``), and keeps the best solution. A sample
    stops once its error is at most ``noise`` (it fits as well as a clean
    sample), or once a round confirms a solution under ``accept``: its error was
    at most ``accept`` before the round and the round (fresh points) did not
    lower it by more than hard EM's tolerance; otherwise it goes to the next
    round. A
    wrong basin can fit the sorted values nearly as well as the true one (m =
    200, r = 5: 2.5 times the clean samples' distance, the true one 0.7 times)
    and one round of points need not have reached the true one. Hard EM runs
    from the ``n_first`` best starts first (all ``n_best`` when None) and from
    all of them only for the samples these leave above ``accept``.

    The first power sum of a noisy sample is off by the sum of its noise,
    ``N(0, |noise|**2)`` for noise in a random direction, which moves the
    centre of the sphere and, when the sphere is small, its radius by much
    more: the true coefficients can lie far from every point of the exact
    sphere. With ``noise`` (per sample, units of ``Y``) and ``shift`` (standard
    normal draws, shape of ``dirs[..., 0]``), each point of a round takes its
    first power sum ``S1 + noise * shift`` (``shift`` is zero in the first
    round: the exact sphere).

    Memory: ``max_entries`` bounds the ``(samples x points x m)`` arrays; the
    search walks over blocks of points and of samples.

    Returns
    -------
    C : ndarray of shape (k, r)
    err : ndarray of shape (k,)
    """
    k, m = Y.shape
    r = A.shape[1]
    obs = np.ones((k, m), dtype=bool) if M is None else M
    L_inv, centre, rho, W, radius, degenerate, u, s_norm = _moment_frame(A, Y, M)
    c = np.sum(centre * u, axis=1)
    if shift is None or noise is None:
        shift = np.zeros(dirs.shape[:2])
    # moves of the centre along u per unit of shift; none where s is degenerate
    wobble = np.where(degenerate, 0.0, np.zeros(k) if noise is None else noise) / np.where(
        degenerate, 1.0, s_norm
    )
    y_sorted = np.sort(np.where(obs, Y, np.inf), axis=1)
    valid = np.arange(m)[None, :] < obs.sum(axis=1)[:, None]
    y_sorted0 = np.where(valid, y_sorted, 0.0)
    C = np.zeros((k, r))
    err = np.full(k, np.inf)
    todo = np.arange(k)
    tol = 1e-4 * np.linalg.norm(np.where(obs, Y, 0.0), axis=1)  # that of _hard_em
    floor = np.zeros(k) if noise is None else noise
    for d_round, f_round, s_round in zip(dirs, full, shift, strict=True):
        if todo.size == 0:
            break
        before = err.copy()
        exact = not np.any(s_round) or not np.any(wobble[todo])
        g = d_round.shape[0]
        K = min(n_best, g)
        best_e = np.full((todo.size, K), np.inf)
        best_x = np.zeros((todo.size, K, r))
        block = max(1, max_entries // max(todo.size * m, 1))
        for g0 in range(0, g, block):
            D = d_round[g0 : g0 + block]
            if exact:
                Zc = centre[todo, None, :] + rho[todo, None, None] * np.einsum(
                    "gj,kij->kgi", D, W[todo]
                )
            else:
                cg = c[todo, None] + wobble[todo, None] * s_round[None, g0 : g0 + block]
                rg = np.sqrt(np.maximum(radius[todo, None] ** 2 - cg**2, 0.0))
                Zc = cg[..., None] * u[todo, None, :] + rg[..., None] * np.einsum(
                    "gj,kij->kgi", D, W[todo]
                )
            deg = degenerate[todo]
            if deg.any():
                F = f_round[g0 : g0 + block]
                if F.shape[0] < Zc.shape[1]:
                    F = np.resize(F, (Zc.shape[1], r))
                Zc[deg] = radius[todo][deg, None, None] * F[: Zc.shape[1]]
            Xc = np.einsum("kgi,kij->kgj", Zc, L_inv[todo])
            e = _sorted_errors(A, y_sorted0[todo], valid[todo], obs[todo], Xc)
            if r == 3 and g0 == 0 and block >= g and exact:
                local = (e <= np.roll(e, 1, axis=1)) & (e <= np.roll(e, -1, axis=1))
                e = np.where(local | deg[:, None], e, np.inf)
            both_e = np.concatenate([best_e, e], axis=1)
            both_x = np.concatenate([best_x, Xc], axis=1)
            keep = np.argsort(both_e, axis=1, kind="stable")[:, :K]
            best_e = np.take_along_axis(both_e, keep, axis=1)
            best_x = np.take_along_axis(both_x, keep[..., None], axis=1)
        best_x = np.where(np.isfinite(best_e)[..., None], best_x, best_x[:, :1])
        step = max(1, max_entries // (K * m))
        for i0 in range(0, todo.size, step):
            rows = todo[i0 : i0 + step]
            starts = best_x[i0 : i0 + step]
            Mi = None if M is None else M[rows]
            first = K if n_first is None else min(n_first, K)
            c_new, e_new = _hard_em(A, Y[rows], Mi, starts[:, :first])
            rest = np.flatnonzero(e_new > accept[rows])
            if rest.size and K > first:
                c_new[rest], e_new[rest] = _hard_em(
                    A, Y[rows[rest]], None if Mi is None else Mi[rest], starts[rest]
                )
            better = e_new < err[rows]
            C[rows[better]] = c_new[better]
            err[rows[better]] = e_new[better]
        # a sample stops at its own noise level, or once a round with fresh points
        # confirms a solution at most ``accept``: the round did not lower it
        confirmed = (before[todo] <= accept[todo]) & (err[todo] >= before[todo] - tol[todo])
        todo = todo[~(confirmed | (err[todo] <= floor[todo]))]
    return C, err
