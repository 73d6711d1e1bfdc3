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
