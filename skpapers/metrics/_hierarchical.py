# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dasgupta cost and per-cluster group fairness of hierarchies."""

import numpy as np
from scipy import sparse

from skpapers.utils._hierarchy import (
    as_hierarchy,
    cost_from_rows,
    encode_groups,
    fairness_from_counts,
    group_counts,
)

__all__ = ["cluster_fairness", "dasgupta_cost"]


def _check_similarity(S):
    if sparse.issparse(S):
        S = sparse.csr_array(S)
        if S.ndim != 2 or S.shape[0] != S.shape[1]:
            raise ValueError(f"S must be a square similarity matrix, got shape {S.shape}.")
        _check_values(S.data)
        return S
    S = np.asarray(S)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"S must be a square similarity matrix, got shape {S.shape}.")
    _check_values(S)
    return S


def _check_values(values):
    if np.issubdtype(values.dtype, np.complexfloating):
        raise TypeError(
            "S must hold real similarities; got a complex array. Pass its real "
            "part or its modulus explicitly."
        )
    if not (np.issubdtype(values.dtype, np.number) or values.dtype == np.bool_):
        raise TypeError(f"S must be numeric, got dtype {values.dtype}.")
    if not np.all(np.isfinite(values)):
        raise ValueError("S contains NaN or infinity.")
    if np.any(values < 0):
        count = int(np.count_nonzero(values < 0))
        raise ValueError(
            f"S must be a non-negative similarity; it has {count} negative "
            f"entries (smallest {values.min():.4g}). Shift or clip it, or convert "
            "a distance to a similarity first."
        )


def dasgupta_cost(S, tree):
    """Dasgupta cost of a hierarchy for a similarity matrix.

    ``cost(T) = sum_{i<j} S[i, j] * |leaves(lca(i, j))|`` over unordered pairs,
    equivalently the sum over internal nodes ``u`` of ``|u|`` times the weight
    between distinct children of ``u`` (k-ary trees included).

    Parameters
    ----------
    S : {array-like, sparse matrix} of shape (n_samples, n_samples)
        Non-negative similarity; the diagonal is ignored and a
        non-symmetric matrix counts as ``(S + S.T) / 2`` (each unordered pair
        is weighted by the mean of its two entries). Negative or complex
        entries raise an error.
    tree : HierarchyTree, ndarray of shape (n_samples - 1, 4) or (n_samples - 1, 2)
        The fitted ``tree_`` of
        :class:`~skpapers.cluster.FairHierarchicalClustering`, a scipy linkage
        matrix, or an sklearn ``children_`` array.

    Returns
    -------
    cost : float
        The Dasgupta cost (unordered pairs).

    See Also
    --------
    cluster_fairness : Per-cluster group proportions of a hierarchy.

    Notes
    -----
    Runs in O(n^2) time with O(n) extra memory plus one dense block of rows:
    leaves are put in depth-first order, where every cluster is a contiguous
    range, and the pair weight inside each cluster is read from 2-D prefix sums
    computed one block of rows at a time. Implementations that sum over
    ordered pairs report twice these values; cost ratios are unchanged.

    References
    ----------
    .. [1] S. Dasgupta, "A cost function for similarity-based hierarchical
       clustering", STOC 2016, arXiv:1510.05043.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import dasgupta_cost
    >>> S = np.array([[0, 3, 1], [3, 0, 1], [1, 1, 0]], dtype=float)
    >>> Z = np.array([[0, 1, 1.0, 2], [2, 3, 2.0, 3]])
    >>> dasgupta_cost(S, Z)  # 3 * 2 + (1 + 1) * 3
    12.0
    """
    S = _check_similarity(S)
    tree = as_hierarchy(tree, n_samples=S.shape[0])
    if sparse.issparse(S):
        return cost_from_rows(tree, lambda rows, cols: S[rows][:, cols].toarray())
    return cost_from_rows(tree, lambda rows, cols: S[np.ix_(rows, cols)])


def cluster_fairness(tree, sensitive_features, *, min_size=2):
    """Group proportions of every cluster of a hierarchy and their fairness.

    Parameters
    ----------
    tree : HierarchyTree, ndarray of shape (n_samples - 1, 4) or (n_samples - 1, 2)
        The fitted ``tree_``, a scipy linkage matrix or an sklearn ``children_``.
    sensitive_features : array-like of shape (n_samples,)
        Group label of every sample (any hashable values).
    min_size : int, default=2
        Only clusters with at least this many samples are evaluated.

    Returns
    -------
    result : dict
        ``violation``: max over evaluated clusters C and groups l of
        ``|p_l(C) - c_l|`` (``c_l`` the global proportion); ``min_balance``:
        min of ``p_l(C) / c_l``; ``proportions`` (n_nodes, n_groups); ``sizes`` (n_nodes,);
        ``evaluated`` boolean mask of clusters with size >= ``min_size``;
        ``groups``: the sorted distinct labels. With no evaluated cluster
        (``min_size`` above the number of samples), ``violation`` and
        ``min_balance`` are NaN: nothing was measured.

    See Also
    --------
    dasgupta_cost : Cost of a hierarchy.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.metrics import cluster_fairness
    >>> Z = np.array([[0, 1, 1.0, 2], [2, 3, 1.0, 2], [4, 5, 2.0, 4]])
    >>> res = cluster_fairness(Z, ["a", "a", "b", "b"])
    >>> float(res["violation"]), float(res["min_balance"])
    (0.5, 0.0)
    """
    if not isinstance(min_size, (int, np.integer)) or min_size < 1:
        raise ValueError(f"min_size must be a positive integer, got {min_size!r}.")
    codes, groups = encode_groups(sensitive_features)
    tree = as_hierarchy(tree, n_samples=codes.shape[0])
    counts = group_counts(tree, codes, groups.shape[0])
    return fairness_from_counts(counts, min_size, groups)
