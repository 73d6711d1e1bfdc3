# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Evaluation helpers of unlabeled PCA shared by the tests and the benchmarks (private).

``refined_error`` is the authors' ``EvaluateRefined.m``; ``lsrf_textbook`` is the
paper's Algorithm 2 written literally (one sample, a fresh least-squares fit per
deleted row), the reference that the batched, downdated solver is checked and
timed against.
"""

import numpy as np


def refined_error(X_restored, X_true, n_components):
    """Relative error after projecting the restored samples on their own top subspace.

    Top-``n_components`` right singular vectors of ``X_restored`` (samples as
    rows), projection of every sample on them, renormalisation of the samples to
    unit norm, then ``|X_ref - X_true|_F / |X_true|_F``.
    """
    _, _, Vt = np.linalg.svd(X_restored, full_matrices=False)
    V = Vt[:n_components]
    X_ref = (X_restored @ V.T) @ V
    norms = np.linalg.norm(X_ref, axis=1, keepdims=True)
    X_ref = X_ref / np.where(norms > 0, norms, 1.0)
    return float(np.linalg.norm(X_ref - X_true) / np.linalg.norm(X_true))


def lsrf_textbook(A, y, tol=None):
    """LSRF for one sample, refitting from scratch after every deletion."""
    m, r = A.shape
    keep = np.arange(m)
    x = np.linalg.lstsq(A, y, rcond=None)[0]
    for _ in range(m - r):
        x = np.linalg.lstsq(A[keep], y[keep], rcond=None)[0]
        res = np.abs(y[keep] - A[keep] @ x)
        t = np.argmax(res)
        if tol is not None and res[t] <= tol:
            break
        keep = np.delete(keep, t)
    return x


def compute_err(X_restored, X, col_norms, col_means):
    """Compute the records error of the authors' ``ComputeErr``, in original units.

    ``X_restored`` and ``X`` are the normalised tables (each attribute centred and
    divided by its norm); the error is ``|(X_restored - X) * norms|_F / |X * norms
    + means|_F``.
    """
    return float(
        np.linalg.norm((X_restored - X) * col_norms) / np.linalg.norm(X * col_norms + col_means)
    )


def normalise_records(D):
    """Centre each attribute (column) of a table and divide it by its norm.

    Returns the normalised table and the column norms and means needed by
    :func:`compute_err`; these statistics are permutation invariant, so they are
    the same before and after shuffling a column.
    """
    means = D.mean(axis=0)
    centred = D - means
    norms = np.linalg.norm(centred, axis=0)
    return centred / norms, norms, means


def permute_records(Z, columns, alpha, rng):
    """Shuffle ``floor(alpha * n_rows)`` random entries of each listed column.

    The authors' ``permute_corruption.m``: each corrupted column gets its own
    random subset of individuals, whose values are permuted among themselves.
    """
    Z = Z.copy()
    n = Z.shape[0]
    k = int(np.floor(alpha * n))
    for j in columns:  # a handful of attributes, not samples
        idx = rng.permutation(n)[:k]
        Z[idx, j] = Z[idx[rng.permutation(k)], j]
    return Z


def records_restore(Z_tilde, n_components, **params):
    """Restore a corrupted normalised table with attributes as samples (transductive).

    The record-linkage orientation: the shuffled vectors are attributes, so the
    table is transposed, restored with :class:`UnlabeledPCA`, and transposed back.
    """
    from skpapers.decomposition import UnlabeledPCA

    return UnlabeledPCA(n_components, **params).fit_restore(Z_tilde.T).T
