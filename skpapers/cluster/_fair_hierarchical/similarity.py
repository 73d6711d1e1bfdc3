# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Similarities, the condensed distance max(S) - S, and the vanilla base linkage.

Average linkage on the distance ``max(S) - S`` merges the pair of clusters with
the largest average similarity (UPGMA is linear in the pair values), which is
the papers' base tree. The condensed distance is built in place in one float64
array of n(n-1)/2 entries; similarity rows for the cost are recomputed from X
one block at a time, so no dense n x n matrix is ever formed.
"""

import numpy as np
from scipy import sparse
from scipy.cluster.hierarchy import linkage as scipy_linkage
from scipy.spatial.distance import cdist, pdist, squareform

try:  # optional, faster drop-in
    import fastcluster
except ImportError:  # pragma: no cover - fastcluster is optional
    fastcluster = None

__all__ = ["average_linkage_cost", "base_linkage", "condensed_distance", "similarity_rows"]


def _transform(d, similarity, n_features):
    """Distances -> similarities, in place."""
    if similarity == "inverse_distance":
        np.add(d, 1.0, out=d)
        np.reciprocal(d, out=d)
    else:  # rbf
        np.square(d, out=d)
        d *= -1.0 / n_features
        np.exp(d, out=d)
    return d


def condensed_distance(X, similarity, return_max=False):
    """Condensed float64 ``max(S) - S`` (upper triangle, scipy order); also ``max(S)``."""
    if similarity == "precomputed":
        dense = X.toarray() if sparse.issparse(X) else X
        d = squareform(np.asarray(dense, dtype=np.float64), force="tovector", checks=False)
        d = np.array(d, dtype=np.float64)  # never a view of the user's matrix
    else:
        d = _transform(pdist(X), similarity, X.shape[1])
    smax = d.max() if d.shape[0] else 0.0
    np.subtract(smax, d, out=d)
    return (d, float(smax)) if return_max else d


def average_linkage_cost(Z, smax):
    """Dasgupta cost of an average-linkage tree on ``max(S) - S``, from Z alone.

    Average linkage merges clusters A and B at the mean distance between them,
    ``smax - W(A, B) / (|A| |B|)``, so the similarity between the two merged
    clusters is ``W(A, B) = |A| |B| (smax - height)`` and the cost is
    ``sum over merges of (|A| + |B|) W(A, B)``: O(n) instead of O(n^2).
    """
    n = Z.shape[0] + 1
    size = np.ones(2 * n - 1)
    size[n:] = Z[:, 3]
    a = size[Z[:, 0].astype(np.intp)]
    b = size[Z[:, 1].astype(np.intp)]
    return float(np.sum((a + b) * a * b * (smax - Z[:, 2])))


def similarity_rows(X, similarity):
    """Return ``rows(rows, cols)`` giving the dense similarity block of X."""
    if similarity == "precomputed":
        if sparse.issparse(X):
            S = sparse.csr_array(X)
            return lambda rows, cols: S[rows][:, cols].toarray()
        return lambda rows, cols: X[np.ix_(rows, cols)]
    n_features = X.shape[1]
    return lambda rows, cols: _transform(cdist(X[rows], X[cols]), similarity, n_features)


def base_linkage(d, method):
    """Linkage matrix of the condensed float64 distance ``d`` (fastcluster, else scipy).

    ``d`` is consumed: fastcluster's C routine works in place on it. Its Python
    wrapper ``fastcluster.linkage`` copies the input even with
    ``preserve_input=False`` (``array(X)`` on its first line, fastcluster 1.3),
    so the C routine is called directly when available, keeping the peak at one
    condensed matrix.
    """
    if fastcluster is None:
        return scipy_linkage(d, method=method)
    wrap = getattr(fastcluster, "linkage_wrap", None)
    codes = getattr(fastcluster, "mthidx", None)
    if wrap is None or codes is None or d.dtype != np.float64 or not d.flags.c_contiguous:
        return fastcluster.linkage(d, method=method, preserve_input=False)
    n = int(np.ceil(np.sqrt(2 * d.shape[0])))
    Z = np.empty((n - 1, 4))
    if n > 1:
        wrap(n, d, Z, codes[method])
    return Z
