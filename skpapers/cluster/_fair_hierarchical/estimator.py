# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fair, low-cost hierarchical clustering (Knittel, Springer, Dickerson, Hajiaghayi)."""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import validate_data

from skpapers.cluster._fair_hierarchical.solver import (
    DEFAULT_MAX_DENSE_ENTRIES,
    PARAMETER_CONSTRAINTS,
    fair_hierarchical_tree,
)
from skpapers.utils._hierarchy import encode_groups
from skpapers.utils._repr import DocLinkMixin
from skpapers.utils._sklearn import Interval, _fit_context

__all__ = ["FairHierarchicalClustering"]


class FairHierarchicalClustering(ClusterMixin, DocLinkMixin, BaseEstimator):
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
        exact top-down cut (see Notes). It changes ``labels_`` only, not the
        tree: to get several numbers of clusters, fit once and call
        ``tree_.cut(n_clusters=...)`` rather than refitting (a grid search
        over it refits the same tree).
    method : {"polylog", "reduction"}, default="polylog"
        ``"polylog"``: SplitRoot (the root gets ``h`` children of size within
        ``(1/h +- epsilon) n``) then a balanced fold into ``k`` groups (see Notes), applied
        top-down to every cluster of size at least ``max(h, 1/(2 epsilon))``.
        ``"reduction"``: 1/6-rebalance, epsilon-refine, then level abstraction
        to depth log2(h) and the same fold into ``k`` groups at every level.
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
        With ``s = distance_scale_``: ``"inverse_distance"``:
        ``1 / (1 + ||x_i - x_j|| / s)`` (the papers' similarity, there with
        ``s = 1``); ``"rbf"``: ``exp(-||x_i - x_j||^2 / (n_features s^2))``
        (with ``distance_scale="std"``, scikit-learn's ``gamma="scale"``);
        ``"precomputed"``: X is a symmetric non-negative (n, n) similarity,
        dense or sparse (missing entries are 0).
    distance_scale : "std" or float, default="std"
        The unit ``s`` of the distances. ``"std"``: the standard deviation of
        all entries of X, so that the tree does not depend on the units of X
        (data in metres or in kilometres give the same tree). A float is a
        fixed unit in the units of X; ``1.0`` reproduces the papers, which
        use the raw features (see Notes). Not used with
        ``similarity="precomputed"``.
    max_split_iter : int, default=None
        Cap on the moves of one SplitRoot call; ``None``: ``10 h ceil(log2 n)``.
        A ConvergenceWarning is emitted when a call hits the cap.
    max_dense_entries : int or None, default=1_000_000_000
        Largest condensed distance matrix (``n (n - 1) / 2`` float64 entries)
        the base linkage may allocate; ``fit`` raises a ValueError before
        allocating beyond it. The default (8 GB) admits up to about 44,700
        samples, all of Adult (30,162 samples, 3.6 GB) included, on a 24 GB
        machine. It caps that one matrix, which is also the peak of the fit
        (1.01 times it at n = 3000, both methods, numpy's allocations). ``None``:
        no limit. Not used when ``linkage`` is a matrix.
    random_state : int, RandomState instance or None, default=None
        Tie-breaking between equal sizes or proportions; ``None`` breaks ties
        by node id (deterministic).
    verbose : int, default=0
        0 silent; 1 one line per stage (base linkage, fairness passes, cost)
        on the ``skpapers.fair_hierarchical`` logger; 2 also progress lines
        of the fairness passes.

    Attributes
    ----------
    tree_ : HierarchyTree
        The k-ary fair hierarchy (arrays only): ``parent``, ``children_ptr`` /
        ``children`` (CSR), ``size``, ``group_counts`` (n_nodes, n_groups),
        ``depth``, ``root``; leaves are nodes ``0 .. n - 1`` in sample order.
        Methods ``cut(n_clusters=None, depth=None)`` and ``to_linkage()``.
    linkage_matrix_ : ndarray of shape (n_samples - 1, 4)
        Binarised scipy linkage of ``tree_``: ``[a, b, height, size]``, the
        height of a merge being its node's merge distance (see Notes), so
        that ``scipy.cluster.hierarchy.dendrogram`` draws the structure.
        (In version 0.1 the heights were cluster sizes;
        ``tree_.to_linkage()`` still gives that matrix, and ``merge_sizes_``
        those sizes.)
    children_ : ndarray of shape (n_samples - 1, 2)
        The merges of ``linkage_matrix_``, as in AgglomerativeClustering.
    distances_ : ndarray of shape (n_samples - 1,)
        Merge distance of every row of ``linkage_matrix_`` (``[:, 2]``), as
        ``AgglomerativeClustering.distances_``. It held cluster sizes in
        version 0.1 (now ``merge_sizes_``); reading it emits a FutureWarning
        saying so (to be removed in a later release).
    merge_sizes_ : ndarray of shape (n_samples - 1,)
        Size of the k-ary cluster every row of ``linkage_matrix_`` belongs to
        (a node of m children is written as m - 1 rows).
    labels_ : ndarray of shape (n_samples,)
        Flat cluster labels ``0 .. n_clusters_ - 1``.
    cost_ : float
        Dasgupta cost of ``tree_`` (unordered pairs).
    base_cost_ : float
        Dasgupta cost of the vanilla tree.
    cost_ratio_ : float
        ``cost_ / base_cost_``.
    fairness_threshold_ : int
        Size ``max(h, ceil(1/(2 epsilon_)))`` from which a cluster is made fair
        and evaluated.
    fairness_violation_ : float
        Max over clusters of ``tree_`` of at least ``fairness_threshold_``
        samples of max over groups of ``|p_l(C) - c_l|``. NaN when fitted
        without ``sensitive_features`` (nothing was measured).
    min_balance_ : float
        Min over the same clusters of min over groups of ``p_l(C) / c_l``;
        NaN when fitted without ``sensitive_features``.
    distance_scale_ : float or None
        The unit ``s`` the distances were divided by (in the units of X); None
        with ``similarity="precomputed"`` (nothing was divided), as
        ``TransportClustering.cluster_centers_`` is None there.
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
    the leaves) are left as in the vanilla tree (``"polylog"``), and a cluster
    of size m cannot hold group l at proportion c_l when ``m c_l < 1``.

    The fold. A processed cluster's ``h`` parts are assigned to ``k`` fold
    groups of ``h / k`` parts each. Candidates are the papers' stride folds
    (parts sorted by one group's share, part ``i`` to fold group ``i mod k``),
    one per group; each is improved by swapping parts between fold groups
    while the largest deviation of a fold group's share from the cluster's
    share decreases. The children of the parts (the pieces the fold exposes)
    may then change fold group in the same way, as long as every fold group's
    size stays within the range of the part assignment. Shares are counts over
    sizes, so parts of unequal size weigh by their size.

    What is guaranteed, per fold, with ``D_l`` the spread (max - min) of
    group l's share among the parts and ``rho`` the ratio of the largest to
    the smallest part (tested with hypothesis on random parts that are
    subtrees, ties broken by node id or at random):

    * **two groups**: every fold group's share is within
      ``(k/h + rho - 1) D_l`` of the cluster's share, ``(k/h) D_l`` when the
      parts have equal sizes (SplitRoot's window gives
      ``rho <= (1 + h epsilon) / (1 - h epsilon)``). The stride fold meets
      these bounds; the swap search and the piece refinement only take steps
      that lower the largest deviation, and with two groups both groups
      deviate by the same amount.
    * **more than two groups**: no contraction factor is guaranteed. When the
      parts are assigned whole, each group's deviation is at most ``D_l`` (a
      fold group's share is a weighted mean of its parts'). The piece
      refinement can take one group beyond its ``D_l`` (pieces need not lie
      within the parts' range) while it lowers the largest deviation over the
      groups: after it, the largest deviation is at most the whole parts', so
      at most ``max_l D_l``. The part assignment's largest deviation is at
      most that of the stride fold on each group's order with the same tie
      order (the swap search is local: a stride fold with other ties can do
      better). The user guide reports measured values.

    Per-fold deviations add up over the levels of the tree, and SplitRoot may
    stop outside its window in small clusters, where ``rho`` is larger. With
    ``"polylog"`` these bounds describe the assignment of the parts; its
    refinement against the global shares (below) lowers the largest deviation
    from the global shares and can move a fold group away from its parent's.

    Deviations and choices, where the papers could not be checked or are
    silent (see the user guide): the multi-group fold above (the papers' fold
    sorts by one colour's proportion; the ICML authors' code folds ``h/k - 1``
    parts per group, one pass per colour, two colours only); the piece
    refinement is an addition. With ``"polylog"`` two more additions: (1) the
    pieces of a cluster of m samples are balanced against the global shares
    (not the cluster's), and while a share stays more than
    ``max(k/(2m), epsilon/4)`` away the largest piece is replaced by its
    children and the search resumes; (2) a cluster is folded when its fold
    groups hold at least twice the threshold ``max(h, 1/(2 epsilon))``; in a
    smaller one the descendants of at least the threshold are dissolved (its
    children become its largest descendants below the threshold), so every
    cluster that fairness is measured on went through a fold.
    ``"reduction"`` recurses until a node's children are all leaves (authors'
    code); ``"polylog"`` stops below ``max(h, 1/(2 epsilon))``. SplitRoot
    stops early when no move can shrink the range of child sizes (integer
    sizes may make the window unreachable for small clusters). The theory
    assumes a gamma-approximate vanilla tree; average linkage has no
    worst-case Dasgupta guarantee, so the proven ratio does not apply to the
    default base tree.

    ``labels_`` with an int ``n_clusters``: the largest non-leaf cluster is
    replaced by its children until the count is reached; when that would
    overshoot, its children are split off one at a time (largest first) and the
    rest is kept as one union of siblings, so the count is exact.

    ``linkage_matrix_`` is a view for scipy tools: a node with m > 2 children
    becomes a chain of m - 1 merges at the same height; ``cost_`` and the
    fairness numbers are computed on ``tree_``. A node's height is the mean
    distance ``max(S) - S`` (the base linkage's distance) between samples in
    different children, raised to the largest height below it so that heights
    are monotone. For a vanilla average-linkage tree these are the base
    linkage's own merge distances; in the fair tree they show how far apart
    the clusters a node joins are (the cost of the sweep that computes
    ``cost_``, no extra memory).

    Units: the papers compute ``1 / (1 + ||x_i - x_j||)`` on the raw
    features, so their trees change with the units of the data (on Adult, the
    census weight, in the hundreds of thousands, outweighs every other
    feature). The default divides distances by the standard deviation of the
    entries of X first, which makes the tree unit-free;
    ``distance_scale=1.0`` gives the papers' similarity exactly.

    Memory: one float64 condensed distance (n(n-1)/2 entries) for the base
    linkage plus O(n); similarity rows are recomputed in blocks for the cost of
    the fair tree. The cost of an average-linkage base tree comes from its merge
    heights in O(n): clusters A and B merge at distance
    ``max(S) - W(A, B) / (|A| |B|)``.

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
        **PARAMETER_CONSTRAINTS,
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
        distance_scale="std",
        max_split_iter=None,
        max_dense_entries=DEFAULT_MAX_DENSE_ENTRIES,
        random_state=None,
        verbose=0,
    ):
        self.n_clusters = n_clusters
        self.method = method
        self.h = h
        self.k = k
        self.epsilon = epsilon
        self.c = c
        self.linkage = linkage
        self.similarity = similarity
        self.distance_scale = distance_scale
        self.max_split_iter = max_split_iter
        self.max_dense_entries = max_dense_entries
        self.random_state = random_state
        self.verbose = verbose

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
        sensitive_features : array-like of shape (n_samples,) or \
                (n_samples, n_columns), default=None
            Protected group of every sample (any hashable labels, pandas Series
            included). Several columns (a 2-D array or a DataFrame) define
            intersectional groups, one per distinct combination. Missing
            labels (NaN, None, ``pd.NA``) raise a ValueError; a pandas object
            whose index differs from a DataFrame ``X``'s index raises too.
            ``None`` or a single distinct value: the vanilla tree is fitted,
            with a SensitiveFeaturesWarning (without sensitive features the
            fairness attributes are NaN).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        precomputed = self.similarity == "precomputed"
        if sensitive_features is not None and hasattr(X, "columns"):
            encode_groups(sensitive_features, index=X.index)  # rows matched by index
        X = validate_data(
            self,
            X,
            accept_sparse=("csr", "csc") if precomputed else False,
            dtype=np.float64,
            ensure_min_samples=1,
        )
        n = X.shape[0]
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(f"n_clusters = {self.n_clusters} exceeds n_samples = {n}.")
        params = {key: v for key, v in self.get_params().items() if key != "n_clusters"}
        self.tree_, result = fair_hierarchical_tree(X, sensitive_features, **params)
        self.cost_ = result.cost
        self.base_cost_ = result.base_cost
        self.cost_ratio_ = self.cost_ / self.base_cost_ if self.base_cost_ > 0 else 1.0
        self.epsilon_ = result.epsilon
        self.fairness_threshold_ = result.fairness_threshold
        self.fairness_violation_ = result.fairness_violation
        self.min_balance_ = result.min_balance
        self.distance_scale_ = result.distance_scale
        self.groups_ = result.groups
        self.group_proportions_ = result.group_proportions
        self.n_leaves_ = n
        self.linkage_matrix_, nodes = self.tree_.to_linkage(heights="distance", return_nodes=True)
        self.children_ = self.linkage_matrix_[:, :2].astype(np.intp)
        self.merge_sizes_ = self.tree_.size[nodes].astype(np.float64)
        self.labels_ = self.tree_.cut(n_clusters=self.n_clusters)
        self.n_clusters_ = int(self.labels_.max()) + 1
        return self

    @property
    def distances_(self):
        """Merge distances, ``linkage_matrix_[:, 2]`` (cluster sizes in version 0.1)."""
        warnings.warn(
            "FairHierarchicalClustering.distances_ now holds merge distances "
            "(linkage_matrix_[:, 2]), as AgglomerativeClustering.distances_; in "
            "version 0.1 it held cluster sizes, which are now merge_sizes_. This "
            "warning will be removed in a later release.",
            FutureWarning,
            stacklevel=2,
        )
        return self.linkage_matrix_[:, 2]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.similarity == "precomputed"
        tags.input_tags.sparse = self.similarity == "precomputed"
        tags.input_tags.positive_only = self.similarity == "precomputed"
        return tags
