# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Stage I of unlabeled PCA: the robust subspace, and masked least squares.

Orientation: rows are samples (the paper's columns), ``A`` is the ``(n_features,
n_components)`` orthonormal basis ``U`` of the subspace. Missing entries are
described by a boolean mask ``M`` (``True`` = observed) and are zero in the data
arrays passed here.
"""

import numpy as np
from scipy.linalg import eigh

_DELTA = 1e-9  # IRLS weight floor of the authors' DPCP-IRLS


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


def _irls_subspace(X, M, r, p, max_iter, tol, progress=None):
    """DPCP-IRLS on unit-norm rows, with the masked refill of missing entries.

    Minimises ``sum_j dist(x_j, S)**p`` by reweighted eigendecompositions
    (weights ``1 / max(d_j**(2 - p), 1e-9)``); ``p = 2`` gives constant weights,
    i.e. PCA. When ``M`` is given, each iteration replaces the missing entries of
    every sample by its least-squares fit on the observed rows of the current
    basis and renormalises the sample (the masked DPCP of the UMC pipeline).

    Returns
    -------
    U : ndarray of shape (n_features, r)
    n_iter : int
    """
    X = _unit_rows(X)
    w = np.ones(X.shape[0])
    J_old = np.inf
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        U = _top_subspace(X, w, r)
        if M is not None:
            C = _least_squares(U, np.where(M, X, 0.0), M)
            X = _unit_rows(np.where(M, X, C @ U.T))
        d = np.linalg.norm(X - (X @ U) @ U.T, axis=1)
        J = np.sum(d**p)
        w = 1.0 / np.maximum(d ** (2.0 - p), _DELTA)
        delta_J = 1.0 - J / (J_old + 1e-9)
        J_old = J
        if progress is not None:
            progress.iteration(f"Stage I iteration {n_iter}: objective {J:.6g}")
        if delta_J <= tol:
            break
    if progress is not None:
        why = "converged" if n_iter < max_iter or delta_J <= tol else "max_iter reached"
        progress.iteration(
            f"Stage I stopped after {n_iter} iteration(s), objective {J:.6g}: {why}", force=True
        )
    return U, n_iter


def _dpcp(X, M, r, p, max_iter, tol, projected=None, progress=None):
    """Stage-I subspace by DPCP-IRLS, projected onto the row span when it is cheaper.

    ``projected=None`` uses the projected variant (authors' ``DPCP_IRLS_proj``)
    when there are more features than samples and no missing entries: an economy
    SVD ``X = P S Q.T`` and DPCP-IRLS on the coordinates ``X @ Q`` (``n x n``),
    mapped back by ``Q``. The reweighted scatter matrix has its range in the row
    span of ``X``, so both variants give the same subspace.
    """
    n, m = X.shape
    if projected is None:
        projected = m > n and M is None
    if not projected:
        return _irls_subspace(X, M, r, p, max_iter, tol, progress)
    _, _, Qt = np.linalg.svd(_unit_rows(X), full_matrices=False)
    U_sub, n_iter = _irls_subspace(X @ Qt.T, None, r, p, max_iter, tol, progress)
    return Qt.T @ U_sub, n_iter


def _coherence_pursuit(X, r):
    """Coherence pursuit: the top-``r`` subspace of the ``r`` most coherent samples."""
    Xn = _unit_rows(X)
    G = Xn @ Xn.T
    np.fill_diagonal(G, 0.0)
    score = np.sum(G**2, axis=1)
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

    1. The ``r`` smallest distances are left out (when ``2 r + 1`` samples or
       more remain): an l_p fit with ``p < 1`` passes through up to ``r`` samples
       exactly, and their distance (~1e-9) says nothing about the noise; with them
       the scale collapsed and every clean sample was flagged. Distances are
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
    d_f = np.sort(np.maximum(d, 1e-12))
    if d_f.size >= 3 * r + 1:
        d_f = d_f[r:]
    log_d = np.log(d_f)
    w = 1.0 / d_f
    loc = _weighted_median(log_d, w)
    spread = 1.4826 * _weighted_median(np.abs(log_d - loc), w)
    threshold = float(np.exp(loc + max(np.log(k), k * spread)))
    a, b = (m - r) / 2.0, r / 2.0
    mean = a / (a + b)
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    cap = float(np.sqrt(max(mean - 3.0 * sd, 0.0)))
    if np.exp(loc) < cap:
        threshold = min(threshold, cap)
    return threshold
