# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fair hierarchical clustering on arrays: base tree, then the fairness operators.

:func:`fair_hierarchical_tree` is the function
:class:`~skpapers.cluster.FairHierarchicalClustering` calls.
"""

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.cluster.hierarchy import is_valid_linkage
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array
from sklearn.utils.validation import check_random_state

from skpapers.cluster._fair_hierarchical.similarity import (
    average_linkage_cost,
    base_linkage,
    condensed_distance,
    similarity_rows,
)
from skpapers.cluster._fair_hierarchical.tree_operators import (
    WorkTree,
    fair_hc,
    make_fair,
    rebalance_tree,
    refine_rebalance_tree,
)
from skpapers.exceptions import SensitiveFeaturesWarning
from skpapers.utils._hierarchy import (
    as_hierarchy,
    cost_from_weights,
    encode_groups,
    fairness_from_counts,
    fairness_threshold,
    format_label,
    merge_distances,
    node_weights,
)
from skpapers.utils._memory import check_dense_budget
from skpapers.utils._numerics import unit_exponent
from skpapers.utils._progress import Progress
from skpapers.utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["FairHierarchyResult", "fair_hierarchical_tree"]

PARAMETER_CONSTRAINTS = {
    "method": [StrOptions({"polylog", "reduction"})],
    "h": [Interval(numbers.Integral, 4, None, closed="left")],
    "k": [Interval(numbers.Integral, 2, None, closed="left")],
    "epsilon": [Interval(numbers.Real, 0, 1, closed="neither"), None],
    "c": [Interval(numbers.Real, 0, None, closed="neither")],
    "linkage": [StrOptions({"average", "complete", "single"}), "array-like"],
    "similarity": [StrOptions({"inverse_distance", "rbf", "precomputed"})],
    "distance_scale": [StrOptions({"std"}), Interval(numbers.Real, 0, None, closed="neither")],
    "max_split_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "max_dense_entries": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}

# The base linkage needs one float64 condensed distance matrix, n(n-1)/2
# entries. 1e9 entries (8 GB) fits a 24 GB machine with room for the rest of
# the process and admits n up to about 44,700 samples: all of Adult (n = 30,162,
# 4.5e8 entries, 3.6 GB) runs with the default.
DEFAULT_MAX_DENSE_ENTRIES = 1_000_000_000


@dataclass(frozen=True)
class FairHierarchyResult:
    """What :func:`fair_hierarchical_tree` measured besides the tree.

    Parameters
    ----------
    cost : float
        Dasgupta cost of the fair tree (unordered pairs).
    base_cost : float
        Dasgupta cost of the vanilla base tree.
    epsilon : float
        The balance slack used (``epsilon=None`` resolved).
    fairness_threshold : int
        Size ``max(h, ceil(1/(2 epsilon)))`` from which a cluster is made fair
        and evaluated.
    fairness_violation : float
        Max over clusters of at least ``fairness_threshold`` samples of max over
        groups of ``|p_l(C) - c_l|``; NaN without ``sensitive_features`` (not
        measured).
    min_balance : float
        Min over the same clusters of min over groups of ``p_l(C) / c_l``; NaN
        without ``sensitive_features``.
    distance_scale : float or None
        The unit ``s`` distances were divided by before the similarity (in the
        units of X); None for a precomputed similarity (nothing was divided).
    groups : ndarray of shape (n_groups,)
        Sorted distinct group labels.
    group_proportions : ndarray of shape (n_groups,)
        Global proportions ``c_l``.
    """

    cost: float
    base_cost: float
    epsilon: float
    fairness_threshold: int
    fairness_violation: float
    min_balance: float
    distance_scale: float | None
    groups: np.ndarray
    group_proportions: np.ndarray


def _is_power_of_two(x):
    return x >= 1 and (x & (x - 1)) == 0


def resolve_epsilon(method, h, k, epsilon, c, n):
    """Check ``(h, k)`` and return epsilon (the default ``1 / (c log2 n)`` clipped)."""
    if h % k != 0 or h // k < 2:
        raise ValueError(f"h must be a multiple of k with h / k >= 2; got h={h}, k={k}.")
    if method == "reduction" and not (_is_power_of_two(h) and _is_power_of_two(k)):
        raise ValueError(
            f"method='reduction' needs h = 2**i and k = 2**j with 0 < j < i; got h={h}, k={k}."
        )
    lo = 1 / (2 * n)
    hi = min(1 / 6, 1 / h) if method == "polylog" else 1 / 6
    if epsilon is None:
        eps = 1 / (c * max(math.log2(n), 1.0))
        return float(min(max(eps, np.nextafter(lo, 1.0)), np.nextafter(hi, 0.0)))
    eps = float(epsilon)
    if not lo < eps < hi:
        raise ValueError(
            f"epsilon must satisfy 1/(2 n_samples) = {lo:.4g} < epsilon < {hi:.4g} "
            f"for method={method!r} and h={h}; got epsilon={eps!r}."
        )
    return eps


def check_input(X, similarity):
    """Check the samples or the precomputed similarity (``check_array`` done)."""
    n = X.shape[0]
    if n == 1:
        raise ValueError("A hierarchy needs at least 2 samples; got n_samples = 1.")
    if similarity == "precomputed":
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


def _groups(sensitive_features, n, index=None):
    if sensitive_features is None:
        codes, groups = np.zeros(n, dtype=np.intp), np.asarray([None], dtype=object)
    else:
        codes, groups = encode_groups(sensitive_features, n_samples=n, index=index)
    if groups.shape[0] < 2:
        warnings.warn(
            "sensitive_features is None or holds a single group: fitting the "
            "vanilla (unconstrained) hierarchy.",
            SensitiveFeaturesWarning,
            stacklevel=4,
        )
    return codes, groups


def _in_distance_units(X, distance_scale):
    """X divided by the distance unit, and that unit in the units of X.

    A power-of-two change of units first (exact), so that the result does not
    depend on the units of X even near the ends of the float64 range.
    """
    exponent = unit_exponent(X)
    X = np.ldexp(X, -exponent)
    spread = float(np.std(X)) if X.size else 0.0
    if distance_scale == "std":
        scale = spread if spread > 0 else 1.0
    else:
        scale = math.ldexp(distance_scale, -exponent)
        # the spread in the chosen unit, as a power of ten, without overflow
        decades = (math.log2(spread) - math.log2(distance_scale) + exponent) / math.log2(10)
        if spread > 0 and abs(decades) > 150:
            raise ValueError(
                f"In units of distance_scale = {distance_scale}, the distances between "
                f"samples (spread about 1e{decades:.0f}) "
                f"{'overflow' if decades > 0 else 'underflow'} float64; use "
                "distance_scale='std' (the default) or a unit near the spread of X."
            )
    X /= scale
    return X, math.ldexp(scale, exponent)


def _base_tree(X, n, linkage, similarity, max_dense_entries):
    if isinstance(linkage, str):
        check_dense_budget(
            n * (n - 1) // 2,
            max_dense_entries,
            f"The condensed distance matrix of the base linkage (n_samples = {n})",
            "Pass a subsample (skpapers.datasets.stratified_subsample), your own "
            "linkage matrix as linkage=, or raise max_dense_entries if the memory "
            "is there.",
        )
        d, smax = condensed_distance(X, similarity, return_max=True)
        Z = base_linkage(d, linkage)
        del d
        if linkage == "average":  # heights and cost from the merge distances
            height = np.concatenate([np.zeros(n), Z[:, 2]])
            return as_hierarchy(Z), average_linkage_cost(Z, smax), height
        return as_hierarchy(Z), None, None
    Z = np.array(linkage, dtype=np.float64)
    if Z.ndim != 2 or Z.shape != (n - 1, 4):
        raise ValueError(
            f"A linkage matrix for n_samples = {n} must have shape ({n - 1}, 4); got {Z.shape}."
        )
    try:
        is_valid_linkage(Z, throw=True, name="linkage")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Invalid linkage matrix: {exc}") from exc
    return as_hierarchy(Z), None, None


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "sensitive_features": ["array-like", None],
        **PARAMETER_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)
def fair_hierarchical_tree(
    X,
    sensitive_features=None,
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
    """Fair, low-cost hierarchy of the samples for protected groups.

    Builds a vanilla hierarchy (a linkage on a similarity), then makes every
    cluster of at least ``max(h, ceil(1/(2 epsilon)))`` samples hold each group
    near its global share, with ``"polylog"`` (SplitRoot + MakeFair) or
    ``"reduction"`` (rebalance, refine, level abstraction + fold).
    :class:`~skpapers.cluster.FairHierarchicalClustering` is the estimator
    around this function; its docstring describes every parameter in full.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features) or \
            (n_samples, n_samples)
        Samples, or a symmetric non-negative similarity if
        ``similarity="precomputed"`` (sparse input only then).
    sensitive_features : array-like of shape (n_samples,) or \
            (n_samples, n_columns), default=None
        Protected group of every sample; several columns (a 2-D array or a
        DataFrame) define intersectional groups. Missing labels raise a
        ValueError. ``None`` or a single group: the vanilla tree, with a
        :class:`~skpapers.exceptions.SensitiveFeaturesWarning` (then the
        fairness fields of the result are NaN: nothing was measured).
    method : {"polylog", "reduction"}, default="polylog"
        The fairness algorithm.
    h : int, default=4
        Children per SplitRoot (``"polylog"``) or ``2**depth`` of the level
        abstraction (``"reduction"``).
    k : int, default=2
        Number of fold groups; ``h`` must be a multiple of ``k`` with ``h / k >= 2``.
    epsilon : float, default=None
        Balance slack; ``None`` is ``1 / (c log2 n)`` clipped into its valid range.
    c : float, default=4
        Constant of the default epsilon.
    linkage : {"average", "complete", "single"} or ndarray of shape \
            (n_samples - 1, 4), default="average"
        The vanilla base tree, or a scipy linkage matrix over the samples.
    similarity : {"inverse_distance", "rbf", "precomputed"}, \
            default="inverse_distance"
        The similarity scored by Dasgupta's cost, on distances divided by
        ``distance_scale``.
    distance_scale : "std" or float, default="std"
        Unit of the distances: ``"std"`` is the standard deviation of all
        entries of X (so the result does not depend on the units of X); a
        float is a fixed unit (``1.0``: the features as given, the papers'
        setting). Not used with ``similarity="precomputed"``.
    max_split_iter : int, default=None
        Cap on the moves of one SplitRoot call; ``None``: ``10 h ceil(log2 n)``.
    max_dense_entries : int or None, default=1_000_000_000
        Largest condensed distance matrix (``n (n - 1) / 2`` float64 entries)
        the base linkage may allocate; a ValueError is raised before allocating
        beyond it. ``None``: no limit.
    random_state : int, RandomState instance or None, default=None
        Tie-breaking between equal sizes or proportions.
    verbose : int, default=0
        0 silent; 1 one line per stage (base linkage, fairness passes, cost)
        on the ``skpapers.fair_hierarchical`` logger; 2 also progress lines of
        the fairness passes.

    Returns
    -------
    tree : HierarchyTree
        The k-ary fair hierarchy; leaves are nodes ``0 .. n - 1`` in sample
        order. Its ``height`` holds every node's merge distance (the mean
        distance ``max(S) - S`` between its children, made monotone).
    result : FairHierarchyResult
        Costs, epsilon, the fairness threshold and the fairness measured on
        ``tree``.

    See Also
    --------
    skpapers.cluster.FairHierarchicalClustering : The estimator (flat labels,
        linkage matrix, pipelines).
    skpapers.metrics.dasgupta_cost : Dasgupta cost of any hierarchy.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_blobs
    >>> from skpapers.cluster import fair_hierarchical_tree
    >>> X, blob = make_blobs(n_samples=64, centers=2, random_state=0)
    >>> tree, result = fair_hierarchical_tree(X, np.where(blob == 0, "red", "blue"), h=8)
    >>> tree.n_leaves, result.fairness_threshold
    (64, 12)
    >>> bool(result.fairness_violation < 0.25)
    True
    """
    progress = Progress("fair_hierarchical", verbose)
    precomputed = similarity == "precomputed"
    index = getattr(X, "index", None) if hasattr(X, "columns") else None
    X = check_array(X, accept_sparse=("csr", "csc") if precomputed else False, dtype=np.float64)
    X = check_input(X, similarity)
    if precomputed:
        if distance_scale != "std":
            raise ValueError(
                "distance_scale applies to distances between samples; it has no "
                "meaning with similarity='precomputed' (leave it at 'std')."
            )
        scale = None
    else:
        X, scale = _in_distance_units(X, distance_scale)
    n = X.shape[0]
    eps = resolve_epsilon(method, h, k, epsilon, c, n)
    codes, groups = _groups(sensitive_features, n, index)
    n_groups = groups.shape[0]
    counts = np.bincount(codes, minlength=n_groups)
    threshold = fairness_threshold(h, eps)
    if n_groups >= 2:
        small = counts < h
        if np.any(small):
            g = int(np.flatnonzero(small)[np.argmin(counts[small])])
            raise ValueError(
                f"Every group needs at least h = {h} samples; group "
                f"{format_label(groups[g])} has {counts[g]}."
            )
        if np.any(counts < 1 / eps):
            warnings.warn(
                f"A group has fewer than 1/epsilon = {1 / eps:.1f} samples "
                f"(smallest: {counts.min()}); clusters of size "
                f">= {threshold} cannot all hold it near its proportion.",
                UserWarning,
                stacklevel=3,
            )

    progress.stage(f"base tree ({linkage if isinstance(linkage, str) else 'given'} linkage)")
    base, base_cost, base_height = _base_tree(X, n, linkage, similarity, max_dense_entries)
    rows = similarity_rows(X, similarity)
    if n_groups >= 2:
        if base_cost is None:  # average linkage gives it from the merge heights
            progress.stage("cost of the base tree")
            base_cost = cost_from_weights(base, node_weights(base, rows)[0])
        progress.stage(f"fairness passes ({method}, {n_groups} groups)")
        rng = None if random_state is None else check_random_state(random_state)
        gen = None if rng is None else np.random.default_rng(rng.randint(2**31 - 1))
        work = WorkTree(base, codes, n_groups, rng=gen)
        if method == "polylog":
            max_iter = max_split_iter
            if max_iter is None:
                max_iter = 10 * h * math.ceil(math.log2(n))
            make_fair(work, h, k, eps, max_iter, progress=progress)
            if work.split_capped:
                warnings.warn(
                    f"SplitRoot hit max_split_iter = {max_iter} moves in "
                    f"{work.split_capped} cluster(s); their children may lie "
                    "outside the size window.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        else:
            rebalance_tree(work)
            refine_rebalance_tree(work, eps)
            fair_hc(work, h, k, progress=progress)
        tree = work.to_hierarchy()
        progress.stage("cost and merge distances of the fair tree")
        inside, smax = node_weights(tree, rows)
        cost = cost_from_weights(tree, inside)
        tree.height = merge_distances(tree, inside, smax)
    else:
        tree = WorkTree(base, codes, 1).to_hierarchy(height=base_height)
        if base_height is None:  # one sweep gives the cost and the merge distances
            progress.stage("cost and merge distances of the base tree")
            inside, smax = node_weights(tree, rows)
            base_cost = cost_from_weights(tree, inside)
            tree.height = merge_distances(tree, inside, smax)
        cost = base_cost
    # the root (all samples, at the global shares) is always measured, also when
    # the threshold exceeds n
    fair = fairness_from_counts(tree.group_counts, min(threshold, n))
    if sensitive_features is None:  # nothing measured: claim nothing
        fair = {"violation": float("nan"), "min_balance": float("nan")}
    progress.stage("done")
    result = FairHierarchyResult(
        cost=cost,
        base_cost=base_cost,
        epsilon=eps,
        fairness_threshold=threshold,
        fairness_violation=fair["violation"],
        min_balance=fair["min_balance"],
        distance_scale=scale,
        groups=groups,
        group_proportions=counts / n,
    )
    return tree, result
