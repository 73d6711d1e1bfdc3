# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dasgupta cost and per-cluster group fairness of hierarchies."""

import numbers

import numpy as np
from scipy import sparse
from sklearn import get_config
from sklearn.base import clone
from sklearn.utils.metadata_routing import MetadataRequest

from skpapers.utils._hierarchy import (
    as_hierarchy,
    cost_from_rows,
    encode_groups,
    fairness_from_counts,
    group_counts,
)

__all__ = ["FairHierarchyScorer", "cluster_fairness", "dasgupta_cost", "fair_hierarchy_score"]


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


def _fit_copy(estimator, X, sensitive_features):
    """Fit a clone of ``estimator`` (or of a Pipeline ending with it); return the final step."""
    from skpapers.cluster import FairHierarchicalClustering  # cluster imports metrics

    steps = getattr(estimator, "steps", None)
    final = estimator[-1] if steps is not None else estimator
    if not isinstance(final, FairHierarchicalClustering):
        raise TypeError(
            "fair_hierarchy_score scores a FairHierarchicalClustering (or a Pipeline "
            f"ending with one); got {type(final).__name__}."
        )
    fitted = clone(estimator)
    if steps is not None and not get_config()["enable_metadata_routing"]:
        fitted.fit(X, **{f"{steps[-1][0]}__sensitive_features": sensitive_features})
    else:
        fitted.fit(X, sensitive_features=sensitive_features)
    return fitted[-1] if steps is not None else fitted


def fair_hierarchy_score(
    estimator, X, y=None, *, sensitive_features=None, fairness_weight=1.0, min_size=None
):
    """Score the parameters of a fair hierarchy on data: fairness and cost, higher is better.

    A hierarchy is fitted to its samples and does not place new ones, so the
    score fits a copy of ``estimator`` (its parameters, not its fitted tree) on
    ``X`` with ``sensitive_features`` and returns::

        -(fairness_weight * violation + cost_ratio - 1)

    with ``violation`` the largest deviation ``|p_l(C) - c_l|`` of a group's
    share over the evaluated clusters and ``cost_ratio`` the Dasgupta cost of
    the tree over that of its vanilla base tree. 0 is a tree as cheap as the
    base tree with every evaluated cluster at the global shares.

    Parameters
    ----------
    estimator : FairHierarchicalClustering or Pipeline
        The estimator whose parameters are scored (fitted or not); a Pipeline
        must end with a :class:`~skpapers.cluster.FairHierarchicalClustering`.
    X : array-like of shape (n_samples, n_features)
        The samples to fit the copy on.
    y : None
        Ignored; present for the scorer signature ``scorer(estimator, X, y)``.
    sensitive_features : array-like of shape (n_samples,)
        The group of every sample of ``X``. Required.
    fairness_weight : float, default=1.0
        Weight of the violation against the relative cost increase.
    min_size : int, default=None
        Clusters of at least this many samples are evaluated. ``None``: the
        fitted copy's ``fairness_threshold_``, which depends on ``h`` and
        ``epsilon``; pass a fixed size to compare settings of ``c`` or
        ``epsilon`` on the same clusters.

    Returns
    -------
    score : float
        ``-(fairness_weight * violation + cost_ratio - 1)``; NaN when no
        cluster reaches ``min_size``.

    See Also
    --------
    FairHierarchyScorer : The same score as a scorer object for
        ``GridSearchCV(scoring=...)``, with ``sensitive_features`` routed.
    cluster_fairness : Group shares of every cluster.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skpapers.cluster import FairHierarchicalClustering
    >>> from skpapers.metrics import fair_hierarchy_score
    >>> X, blob = make_blobs(n_samples=64, centers=2, random_state=0)
    >>> est = FairHierarchicalClustering(h=8)
    >>> score = fair_hierarchy_score(est, X, sensitive_features=blob)
    >>> est_fit = FairHierarchicalClustering(h=8).fit(X, sensitive_features=blob)
    >>> bool(score == -(est_fit.fairness_violation_ + est_fit.cost_ratio_ - 1))
    True
    """
    if sensitive_features is None:
        raise ValueError(
            "fair_hierarchy_score needs sensitive_features. In GridSearchCV or "
            "cross_validate, use scoring=FairHierarchyScorer() with metadata routing "
            "on (sklearn.set_config(enable_metadata_routing=True)) and pass "
            "sensitive_features to fit; the estimator must request them with "
            "set_fit_request(sensitive_features=True)."
        )
    if not isinstance(fairness_weight, numbers.Real) or not fairness_weight >= 0:
        raise ValueError(f"fairness_weight must be a number >= 0; got {fairness_weight!r}.")
    est = _fit_copy(estimator, X, sensitive_features)
    if min_size is None:
        violation = est.fairness_violation_
    else:
        violation = cluster_fairness(est.tree_, sensitive_features, min_size=min_size)["violation"]
    return -(fairness_weight * violation + est.cost_ratio_ - 1.0)


class FairHierarchyScorer:
    """Scorer of fair hierarchies for ``GridSearchCV`` and ``cross_validate``.

    Calls :func:`fair_hierarchy_score` (higher is better) and requests
    ``sensitive_features`` for scoring through scikit-learn's metadata
    routing, so that a search passes every test fold its groups. Routing must
    be on (``sklearn.set_config(enable_metadata_routing=True)``) and the
    estimator must request the groups for fit
    (``set_fit_request(sensitive_features=True)``).

    Parameters
    ----------
    fairness_weight : float, default=1.0
        Weight of the violation against the relative cost increase.
    min_size : int, default=None
        Clusters of at least this many samples are evaluated; ``None``: each
        fit's ``fairness_threshold_``.

    See Also
    --------
    fair_hierarchy_score : The score as a function.

    Notes
    -----
    The score fits a copy of the estimator on every test fold (a hierarchy
    does not place new samples), so a search scores each setting on samples
    its own fit did not see.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.datasets import make_blobs
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skpapers.cluster import FairHierarchicalClustering
    >>> from skpapers.metrics import FairHierarchyScorer
    >>> X, blob = make_blobs(n_samples=200, centers=2, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     est = FairHierarchicalClustering().set_fit_request(sensitive_features=True)
    ...     search = GridSearchCV(est, {"h": [4, 8]}, scoring=FairHierarchyScorer(), cv=2)
    ...     search = search.fit(X, sensitive_features=blob)
    >>> sorted(search.best_params_)
    ['h']
    """

    def __init__(self, *, fairness_weight=1.0, min_size=None):
        self.fairness_weight = fairness_weight
        self.min_size = min_size

    def __call__(self, estimator, X, y=None, *, sensitive_features=None):
        """Return :func:`fair_hierarchy_score` of ``estimator`` on ``X``.

        Parameters
        ----------
        estimator : FairHierarchicalClustering or Pipeline
            The estimator whose parameters are scored.
        X : array-like of shape (n_samples, n_features)
            The samples.
        y : None
            Ignored.
        sensitive_features : array-like of shape (n_samples,)
            The groups of ``X`` (routed by the search).

        Returns
        -------
        score : float
            Higher is better.
        """
        return fair_hierarchy_score(
            estimator,
            X,
            y,
            sensitive_features=sensitive_features,
            fairness_weight=self.fairness_weight,
            min_size=self.min_size,
        )

    def get_metadata_routing(self):
        """Request ``sensitive_features`` for scoring.

        Returns
        -------
        routing : MetadataRequest
            The request of this scorer.
        """
        request = MetadataRequest(owner=self)
        request.score.add_request(param="sensitive_features", alias=True)
        return request

    def __repr__(self):
        return (
            f"FairHierarchyScorer(fairness_weight={self.fairness_weight!r}, "
            f"min_size={self.min_size!r})"
        )
