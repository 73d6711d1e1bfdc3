# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Stage I of unlabeled PCA: the robust subspace, and masked least squares.

Orientation: rows are samples (the paper's columns), ``A`` is the ``(n_features,
n_components)`` orthonormal basis ``U`` of the subspace. Missing entries are
described by a boolean mask ``M`` (``True`` = observed) and are zero in the data
arrays passed here.
"""

import contextlib

import numpy as np
from scipy.linalg import eigh
from threadpoolctl import ThreadpoolController

_DELTA = 1e-9  # IRLS weight floor of the authors' DPCP-IRLS
_SUBSAMPLE_MIN = 2000  # smallest subsample of the DPCP warm start
_GRAM_BLOCK = 2**18  # entries of one block of rows of the weighted scatter matrix
_MOVE_TOL = 1e-6  # refinement on all rows stops when the subspace moves less
_NARROW = 512  # products this narrow run their BLAS calls on one thread
_CONTROLLER = []
_UNEXPLAINED_MAX = 100  # most samples of the leave-one-out flagging rule (n fits of n x n)
_UNEXPLAINED_FLAG = np.sqrt(0.5)  # more than half of the squared distance unexplained
_COHERENCE_ROUNDS = 6  # rescoring rounds of the iterated coherence pursuit
_COHERENT_MOVE_TOL = 1e-4  # the coherent restart's subspace has settled (sine)
_COHERENT_STARTS = (2.0, 2.5, 3.0)  # start sets of the restart, in units of k
_COHERENT_SKIP = 0.1  # no restart below this ratio of the 2k-th distance to the median
_EXACT_FIT = 1e-6  # a distance (sine) this small: a sample the l_p fit passes through


def _one_blas_thread(width):
    """Context limiting BLAS to one thread for products of a narrow ``width``.

    Products of tall, narrow matrices gain little from threads, and a threaded
    BLAS on a busy machine can be a hundred times slower (threads waiting for
    each other): 1e5 x 50 scatter matrices took 0.9-8 s with two threads on two
    shared cores, 0.05 s with one.
    """
    if width > _NARROW:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def _masked_gram(A, W):
    """Per-sample Gram matrices ``A.T @ diag(W[j]) @ A``, shape ``(k, r, r)``."""
    m, r = A.shape
    outer = (A[:, :, None] * A[:, None, :]).reshape(m, r * r)
    return (np.asarray(W, dtype=np.float64) @ outer).reshape(-1, r, r)


def _solve(G, h):
    """Batched solve of ``G[j] x[j] = h[j]`` with a negligible relative ridge.

    The ridge (1e-12 of the mean eigenvalue) only matters for singular systems,
    e.g. when every observed row of ``A`` left for a sample is zero.
    """
    r = G.shape[-1]
    ridge = 1e-12 * np.trace(G, axis1=-2, axis2=-1) / r + np.finfo(np.float64).tiny
    G = G + ridge[:, None, None] * np.eye(r)
    return np.linalg.solve(G, h[..., None])[..., 0]


def _least_squares(A, Y, M):
    """Coefficients of every sample fitted on its observed entries; ``(k, r)``."""
    if M is None:
        return Y @ A
    return _solve(_masked_gram(A, M), Y @ A)


def _unit_rows(X):
    """Rows scaled to unit Euclidean norm; zero rows stay zero."""
    norms = np.linalg.norm(X, axis=1)
    return X / np.where(norms > 0, norms, 1.0)[:, None]


def _top_subspace(X, w, r):
    """Top-``r`` eigenvectors of ``X.T @ diag(w) @ X`` as ``(m, r)`` columns."""
    n, m = X.shape
    if m <= n:
        R = X.T @ (X * w[:, None])
        _, vecs = eigh(R, subset_by_index=[m - r, m - 1])
        return vecs[:, ::-1]
    # more features than samples: the same eigenvectors from a thin SVD
    _, _, Vt = np.linalg.svd(X * np.sqrt(w)[:, None], full_matrices=False)
    return Vt[:r].T


def _complement_distances(X, sq_norms, U):
    """Distances of the rows of ``X`` to the span of the orthonormal columns ``U``.

    ``sqrt(|x|**2 - |U.T x|**2)``: one pass over ``X`` (``X @ U``) instead of the
    residual matrix. Where the difference cancels (distance below 1e-3 of the
    norm), the residual is formed explicitly for those rows, so small distances
    keep full relative accuracy.
    """
    P = X @ U
    d2 = sq_norms - np.einsum("ij,ij->i", P, P)
    close = d2 < 1e-6 * sq_norms
    if close.any():
        d = np.sqrt(np.maximum(d2, 0.0))
        d[close] = np.linalg.norm(X[close] - P[close] @ U.T, axis=1)
        return d
    return np.sqrt(d2)


def _weighted_gram(X, w):
    """``X.T @ diag(w) @ X`` accumulated over blocks of rows (symmetric BLAS products).

    Blocks of about 2**18 entries stay in cache and need no ``X``-sized
    temporary; they also keep a threaded BLAS from oversubscribing a busy
    machine (one ``X.T @ X`` of 1e5 x 50 with two threads took seconds there,
    against 0.03 s in blocks).
    """
    n, m = X.shape
    sw = np.sqrt(w)
    block = max(256, _GRAM_BLOCK // m)
    R = np.zeros((m, m))
    for i in range(0, n, block):
        Xb = X[i : i + block] * sw[i : i + block, None]
        R += Xb.T @ Xb
    return R


def _weighted_top_subspace(X, w, r):
    """Top-``r`` eigenvectors of ``X.T @ diag(w) @ X`` as ``(m, r)`` columns."""
    n, m = X.shape
    if m > n:
        return _top_subspace(X, w, r)
    return _top_eigenvectors(_weighted_gram(X, w), r)


def _top_eigenvectors(R, r):
    """Top-``r`` eigenvectors of the symmetric ``R`` as ``(m, r)`` columns, largest first."""
    m = R.shape[0]
    _, vecs = eigh(R, subset_by_index=[m - r, m - 1])
    return vecs[:, ::-1]


def _sin_largest_angle(U, V):
    """Sine of the largest principal angle between the column spans of ``U`` and ``V``."""
    return float(np.linalg.norm(V - U @ (U.T @ V), ord=2))


def _irls_complete(X, r, p, max_iter, tol, U=None, move_tol=None, progress=None, what="Stage I"):
    """DPCP-IRLS on complete unit-norm rows ``X`` (the loop of :func:`_irls_subspace`).

    Starts from weights 1 (PCA) or, when ``U`` is given, from the weights of that
    basis. Stops when the relative decrease of the objective is at most ``tol``,
    or, with ``move_tol``, when the subspace moved by less than ``move_tol``
    (sine of the largest principal angle between successive bases).
    """
    sq = np.einsum("ij,ij->i", X, X)
    w = np.ones(X.shape[0]) if U is None else None
    J_old = np.inf
    n_iter, why, moved = 0, "max_iter reached", np.inf
    while True:
        if w is not None:  # one iteration: reweighted eigendecomposition
            U_new = _weighted_top_subspace(X, w, r)
            if U is not None:
                moved = _sin_largest_angle(U, U_new)
            U = U_new
            n_iter += 1
            if move_tol is not None and moved <= move_tol:
                why = f"subspace moved by {moved:.2g} <= {move_tol:.2g}"
                break
        d = _complement_distances(X, sq, U)
        J = np.sum(d**p)
        delta_J = 1.0 - J / (J_old + 1e-9)
        J_old = J
        if progress is not None and n_iter:
            progress.iteration(f"{what} iteration {n_iter}: objective {J:.6g}")
        if delta_J <= tol:
            why = "converged"
            break
        if n_iter >= max_iter:
            break
        w = 1.0 / np.maximum(d ** (2.0 - p), _DELTA)
    if progress is not None:
        progress.iteration(
            f"{what} stopped after {n_iter} iteration(s), objective {J_old:.6g}: {why}",
            force=True,
        )
    return U, n_iter


def _irls_subspace(X, M, r, p, max_iter, tol, progress=None):
    """DPCP-IRLS on unit-norm rows, with the masked refill of missing entries.

    Minimises ``sum_j dist(x_j, S)**p`` by reweighted eigendecompositions
    (weights ``1 / max(d_j**(2 - p), 1e-9)``); ``p = 2`` gives constant weights,
    i.e. PCA. When ``M`` is given, each iteration replaces the missing entries of
    every sample by its least-squares fit on the observed rows of the current
    basis and renormalises the sample (the masked DPCP of the UMC pipeline).
    With missing entries the weights are floored at the distance of the
    ``k + 1``-th closest sample, ``k`` = :func:`_exact_fits` (a subspace can
    pass through ``k`` samples exactly; without the floor their weights
    decided the subspace), the iterations stop when the subspace moves by at
    most ``_MOVE_TOL`` (the floored objective changes with the floor, so its
    decrease is no stopping rule), and for ``p < 2`` they are followed by
    :func:`_noise_floor_refinement`.

    Returns
    -------
    U : ndarray of shape (n_features, r)
    n_iter : int
    """
    X = _unit_rows(X)
    if M is None:
        return _irls_complete(X, r, p, max_iter, tol, progress=progress)
    w = np.ones(X.shape[0])
    k = _exact_fits(M, r)
    U, moved, n_iter = None, np.inf, 0
    while n_iter < max_iter:
        n_iter += 1
        U_new = _top_subspace(X, w, r)
        if U is not None:
            moved = _sin_largest_angle(U, U_new)
        U = U_new
        X, d = _refilled_distances(X, M, U)
        floor = np.partition(d, k)[k]
        w = 1.0 / np.maximum(np.maximum(d, floor) ** (2.0 - p), _DELTA)
        if progress is not None:
            progress.iteration(
                f"Stage I iteration {n_iter}: objective {np.sum(d**p):.6g}, "
                f"weights floored at distance {floor:.3g}"
            )
        if moved <= _settled(floor):
            break
    if progress is not None:
        why = f"subspace moved by {moved:.2g}" if moved <= _settled(floor) else "max_iter reached"
        progress.iteration(f"Stage I stopped after {n_iter} iteration(s): {why}", force=True)
    if p < 2.0:
        U, n_more = _noise_floor_refinement(X, M, U, r, p, max_iter, progress)
        n_iter += n_more
        U, n_more = _coherent_restart(X, M, U, r, p, k, max_iter, progress)
        n_iter += n_more
    return U, n_iter


def _refilled_distances(X, M, U):
    """Distances of the unit rows to ``U`` once their missing entries are fitted on it."""
    C = _least_squares(U, np.where(M, X, 0.0), M)
    X = _unit_rows(np.where(M, X, C @ U.T))
    return X, np.linalg.norm(X - (X @ U) @ U.T, axis=1)


def _coherent_rows(X, M, size, rounds=_COHERENCE_ROUNDS):
    """Return the ``size`` samples most coherent with each other (iterated coherence pursuit).

    A sample's coherence with another is the square of their inner product (unit
    rows, missing entries as 0). Samples of an ``r``-dimensional subspace are
    coherent with each other (about ``1 / r``), samples whose entries are
    shuffled are not (about ``1 / m``). Coherence pursuit scores a sample by its
    coherence with all samples, most of which may be shuffled; each of the
    ``rounds`` scores it again by its coherence with the current top ``size``
    only (fully shuffled samples with 50% missing, m = 50, r = 5, 30 clean
    samples of 300, seeds 1500-1507: 16-22 clean in the top 30 by the first
    score, 22-27 after six rounds).
    """
    H = _coherence(_unit_rows(np.where(M, X, 0.0)))
    score = H.sum(axis=1)
    for _ in range(rounds):
        score = H[:, np.argsort(-score, kind="stable")[:size]].sum(axis=1)
    return np.argsort(-score, kind="stable")[:size]


def _concentrated_subspace(X, M, r, rows, size, k, max_iter):
    """Masked DPCP of ``rows``, then concentration steps on the ``size`` closest samples.

    First the subspace and the missing entries of every sample are fitted in
    turn on ``rows`` alone, reweighted as the masked DPCP (``p = 1``, weights
    floored at the distance of the ``k + 1``-th closest of ``rows``, ``k`` =
    :func:`_exact_fits`), until the subspace settles; then each step refits them
    on the ``size`` samples closest to the current subspace, with equal weights
    (the C-steps of least trimmed squares), until that set is unchanged and the
    subspace settles. ``X``: unit rows. Returns the basis and the iterations.
    """
    w = np.zeros(X.shape[0])
    w[rows] = 1.0
    X = _unit_rows(np.where(M, X, 0.0))
    floor_at = min(k, rows.size - 1)
    U, trimmed, n_iter = None, False, 0
    while n_iter < max_iter:
        n_iter += 1
        U_new = _top_subspace(X, w, r)
        moved = np.inf if U is None else _sin_largest_angle(U, U_new)
        U = U_new
        X, d = _refilled_distances(X, M, U)
        closest = np.zeros_like(w)
        closest[np.argpartition(d, size - 1)[:size]] = 1.0
        settled = moved <= _COHERENT_MOVE_TOL
        if trimmed and settled and np.array_equal(closest, w):
            break
        if settled or trimmed:
            trimmed, w = True, closest
        else:
            floor = max(float(np.partition(d[rows], floor_at)[floor_at]), _DELTA)
            w[rows] = 1.0 / np.maximum(d[rows], floor)
    return U, n_iter


def _coherent_restart(X, M, U, r, p, k, max_iter, progress=None):
    """Restart the masked Stage I from the most coherent samples; keep it if it fits clearly more.

    The masked DPCP can settle in a subspace far from the clean samples' (67-88
    degrees on 6 of 8 seeds, 1500-1507, of fully shuffled samples with 50%
    missing at m = 50, r = 5; which seeds fail changes with the rounding of
    the input): refilled missing entries let shuffled samples fit a wrong
    subspace as closely as the clean samples fit the true one, so its objective
    does not tell them apart. The restart fits a subspace to the most coherent
    samples (:func:`_coherent_rows`, ``k`` = :func:`_exact_fits`), concentrates
    it on the ``2k`` closest (:func:`_concentrated_subspace`) and
    refines it as the first (:func:`_noise_floor_refinement`). Every subspace
    passes through ``k`` samples exactly, so the distance of the ``2k``-th
    closest sample measures how many it fits beyond that: a restart replaces
    ``U`` only if its ``2k``-th distance is below half of ``U``'s. Three start
    sets are tried (``2k``, ``5k / 2`` and ``3k`` samples: a concentration can
    stall, and which one does varies with rounding); of the restarts that
    qualify, the one with the most samples within twice the best ``2k``-th
    distance is kept (a subspace 5 degrees off can pass as close to ``2k``
    samples as the true one, but not to all the clean ones). With fewer
    than ``2k`` samples near either subspace both distances are those of
    shuffled samples, and ``U`` stays. No restart when the ``2k``-th distance
    is below a tenth of the median one (the first fit passes near ``2k``
    samples, far closer than near the typical one: on the same seeds the ratio
    is 0.006-0.008 where the first fit is 0.6-2.2 degrees off, 0.61-0.66 where
    it is 67-88 degrees off). Samples are read on at most
    ``_SUBSAMPLE_MIN`` rows (seed 0) for the coherence and the concentration.
    """
    n = X.shape[0]
    size = 2 * k
    if size >= min(n, _SUBSAMPLE_MIN) - 1 or max_iter < 1:
        return U, 0
    d = _refilled_distances(X, M, U)[1]
    before = np.partition(d, size - 1)[size - 1]
    if before <= _COHERENT_SKIP * np.median(d):
        return U, 0  # 2k samples far closer than the typical one: a fit of the clean ones
    rows = np.arange(n)
    if n > _SUBSAMPLE_MIN:
        rows = np.sort(np.random.default_rng(0).choice(n, _SUBSAMPLE_MIN, replace=False))
    candidates, n_iter = [], 0
    for margin in _COHERENT_STARTS:
        start = _coherent_rows(X[rows], M[rows], min(int(margin * k), rows.size - 1))
        V, n_more = _concentrated_subspace(X[rows], M[rows], r, start, size, k, max_iter)
        V, n_refine = _noise_floor_refinement(X, M, V, r, p, max_iter)
        n_iter += n_more + n_refine
        d = _refilled_distances(X, M, V)[1]
        fit = np.partition(d, size - 1)[size - 1]
        if fit < 0.5 * before:
            candidates.append((fit, V, d))
    kept = "first fit kept"
    if candidates:  # the one that fits the most samples at the best 2k-th distance
        level = 2.0 * min(fit for fit, _, _ in candidates)
        count, U = max(((np.count_nonzero(d <= level), V) for _, V, d in candidates),
                       key=lambda c: c[0])
        kept = f"kept, {count} samples within {level:.3g}"
    if progress is not None:
        progress.iteration(
            f"Stage I restart from the most coherent samples: {kept} (its {size}-th "
            f"closest sample at {before:.3g})",
            force=True,
        )
    return U, n_iter


def _settled(scale):
    """Largest move (sine) of the subspace at which the masked iterations stop.

    ``_MOVE_TOL`` times the distance ``scale`` of the samples the weights are
    floored at (capped at 1, floored at 1e-7): moves far below the noise do
    not matter, but on noise-free data (``scale`` near 0) the refill of the
    missing entries converges linearly and 1e-6 would leave them that far off.
    """
    return _MOVE_TOL * min(1.0, max(float(scale), 1e-7))


def _exact_fits(M, r):
    """How many samples a subspace can pass through exactly, ``ceil(r (m - r) / (q - r))``.

    ``r (m - r)`` degrees of freedom, ``q - r`` equations per sample of ``q``
    observed entries (``q`` the mean); ``r`` for complete samples. At most
    ``n_samples - 1``.
    """
    n, m = M.shape
    q = float(np.mean(M.sum(axis=1)))
    return int(min(np.ceil(r * (m - r) / max(q - r, 1.0)), n - 1))


def _noise_floor_refinement(X, M, U, r, p, max_iter, progress=None):
    """Continue the masked DPCP with its weights floored at the clean samples' noise level.

    With missing entries, the masked DPCP-IRLS (weights ``1 / max(d**(2 - p),
    1e-9)``) fits a few samples exactly: each needs only ``|observed| - r`` of
    the subspace's ``r (m - r)`` degrees of freedom, so more samples than with
    complete rows can be passed through, and their huge weights then decide
    the subspace (2-12 degrees off the true one in the paper's dense setting
    with 30-50% missing, 90% of the samples shuffled; off by 1.6-7.7 degrees
    on the 30 clean samples alone, where masked PCA is 0.4 degrees off). Here
    the weights are ``1 / max(d, s)**(2 - p)``, with ``s`` the typical distance
    of the clean samples (the location of :func:`_clean_log_scale`, recomputed
    every iteration): samples within the noise weigh alike, as in PCA of the
    clean samples, and samples farther away are down-weighted as in DPCP.
    Iterates (refill, reweight) until the subspace moves by at most
    ``_MOVE_TOL`` or after ``max_iter`` iterations.

    ``X``: unit rows with their missing entries filled; ``M``: observed entries.
    Returns the basis and the number of iterations.
    """
    n_iter = 0
    s = np.nan
    while n_iter < max_iter:
        n_iter += 1
        X, d = _refilled_distances(X, M, U)
        s = float(np.exp(_clean_log_scale(d, r)[0]))
        U_new = _top_subspace(X, 1.0 / np.maximum(d, s) ** (2.0 - p), r)
        moved = _sin_largest_angle(U, U_new)
        U = U_new
        if moved <= _settled(s):
            break
    if progress is not None:
        progress.iteration(
            f"Stage I noise-floor refinement: {n_iter} iteration(s), clean distance {s:.3g}",
            force=True,
        )
    return U, n_iter


def _subsample_size(n, m):
    """Rows of the DPCP warm start on a subsample, or None to run on every row.

    ``max(2000, 100 n_features)`` rows, used once there are at least four times
    as many samples.
    """
    size = max(_SUBSAMPLE_MIN, 100 * m)
    return size if n >= 4 * size else None


def _dpcp(X, M, r, p, max_iter, tol, projected=None, progress=None, subsample=True):
    """Stage-I subspace by DPCP-IRLS, projected onto the row span when it is cheaper.

    ``projected=None`` uses the projected variant (authors' ``DPCP_IRLS_proj``)
    when there are more features than samples and no missing entries: an economy
    SVD ``X = P S Q.T`` and DPCP-IRLS on the coordinates ``X @ Q`` (``n x n``),
    mapped back by ``Q``. The reweighted scatter matrix has its range in the row
    span of ``X``, so both variants give the same subspace.

    With many more samples than features (:func:`_subsample_size`), no
    missing entries and ``max_iter >= 3``, DPCP-IRLS first runs to convergence on a fixed random
    subsample of the rows (seed 0, so the result is deterministic); the
    iterations on all rows then start from that basis and stop as soon as the
    subspace moves by less than 1e-6 (sine of the largest principal angle) or
    the objective converges. ``n_iter`` counts the iterations of both phases.
    """
    n, m = X.shape
    if projected is None:
        projected = m > n and M is None
    if not projected:
        return _dpcp_direct(X, M, r, p, max_iter, tol, progress, subsample)
    _, _, Qt = np.linalg.svd(_unit_rows(X), full_matrices=False)
    U_sub, n_iter = _irls_subspace(X @ Qt.T, None, r, p, max_iter, tol, progress)
    return Qt.T @ U_sub, n_iter


def _dpcp_direct(X, M, r, p, max_iter, tol, progress, subsample):
    """DPCP-IRLS in feature space, warm-started on a subsample when there are many rows."""
    n, m = X.shape
    size = _subsample_size(n, m) if subsample and M is None and max_iter >= 3 else None
    if size is None:
        return _irls_subspace(X, M, r, p, max_iter, tol, progress)
    X = _unit_rows(X)
    rows = np.sort(np.random.default_rng(0).choice(n, size, replace=False))
    U, n_sub = _irls_complete(  # leaves at least one iteration for all rows
        X[rows], r, p, max_iter - 1, tol, progress=progress, what=f"Stage I ({size} samples)"
    )
    U, n_all = _irls_complete(
        X, r, p, max_iter - n_sub, tol, U=U, move_tol=_MOVE_TOL, progress=progress
    )
    return U, n_sub + n_all


def _stage1(X, M, r, stage1, p, max_iter, tol, progress=None):
    """Stage-I subspace of the rows of ``X``: ``(n_features, r)`` basis and iterations."""
    if stage1 == "cop":
        if M is not None:
            raise ValueError(
                "stage1='cop' does not handle missing (NaN) entries; use "
                "stage1='dpcp' or stage1='pca'."
            )
        return _coherence_pursuit(X, r), 1
    if stage1 == "pca":
        return _dpcp(
            X, M, r, 2.0, 1 if M is None else max_iter, tol, progress=progress, subsample=False
        )
    return _dpcp(X, M, r, p, max_iter, tol, progress=progress)


def _unexplained(X, M, r, stage1, p, max_iter, tol, distances=None):
    """Share of each sample's distance to the subspace that no other sample explains.

    None where the rule does not apply: it needs complete samples (``M`` None),
    fewer samples than features, and between ``r + 2`` (each leave-one-out fit
    needs ``r + 1`` samples) and 100 samples (the ``n`` leave-one-out fits cost
    ``O(n**4)`` per iteration in all: 0.7 s of CPU for the 64 Yale B faces of
    32256 pixels, about 4 s for 100 samples).

    For sample ``j`` (``n_samples < n_features``, complete rows): its distance to
    the span of the other samples over its distance to the Stage-I subspace
    fitted without it (leave-one-out), divided by the value of that ratio for a
    sample of pure noise, ``sqrt(1 - (n - 1 - r) / (m - r))``. A clean sample of
    approximately low-rank data is largely explained by the other samples (ratio
    well below 1); a sample with part of its entries shuffled carries a
    component no other sample shares (ratio near 1 or above).

    The samples live in their ``n``-dimensional row span: after one QR
    decomposition each of the ``n`` leave-one-out fits runs on ``n x n``
    coordinates (the same subspace as the projected DPCP in feature space).

    With ``distances`` (each sample's distance to the subspace fitted on all
    samples), a screen runs first, without the leave-one-out fits: the ratio
    computed with these distances, and None unless its median is at most the
    flagging level, i.e. unless most samples' residuals are largely explained
    by the other samples (data only approximately of rank ``r``; the clean
    residuals of exactly low-rank data with noise are noise, ratio near 1).
    """
    n, m = X.shape
    if M is not None or not r + 2 <= n < m or n > _UNEXPLAINED_MAX:
        return None
    Z = _span_coordinates(X)
    span = _span_distances(Z)
    noise = _pure_noise_ratio(n, m, r)
    if distances is not None:
        screen = np.divide(span, distances, out=np.zeros(n), where=distances > 0)
        if np.median(screen) / noise > _UNEXPLAINED_FLAG:
            return None
    loo = np.array([_loo_distance(Z, j, r, stage1, p, max_iter, tol) for j in range(n)])
    return np.divide(span, loo, out=np.zeros(n), where=loo > 0) / noise


def _unexplained_after(Y, B, rows, r, stage1, p, max_iter, tol):
    """Compute :func:`_unexplained` for ``Y[rows]`` against the samples ``B``.

    Sample ``j`` of ``rows`` is taken as given (``Y[j]``), every other sample
    as in ``B`` (the table with the other flagged samples restored). A clean
    sample whose residual is shared with samples that were shuffled looks
    unexplained beside the shuffled ones and explained beside their
    restorations; a shuffled sample carries a component that no restoration of
    another sample shares. One leave-one-out Stage-I fit per sample of ``rows``.
    """
    n, m = Y.shape
    W = _span_coordinates(np.vstack([B, Y[rows]]))  # one basis for every swap
    out = np.empty(len(rows))
    for i, j in enumerate(rows):
        Z = W[:n].copy()
        Z[j] = W[n + i]
        loo = _loo_distance(Z, j, r, stage1, p, max_iter, tol)
        out[i] = _span_distances(Z)[j] / loo if loo > 0 else 0.0
    return out / _pure_noise_ratio(n, m, r)


def _span_coordinates(X):
    """Coordinates of the unit rows of ``X`` in an orthonormal basis of their span."""
    return np.linalg.qr(_unit_rows(X).T, mode="r").T


def _span_distances(Z):
    """Distance of each row of ``Z`` to the span of the other rows."""
    G = Z @ Z.T
    return 1.0 / np.sqrt(np.diag(np.linalg.inv(G + 1e-12 * np.eye(len(Z)))))


def _pure_noise_ratio(n, m, r):
    """Return the statistic's ratio for a sample of pure noise (``n`` samples of ``R^m``)."""
    return np.sqrt(1.0 - (n - 1 - r) / (m - r))


def _loo_distance(Z, j, r, stage1, p, max_iter, tol):
    """Distance of row ``j`` of ``Z`` to the Stage-I subspace fitted without it."""
    U, _ = _stage1(np.delete(Z, j, axis=0), None, r, stage1, p, max_iter, tol)
    return np.linalg.norm(Z[j] - U @ (U.T @ Z[j]))


def _held_out_distances(X, r):
    """Distance (sine) of each sample to the top-``r`` principal subspace of the others.

    Leave-one-out: sample ``j`` is held out of the fit it is measured against,
    as a flagged sample is held out of the Stage-I fit. The samples (unit rows)
    live in the span of their ``min(n, m)`` coordinates, so each of the ``n``
    fits is one eigendecomposition of a ``min(n, m)``-square matrix, downdated
    by the held-out sample.
    """
    Z = _unit_rows(X)
    if Z.shape[0] < Z.shape[1]:  # coordinates in an orthonormal basis of the row span
        Z = np.linalg.qr(Z.T, mode="r").T
    S = Z.T @ Z
    out = np.empty(len(Z))
    for j, z in enumerate(Z):
        V = np.linalg.eigh(S - np.outer(z, z))[1][:, -r:]
        out[j] = np.linalg.norm(z - V @ (V.T @ z))
    return out


def _coherence(Xn):
    """Squared inner products of the unit rows ``Xn``, 0 on the diagonal (``n x n``)."""
    H = np.square(Xn @ Xn.T)
    np.fill_diagonal(H, 0.0)
    return H


def _coherence_pursuit(X, r):
    """Coherence pursuit: the top-``r`` subspace of the ``r`` most coherent samples."""
    Xn = _unit_rows(X)
    score = _coherence(Xn).sum(axis=1)
    keep = np.argsort(-score, kind="stable")[:r]
    _, _, Vt = np.linalg.svd(Xn[keep], full_matrices=False)
    return Vt[:r].T


def _weighted_median(values, weights):
    """Smallest value whose cumulative weight reaches half the total weight."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    return values[order][np.searchsorted(cum, 0.5 * cum[-1])]


def _flag_threshold(d, r, m, k):
    """Return a flagging threshold on the distances ``d`` that cannot collapse.

    Returns the threshold and whether the clean samples are too far from the
    subspace for it to separate partly permuted samples (step 4 below: the
    rule reaches the distance of a random direction, so only samples that far
    are flagged).

    1. The ``r`` smallest distances are left out (when ``2 r + 1`` samples or
       more remain; with fewer, those of them below 1e-6, keeping at least two
       distances): an l_p fit with ``p < 1`` passes through up to ``r`` samples
       exactly, and their distance (~1e-9) says nothing about the noise; with them
       the scale collapsed and every clean sample was flagged (13 wine attributes,
       ``r = 5``: every sample the fit did not pass through). Distances are
       floored at 1e-12.
    2. Location ``s`` and spread ``t`` of the clean samples in log space: the
       median and 1.4826 x the median absolute deviation of ``log d`` weighted by
       ``1 / d`` (the DPCP-IRLS weights with ``p = 1``), dominated by the samples
       near the subspace even when most samples are permuted.
    3. ``log threshold = log s + max(log k, k t)``: ``k`` times the scale, or ``k``
       robust standard deviations above it in log space when the distances of the
       clean samples spread over decades (data only approximately low rank).
    4. Cap: a sample as far from the subspace as a random direction of ``R^m``
       (``d**2 ~ Beta((m - r) / 2, r / 2)``, 3 standard deviations below its mean)
       is always flagged, unless the typical clean sample ``s`` is that far.
    """
    loc, spread = _clean_log_scale(d, r)
    return _threshold_from(loc, spread, r, m, k)


def _clean_log_scale(d, r):
    """Location and spread of ``log d`` of the clean samples (:func:`_flag_threshold`, 1-2)."""
    d_f = np.sort(np.maximum(d, 1e-12))
    if d_f.size >= 3 * r + 1:
        d_f = d_f[r:]
    else:  # few samples: leave out those of the r smallest that the fit passes through
        d_f = d_f[min(int(np.sum(d_f[:r] < _EXACT_FIT)), d_f.size - 2) :]
    log_d = np.log(d_f)
    w = 1.0 / d_f
    loc = _weighted_median(log_d, w)
    spread = 1.4826 * _weighted_median(np.abs(log_d - loc), w)
    return loc, spread


def _threshold_from(loc, spread, r, m, k):
    """Apply steps 3 and 4 of :func:`_flag_threshold` to the location and spread of ``log d``."""
    threshold = float(np.exp(loc + max(np.log(k), k * spread)))
    a, b = (m - r) / 2.0, r / 2.0
    mean = a / (a + b)
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    cap = float(np.sqrt(max(mean - 3.0 * sd, 0.0)))
    too_far = 0.0 < cap <= threshold
    if np.exp(loc) < cap:
        threshold = min(threshold, cap)
    return threshold, too_far
