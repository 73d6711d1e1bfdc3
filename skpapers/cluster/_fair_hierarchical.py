# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fair, low-cost hierarchical clustering (Knittel, Springer, Dickerson, Hajiaghayi)."""

import math
import numbers
import warnings

import numpy as np
from scipy import sparse
from scipy.cluster.hierarchy import is_valid_linkage
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_random_state, validate_data

from skpapers.cluster._fair_ops import (
    WorkTree,
    fair_hc,
    make_fair,
    rebalance_tree,
    refine_rebalance_tree,
)
from skpapers.cluster._hc_metrics import (
    cost_from_rows,
    encode_groups,
    fairness_from_counts,
)
from skpapers.cluster._hc_similarity import (
    base_linkage,
    condensed_distance,
    similarity_rows,
)
from skpapers.cluster._hc_tree import as_hierarchy
from skpapers.exceptions import SensitiveFeaturesWarning
from skpapers.utils._param_validation import Interval, StrOptions

__all__ = ["FairHierarchicalClustering"]


def _is_power_of_two(x):
    return x >= 1 and (x & (x - 1)) == 0


class FairHierarchicalClustering(ClusterMixin, BaseEstimator):
    """Fair hierarchical clustering with low Dasgupta cost.

    Builds a vanilla hierarchy (average linkage on a similarity), then makes it
    fair with respect to protected groups given at fit time: every cluster
    large enough holds each group close to its global proportion. Two
    algorithms of Knittel et al. are available: ``"polylog"`` (NeurIPS 2023:
    SplitRoot + MakeFair) and ``"reduction"`` (ICML 2023: RebalanceTree,
    RefineRebalanceTree, FairHC).

    Parameters
    ----------
    n_clusters : int, default=None
        Number of flat clusters in ``labels_``. ``None``: the children of the
        root of the fair tree (the fair top-level clusters). An int gives an
        exact top-down cut (see Notes).
    method : {"polylog", "reduction"}, default="polylog"
        ``"polylog"``: SplitRoot (the root gets ``h`` children of size within
        ``(1/h +- epsilon) n``) then stride folding into ``k`` groups, applied
        top-down to every cluster of size at least ``max(h, 1/(2 epsilon))``.
        ``"reduction"``: 1/6-rebalance, epsilon-refine, then level abstraction
        to depth log2(h) and stride folding into ``k`` groups at every level.
    h : int, default=4
        Children per SplitRoot (``"polylog"``) or ``2**depth`` of the level
        abstraction (``"reduction"``, which needs a power of two).
    k : int, default=2
        Number of fold groups. ``h`` must be a multiple of ``k`` with
        ``h / k >= 2``; ``"reduction"`` needs a power of two. A larger ``h / k``
        averages more parts into each fold group: fairer clusters, higher cost.
    epsilon : float, default=None
        Balance slack. ``None``: ``1 / (c log2 n)`` clipped into the valid range
        ``1/(2n) < epsilon < min(1/6, 1/h)`` (``"polylog"``) or
        ``1/(2n) < epsilon < 1/6`` (``"reduction"``); a value outside that range
        raises a ValueError.
    c : float, default=4
        Constant of the default ``epsilon = 1 / (c log2 n)`` (the authors use
        1, 2, 4 or 8).
    linkage : {"average", "complete", "single"} or ndarray of shape \
            (n_samples - 1, 4), default="average"
        Vanilla base tree: scipy/fastcluster linkage on the distance
        ``max(S) - S``, or a user-supplied scipy linkage matrix over the samples.
    similarity : {"inverse_distance", "rbf", "precomputed"}, \
            default="inverse_distance"
        ``"inverse_distance"``: ``1 / (1 + ||x_i - x_j||)`` on the features as
        given (the papers); ``"rbf"``: ``exp(-||x_i - x_j||^2 / n_features)``;
        ``"precomputed"``: X is a symmetric non-negative (n, n) similarity,
        dense or sparse (missing entries are 0).
    max_split_iter : int, default=None
        Cap on the moves of one SplitRoot call; ``None``: ``10 h ceil(log2 n)``.
        A ConvergenceWarning is emitted when a call hits the cap.
    random_state : int, RandomState instance or None, default=None
        Tie-breaking between equal sizes or proportions; ``None`` breaks ties
        by node id (deterministic).

    Attributes
    ----------
    tree_ : HierarchyTree
        The k-ary fair hierarchy (arrays only): ``parent``, ``children_ptr`` /
        ``children`` (CSR), ``size``, ``group_counts`` (n_nodes, n_groups),
        ``depth``, ``root``; leaves are nodes ``0 .. n - 1`` in sample order.
        Methods ``cut(n_clusters=None, depth=None)`` and ``to_linkage()``.
    linkage_matrix_ : ndarray of shape (n_samples - 1, 4)
        Binarised scipy linkage of ``tree_`` (height = cluster size, monotone).
    children_ : ndarray of shape (n_samples - 1, 2)
        The merges of ``linkage_matrix_``, as in AgglomerativeClustering.
    distances_ : ndarray of shape (n_samples - 1,)
        Merge heights ``linkage_matrix_[:, 2]``.
    labels_ : ndarray of shape (n_samples,)
        Flat cluster labels ``0 .. n_clusters_ - 1``.
    cost_ : float
        Dasgupta cost of ``tree_`` (unordered pairs).
    base_cost_ : float
        Dasgupta cost of the vanilla tree.
    cost_ratio_ : float
        ``cost_ / base_cost_``.
    fairness_violation_ : float
        Max over clusters of ``tree_`` of size at least
        ``max(h, ceil(1/(2 epsilon_)))`` of max over groups of
        ``|p_l(C) - c_l|``.
    min_balance_ : float
        Min over the same clusters of min over groups of ``p_l(C) / c_l``.
    groups_ : ndarray of shape (n_groups,)
        Sorted distinct group labels.
    group_proportions_ : ndarray of shape (n_groups,)
        Global proportions ``c_l``.
    n_leaves_ : int
        Number of samples.
    n_clusters_ : int
        Number of flat clusters in ``labels_``.
    epsilon_ : float
        The epsilon used.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.cluster.AgglomerativeClustering : Vanilla agglomerative clustering.
    skpapers.metrics.dasgupta_cost : Dasgupta cost of a hierarchy.
    skpapers.metrics.cluster_fairness : Group proportions of every cluster.

    Notes
    -----
    Fairness: for groups with global proportions ``c_l``, a cluster C is fair
    when every ``p_l(C) = |l(C)| / |C|`` is close to ``c_l``. Only clusters of
    size at least ``max(h, 1/(2 epsilon))`` are made fair: smaller ones (near
    the leaves) are left as in the vanilla tree, and a cluster of size m cannot
    hold group l at proportion c_l when ``m c_l < 1``. Each stride fold averages
    ``h / k`` colour-sorted parts, so the spread of a group's proportion among
    the fold groups is at most ``k / h`` times its spread among the parts.

    Deviations and choices, where the papers could not be checked or are
    silent (see the user guide): with more than two groups, each fold sorts
    the parts by the group whose proportion spreads most among them (one fold
    pass per level, ``k`` stride groups of ``h / k`` parts); the ICML authors'
    code folds ``h/k - 1`` parts per group, one pass per colour. ``"reduction"``
    recurses until a node's children are all leaves (authors' code); ``"polylog"``
    stops below ``max(h, 1/(2 epsilon))``. SplitRoot stops early when no move can
    shrink the range of child sizes (integer sizes may make the window
    unreachable for small clusters). The theory assumes a gamma-approximate
    vanilla tree; average linkage has no worst-case Dasgupta guarantee, so the
    proven ratio does not apply to the default base tree.

    ``labels_`` with an int ``n_clusters``: the largest non-leaf cluster is
    replaced by its children until the count is reached; when that would
    overshoot, its children are split off one at a time (largest first) and the
    rest is kept as one union of siblings, so the count is exact.

    ``linkage_matrix_`` is a view for scipy tools: a node with m > 2 children
    becomes a chain of m - 1 merges at the same height; ``cost_`` and the
    fairness numbers are computed on ``tree_``.

    Memory: one float64 condensed distance (n(n-1)/2 entries) for the base
    linkage plus O(n); similarity rows are recomputed in blocks for the cost.

    References
    ----------
    .. [1] M. Knittel, M. Springer, J. Dickerson, M. Hajiaghayi, "Fair,
       Polylog-Approximate Low-Cost Hierarchical Clustering", NeurIPS 2023,
       arXiv:2311.12501.
    .. [2] M. Knittel, M. Springer, J. Dickerson, M. Hajiaghayi, "Generalized
       Reductions: Making any Hierarchical Clustering Fair and Balanced with
       Low Cost", ICML 2023, arXiv:2205.14198.
    .. [3] S. Dasgupta, "A cost function for similarity-based hierarchical
       clustering", STOC 2016, arXiv:1510.05043.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skpapers.cluster import FairHierarchicalClustering
    >>> X, blob = make_blobs(n_samples=64, centers=2, random_state=0)
    >>> colour = np.where(blob == 0, "red", "blue")  # colour = blob: unfair data
    >>> est = FairHierarchicalClustering(h=8, k=2).fit(X, sensitive_features=colour)
    >>> est.n_clusters_
    2
    >>> bool(est.fairness_violation_ < 0.25)
    True
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "method": [StrOptions({"polylog", "reduction"})],
        "h": [Interval(numbers.Integral, 4, None, closed="left")],
        "k": [Interval(numbers.Integral, 2, None, closed="left")],
        "epsilon": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "c": [Interval(numbers.Real, 0, None, closed="neither")],
        "linkage": [StrOptions({"average", "complete", "single"}), "array-like"],
        "similarity": [StrOptions({"inverse_distance", "rbf", "precomputed"})],
        "max_split_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=None,
        *,
        method="polylog",
        h=4,
        k=2,
        epsilon=None,
        c=4,
        linkage="average",
        similarity="inverse_distance",
        max_split_iter=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.method = method
        self.h = h
        self.k = k
        self.epsilon = epsilon
        self.c = c
        self.linkage = linkage
        self.similarity = similarity
        self.max_split_iter = max_split_iter
        self.random_state = random_state

    def _check_params(self, n):
        h, k = self.h, self.k
        if h % k != 0 or h // k < 2:
            raise ValueError(f"h must be a multiple of k with h / k >= 2; got h={h}, k={k}.")
        if self.method == "reduction" and not (_is_power_of_two(h) and _is_power_of_two(k)):
            raise ValueError(
                f"method='reduction' needs h = 2**i and k = 2**j with 0 < j < i; "
                f"got h={h}, k={k}."
            )
        lo = 1 / (2 * n)
        hi = min(1 / 6, 1 / h) if self.method == "polylog" else 1 / 6
        if self.epsilon is None:
            eps = 1 / (self.c * max(math.log2(n), 1.0))
            eps = min(max(eps, np.nextafter(lo, 1.0)), np.nextafter(hi, 0.0))
        else:
            eps = float(self.epsilon)
            if not lo < eps < hi:
                raise ValueError(
                    f"epsilon must satisfy 1/(2 n_samples) = {lo:.4g} < epsilon < {hi:.4g} "
                    f"for method={self.method!r} and h={h}; got epsilon={eps!r}."
                )
        return float(eps)

    def _validate_X(self, X):
        precomputed = self.similarity == "precomputed"
        X = validate_data(
            self,
            X,
            accept_sparse=("csr", "csc") if precomputed else False,
            dtype=np.float64,
            ensure_min_samples=1,
        )
        n = X.shape[0]
        if n == 1:
            raise ValueError(
                "A hierarchy needs at least 2 samples; got n_samples = 1."
            )
        if precomputed:
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"similarity='precomputed' needs a square (n, n) matrix; got {X.shape}."
                )
            values = X.data if sparse.issparse(X) else X
            if np.any(values < 0):
                raise ValueError(
                    "Negative values in data: a precomputed similarity must be non-negative."
                )
            asym = abs(X - X.T).max() if sparse.issparse(X) else np.max(np.abs(X - X.T))
            if asym > 1e-8 * max(float(np.max(np.abs(values), initial=0.0)), 1.0):
                raise ValueError("A precomputed similarity must be symmetric.")
        return X

    def _validate_groups(self, sensitive_features, n):
        if sensitive_features is None:
            codes, groups = np.zeros(n, dtype=np.intp), np.asarray([None], dtype=object)
        else:
            codes, groups = encode_groups(sensitive_features)
            if codes.shape[0] != n:
                raise ValueError(
                    f"sensitive_features has {codes.shape[0]} entries but X has "
                    f"n_samples = {n}."
                )
        if groups.shape[0] < 2:
            warnings.warn(
                "sensitive_features is None or holds a single group: fitting the "
                "vanilla (unconstrained) hierarchy.",
                SensitiveFeaturesWarning,
                stacklevel=3,
            )
        return codes, groups

    def _base_tree(self, X, n):
        if isinstance(self.linkage, str):
            Z = base_linkage(condensed_distance(X, self.similarity), self.linkage)
        else:
            Z = np.array(self.linkage, dtype=np.float64)
            if Z.ndim != 2 or Z.shape != (n - 1, 4):
                raise ValueError(
                    f"A linkage matrix for n_samples = {n} must have shape ({n - 1}, 4); "
                    f"got {Z.shape}."
                )
            try:
                is_valid_linkage(Z, throw=True, name="linkage")
            except (TypeError, ValueError) as exc:
                raise ValueError(f"Invalid linkage matrix: {exc}") from exc
        return as_hierarchy(Z)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, sensitive_features=None):
        """Fit the fair hierarchy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or \
                (n_samples, n_samples)
            Samples, or a similarity matrix if ``similarity="precomputed"``
            (sparse input only then).
        y : Ignored
            Not used, present for API consistency.
        sensitive_features : array-like of shape (n_samples,), default=None
            Protected group of every sample (any hashable labels, pandas Series
            included). ``None`` or a single distinct value: the vanilla tree is
            fitted, with a SensitiveFeaturesWarning.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X = self._validate_X(X)
        n = X.shape[0]
        eps = self._check_params(n)
        codes, groups = self._validate_groups(sensitive_features, n)
        n_groups = groups.shape[0]
        counts = np.bincount(codes, minlength=n_groups)
        threshold = max(self.h, math.ceil(1 / (2 * eps)))
        if n_groups >= 2:
            small = counts < self.h
            if np.any(small):
                raise ValueError(
                    f"Every group needs at least h = {self.h} samples; group "
                    f"{groups[np.argmax(small)]!r} has {counts[small].min()}."
                )
            if np.any(counts < 1 / eps):
                warnings.warn(
                    f"A group has fewer than 1/epsilon = {1 / eps:.1f} samples "
                    f"(smallest: {counts.min()}); clusters of size "
                    f">= {threshold} cannot all hold it near its proportion.",
                    UserWarning,
                    stacklevel=2,
                )
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(f"n_clusters = {self.n_clusters} exceeds n_samples = {n}.")

        base = self._base_tree(X, n)
        rows = similarity_rows(X, self.similarity)
        self.base_cost_ = cost_from_rows(base, rows)
        if n_groups >= 2:
            rng = None if self.random_state is None else check_random_state(self.random_state)
            gen = None if rng is None else np.random.default_rng(rng.randint(2**31 - 1))
            work = WorkTree(base, codes, n_groups, rng=gen)
            if self.method == "polylog":
                max_iter = self.max_split_iter
                if max_iter is None:
                    max_iter = 10 * self.h * math.ceil(math.log2(n))
                make_fair(work, self.h, self.k, eps, max_iter)
                if work.split_capped:
                    warnings.warn(
                        f"SplitRoot hit max_split_iter = {max_iter} moves in "
                        f"{work.split_capped} cluster(s); their children may lie "
                        "outside the size window.",
                        ConvergenceWarning,
                        stacklevel=2,
                    )
            else:
                rebalance_tree(work)
                refine_rebalance_tree(work, eps)
                fair_hc(work, self.h, self.k)
            self.tree_ = work.to_hierarchy()
            self.cost_ = cost_from_rows(self.tree_, rows)
        else:
            work = WorkTree(base, codes, 1)
            self.tree_ = work.to_hierarchy()
            self.cost_ = self.base_cost_
        self.cost_ratio_ = self.cost_ / self.base_cost_ if self.base_cost_ > 0 else 1.0
        fair = fairness_from_counts(self.tree_.group_counts, threshold)
        self.fairness_violation_ = fair["violation"]
        self.min_balance_ = fair["min_balance"]
        self.groups_ = groups
        self.group_proportions_ = counts / n
        self.epsilon_ = eps
        self.n_leaves_ = n
        self.linkage_matrix_ = self.tree_.to_linkage()
        self.children_ = self.linkage_matrix_[:, :2].astype(np.intp)
        self.distances_ = self.linkage_matrix_[:, 2].copy()
        self.labels_ = self.tree_.cut(n_clusters=self.n_clusters)
        self.n_clusters_ = int(self.labels_.max()) + 1
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.similarity == "precomputed"
        tags.input_tags.sparse = self.similarity == "precomputed"
        tags.input_tags.positive_only = self.similarity == "precomputed"
        return tags
