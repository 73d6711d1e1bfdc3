# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Transport clustering on arrays: registration, then generalized K-means.

:func:`transport_clustering` is the function :class:`TransportClustering` calls;
it returns the factors ``(Q, R, g)`` of the plan ``Q diag(1/g) R^T`` and a
:class:`TransportClusteringResult`.
"""

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import check_array
from sklearn.utils.validation import check_random_state

from skpapers.cluster._transport.cost import (
    G_MIN,
    safe_div,
    sqeuclidean_factors,
    sqeuclidean_scale,
)
from skpapers.cluster._transport.generalized_kmeans import (
    _assign_by_gradient,
    _gkms,
    _init_log_q,
    _kmeans_start,
)
from skpapers.cluster._transport.polish import _harden, _polish, _polish_weighted
from skpapers.cluster._transport.registration import (
    _assignment,
    _exact_ot,
    _hierarchical_assignment,
    _round_to_permutation,
    _sinkhorn,
)
from skpapers.utils._lowrank import lowrank_cost, route_costs
from skpapers.utils._numerics import unit_exponent
from skpapers.utils._progress import Progress
from skpapers.utils._sklearn import Interval, StrOptions, _check_sample_weight, validate_params

__all__ = ["TransportClusteringResult", "transport_clustering"]

CDIST_METRICS = frozenset(
    {
        "braycurtis",
        "canberra",
        "chebyshev",
        "cityblock",
        "correlation",
        "cosine",
        "euclidean",
        "jensenshannon",
        "mahalanobis",
        "minkowski",
        "seuclidean",
        "sqeuclidean",
    }
)
# unequal sizes or weights: the polishing linear programs have (n + m) K variables
_POLISH_LP_ENTRIES = 200_000

# factored mode with hardening: above this many points, mirror descent runs on
# this many random registered pairs, every point then takes the co-cluster of
# its smallest gradient entry, and hardening runs on all points of the side whose
# start is cheaper (as the authors' factored code runs on one side only)
_GKMS_SAMPLE = 65_536

# factored mode (no n x m matrix) with hardening: mirror descent stops once the hard labels it hands
# to hardening have not changed for this many iterations (at n = m = 2e4, d = K = 50
# they never changed in 250 iterations, 40 % of the fit's time)
_GKMS_PATIENCE = 10

# n_init="auto" with the dense n x m cost: restarts (keep the cheapest polished plan);
# at n = m = 1000, d = 10, K = 10 the second start leaves a local optimum 5.9 % costlier
_N_INIT_DENSE = 2

PARAMETER_CONSTRAINTS = {
    "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
    "metric": [StrOptions(set(CDIST_METRICS) | {"precomputed"}), callable],
    "registration": [StrOptions({"auto", "exact", "sinkhorn", "hierarchical"})],
    "reg": [Interval(numbers.Real, 0, None, closed="neither")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "step_size": [Interval(numbers.Real, 0, None, closed="neither")],
    "init": [StrOptions({"kmeans", "random"}), "array-like"],
    "init_mix": [Interval(numbers.Real, 0, 1, closed="both")],
    "n_init": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
    "both_sides": ["boolean"],
    "refine": [StrOptions({"polish", "harden", "none"})],
    "max_dense_entries": [Interval(numbers.Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


@dataclass(frozen=True)
class TransportClusteringResult:
    """What :func:`transport_clustering` found besides the factors.

    Parameters
    ----------
    cost : float
        Primal cost ``<C, Q diag(1/g) R^T>`` in the user's units.
    registration_cost : float
        Cost of the registration plan (0 in self-transport).
    registration : ndarray of shape (n_samples,) or None
        The registration bijection (source i to target ``registration[i]``), or
        None for a coupling.
    registration_method : str
        The registration used: ``"identity"``, ``"exact"``, ``"sinkhorn"`` or
        ``"hierarchical"`` (``"auto"`` resolved).
    n_iter : int
        Generalized K-means iterations of the kept run; in self-transport with
        the squared Euclidean cost (solved as K-means), its hardening sweeps.
    gkms_cost : float
        Cost of the kept run's plan straight out of generalized K-means (the
        K-means partition in that self-transport case), before hardening and
        polishing.
    route_costs : ndarray of shape (n_clusters,)
        Each co-cluster's share ``Q[:, k]^T C R[:, k] / g_k`` of ``cost``, in the
        user's units.
    """

    cost: float
    registration_cost: float
    registration: np.ndarray | None
    registration_method: str
    n_iter: int
    gkms_cost: float
    route_costs: np.ndarray


class _Registration:
    """Registration plan: a bijection ``sigma`` or a dense coupling ``P``.

    Builds the registered costs of both directions (by indexing for a
    bijection, as a factor pair for a coupling: never an n x n x m product)
    and maps an assignment of one side to the other.
    """

    def __init__(self, a, b, sigma=None, P=None):
        self.a, self.b, self.sigma, self.P = a, b, sigma, P
        self.identity = sigma is not None and np.array_equal(sigma, np.arange(sigma.shape[0]))
        if sigma is not None:
            self.sigma_inv = np.argsort(sigma)

    def registered_cost(self, cost, direction):
        """Return the registered cost of direction 1 (n x n) or 2 (m x m)."""
        s, P = self.sigma, self.P
        if self.identity:
            return cost
        if isinstance(cost, tuple):
            A, B = cost
            if s is not None:
                return (A, B[s]) if direction == 1 else (A[self.sigma_inv], B)
            if direction == 1:
                return (A, safe_div(P @ B, self.a))
            return (safe_div(P.T @ A, self.b), B)
        if s is not None:
            return cost[:, s] if direction == 1 else cost[self.sigma_inv, :]
        if direction == 1:
            return (cost, safe_div(P, self.a))
        return (safe_div(P.T, self.b), cost.T)

    def transfer(self, Z, direction):
        """Map an assignment of the clustered side to the other side."""
        if self.sigma is not None:
            if direction == 1:  # R[sigma[i]] = Q[i]
                out = np.empty_like(Z)
                out[self.sigma] = Z
                return out
            return Z[self.sigma]  # Q[i] = R[sigma[i]]
        if direction == 1:
            return self.P.T @ safe_div(Z, self.a)
        return self.P @ safe_div(Z, self.b)


# how the ground cost scales when the points are multiplied by c: c ** degree
_COST_DEGREE = {
    "sqeuclidean": 2, "euclidean": 1, "cityblock": 1, "chebyshev": 1, "minkowski": 1,
    "seuclidean": 0, "mahalanobis": 0, "cosine": 0, "correlation": 0, "braycurtis": 0,
    "canberra": 0, "jensenshannon": 0, "precomputed": 1,
}


def normalised_weights(weight, n, name):
    """Nonnegative weights of length n scaled to sum to one (uniform if None)."""
    w = _check_sample_weight(weight, np.empty((n, 0)), ensure_non_negative=True)
    total = w.sum()
    if not np.isfinite(total) or total <= 0:
        raise ValueError(f"{name} must have a positive, finite sum.")
    return w / total


def _resolve_registration(registration, metric, n, m, a, b, self_transport, max_dense_entries):
    uniform = (
        n == m
        and np.allclose(a, 1.0 / n, rtol=1e-12, atol=0.0)
        and np.allclose(b, 1.0 / m, rtol=1e-12, atol=0.0)
    )
    dense_ok = n * m <= max_dense_entries or metric == "precomputed"
    sqeuclidean = metric == "sqeuclidean"
    kind = "identity" if self_transport else registration
    if kind == "auto":
        if uniform and dense_ok:
            kind = "exact"
        elif uniform and sqeuclidean:
            kind = "hierarchical"
        elif dense_ok:  # unequal sizes or weights: POT's network simplex
            kind = "exact"
        else:
            kind = "sinkhorn"
    if kind == "hierarchical" and not (uniform and sqeuclidean):
        raise ValueError(
            "registration='hierarchical' needs metric='sqeuclidean', as many targets as "
            "sources and uniform weights."
        )
    dense = metric != "sqeuclidean" or kind in ("exact", "sinkhorn")
    if dense and metric != "precomputed" and n * m > max_dense_entries:
        raise ValueError(
            f"the dense {n} x {m} cost matrix ({n * m} entries, {8e-9 * n * m:.1f} GB in "
            f"float64) exceeds max_dense_entries={max_dense_entries}. Use the factored "
            "mode (metric='sqeuclidean' with registration='auto' or 'hierarchical', n = m, "
            "uniform weights), subsample the data, or raise max_dense_entries."
        )
    return kind, uniform


def _register(kind, uniform, X, Y, C, a, b, scale, reg, rng, *, step_size, max_iter):
    """Registration plan and its cost in user units."""
    if kind == "identity":
        return _Registration(a, b, sigma=np.arange(X.shape[0])), 0.0
    if kind == "hierarchical":
        sigma = _hierarchical_assignment(X, Y, rng, step_size=step_size, max_iter=max_iter)
        diff = X - Y[sigma]
        return _Registration(a, b, sigma=sigma), float(a @ np.einsum("ij,ij->i", diff, diff))
    if kind == "exact" and uniform:
        sigma = _assignment(C)
    elif kind == "exact":
        P = _exact_ot(C, a, b)
        return _Registration(a, b, P=P), float(np.sum(P * C))
    else:
        support_a, support_b = a > 0, b > 0
        f, g, P_s = _sinkhorn(
            C[np.ix_(support_a, support_b)] / scale, a[support_a], b[support_b], reg
        )
        if not uniform:
            P = np.zeros_like(C)
            P[np.ix_(support_a, support_b)] = P_s
            return _Registration(a, b, P=P), float(np.sum(P * C))
        sigma = _round_to_permutation(C / scale, f, g)
    return _Registration(a, b, sigma=sigma), float(a @ C[np.arange(C.shape[0]), sigma])


def _cluster_one_side(
    cost_n, registration, direction, Z, weights, init, *, n_clusters, init_mix, step_size,
    max_iter, harden, patience, rng, progress=None,
):
    """One generalized K-means run in one direction.

    Returns ``(candidates, n_iter)``: ``(Q, R)`` pairs, the GKMS plan first,
    then (``harden``) its hardened version and the hardened initial partition.
    ``patience`` (with ``harden``) stops mirror descent once its hard labels
    have not changed for that many iterations.
    """
    registered = registration.registered_cost(cost_n, direction)
    if not isinstance(init, str) and direction == 2:
        init = registration.transfer(init, 1)
    log_q0 = _init_log_q(Z, weights, n_clusters, init, init_mix, rng)
    S, n_iter = _gkms(
        registered, log_q0, weights, step_size=step_size, max_iter=max_iter,
        patience=patience if harden else None, progress=progress,
    )
    starts = [S]
    if harden:
        starts.append(np.argmax(S, axis=1))
        initial = np.argmax(log_q0, axis=1)
        # the initial partition, unless mirror descent left its labels as they were
        if not (isinstance(init, str) and init == "random" or np.array_equal(initial, starts[1])):
            starts.append(initial)
    candidates = []
    for start in starts:
        if start.ndim == 1:
            labels, _ = _harden(registered, start, weights, n_clusters, progress=progress)
            candidates.append(_hard_plan(labels, registration, direction, weights, n_clusters))
        else:
            other = registration.transfer(start, direction)
            candidates.append((start, other) if direction == 1 else (other, start))
    return candidates, n_iter


def _hard_plan(labels, registration, direction, weights, n_clusters):
    """Factors ``(Q, R)`` of the hard co-clustering ``labels`` of the clustered side."""
    n = labels.shape[0]
    start = np.zeros((n, n_clusters))
    start[np.arange(n), labels] = weights
    other = registration.transfer(start, direction)
    return (start, other) if direction == 1 else (other, start)


def _sampled_start(
    registered, Z, weights, init, *, n_clusters, init_mix, step_size, max_iter, patience, rng,
    progress=None,
):
    """Hard labels of one side from mirror descent on ``_GKMS_SAMPLE`` random registered pairs.

    Every point takes the co-cluster of its smallest gradient entry under the
    sample's plan. Returns ``(labels, n_iter)``.
    """
    n = weights.shape[0]
    idx = np.sort(rng.choice(n, _GKMS_SAMPLE, replace=False))
    sample = (registered[0][idx], registered[1][idx])
    w = weights[idx] / weights[idx].sum()
    log_q0 = _init_log_q(
        Z[idx], w, n_clusters, init if isinstance(init, str) else init[idx], init_mix, rng
    )
    S, n_iter = _gkms(
        sample, log_q0, w, step_size=step_size, max_iter=max_iter, patience=patience,
        progress=progress,
    )
    return _assign_by_gradient(registered, sample, S), n_iter


def _sampled_run(cost, cost_n, registration, sides, a, b, init, seed, *, n_clusters, progress,
                 **gkms):
    """Large factored fit: a start on every side, then hardening of the cheaper one only.

    As in the authors' factored code, which compares the two sides' initial
    plans and runs once, on the cheaper side. Returns ``(value, Q, R, g,
    n_iter, start_value)``.
    """
    starts = []
    for direction, Z in sides:
        weights = a if direction == 1 else b
        registered = registration.registered_cost(cost_n, direction)
        if not isinstance(init, str) and direction == 2:
            init = registration.transfer(init, 1)
        labels, n_iter = _sampled_start(
            registered, Z, weights, init, n_clusters=n_clusters,
            rng=np.random.RandomState(seed), progress=progress, **gkms,
        )
        Q, R = _hard_plan(labels, registration, direction, weights, n_clusters)
        value = lowrank_cost(cost, Q, R, np.maximum(Q.sum(axis=0), G_MIN))
        starts.append((value, direction, registered, weights, labels, n_iter))
        progress.stage(f"start of the {'sources' if direction == 1 else 'targets'} done")
    start_value, direction, registered, weights, labels, n_iter = min(starts, key=lambda s: s[0])
    labels, _ = _harden(registered, labels, weights, n_clusters, progress=progress)
    Q, R = _hard_plan(labels, registration, direction, weights, n_clusters)
    g = np.maximum(Q.sum(axis=0), G_MIN)
    progress.stage(f"hardening of the {'sources' if direction == 1 else 'targets'} done")
    return lowrank_cost(cost, Q, R, g), Q, R, g, n_iter, start_value


def _self_transport_run(X, cost, cost_n, a, n_clusters, rng, progress=None):
    """Self-transport with the squared Euclidean cost, solved as the K-means problem it is.

    A hard plan ``Q = R`` costs twice the weighted K-means inertia: the
    partition of :func:`_kmeans_start` is hardened (Hartigan moves, which
    lower the inertia further). Returns ``(value, Q, R, g, n_sweeps,
    start_value)``: the hardening sweeps and the K-means partition's cost.
    """
    n = a.shape[0]
    start = _kmeans_start(X, a, n_clusters, rng)
    labels, n_sweeps = _harden(cost_n, start, a, n_clusters, progress=progress)
    values = []
    for lab in (start, labels):
        Q = np.zeros((n, n_clusters))
        Q[np.arange(n), lab] = a
        g = np.maximum(Q.sum(axis=0), G_MIN)
        values.append(lowrank_cost(cost, Q, Q, g))
    return values[1], Q, Q, g, n_sweeps, values[0]


def _polish_run(run, cost, cost_n, a, b, uniform, n_clusters, max_dense_entries):
    """Polish the plan of one run (see :func:`_polish`, :func:`_polish_weighted`).

    ``run`` is ``(value, Q, R, g, n_iter, gkms_value)``; the result has the same
    form, with the polished plan when that is cheaper.
    """
    value, Q, R, g, *rest = run
    n, m = Q.shape[0], R.shape[0]
    hard = np.count_nonzero(Q) == n and np.count_nonzero(R) == m
    if uniform and hard and n * m <= max_dense_entries:
        labels_q, labels_r, steps = _polish(
            cost_n, np.argmax(Q, axis=1), np.argmax(R, axis=1), n_clusters
        )
        if steps:
            Q = np.zeros((n, n_clusters))
            Q[np.arange(n), labels_q] = a
            R = np.zeros((m, n_clusters))
            R[np.arange(m), labels_r] = b
            g = np.maximum(Q.sum(axis=0), G_MIN)
            value = lowrank_cost(cost, Q, R, g)
    elif (n + m) * n_clusters <= _POLISH_LP_ENTRIES:
        Q, R, g, steps = _polish_weighted(
            cost_n, Q, R, a, b, move_masses=(n + n_clusters) * (m + n_clusters) <= max_dense_entries
        )
        if steps:
            value = lowrank_cost(cost, Q, R, g)
    return (value, Q, R, g, *rest)


def _in_user_units(cost, exponent, degree):
    """Format a cost computed on data divided by ``2**exponent`` in the data's units."""
    with np.errstate(over="ignore"):
        return f"{float(np.ldexp(cost, exponent * degree)) if exponent and degree else cost:.6g}"


@validate_params(
    {
        "X": ["array-like"],
        "X_target": ["array-like", None],
        "sample_weight": ["array-like", None],
        "target_weight": ["array-like", None],
        **PARAMETER_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)
def transport_clustering(
    X,
    X_target=None,
    *,
    n_clusters,
    metric="sqeuclidean",
    registration="auto",
    reg=1e-5,
    max_iter=250,
    step_size=2.0,
    init="kmeans",
    init_mix=0.5,
    n_init="auto",
    both_sides=True,
    refine="polish",
    sample_weight=None,
    target_weight=None,
    max_dense_entries=25_000_000,
    random_state=None,
    verbose=0,
):
    """Low-rank optimal transport between two point sets by transport clustering.

    Finds a plan of nonnegative rank ``n_clusters``, ``P = Q diag(1/g) R^T``,
    between the sources ``X`` and the targets ``X_target`` (a co-clustering of
    both sets into K co-clusters of matched mass): a full-rank registration
    followed by a generalized K-means problem on the registered cost.
    :class:`~skpapers.cluster.TransportClustering` is the estimator around
    this function; its docstring describes every parameter in full.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Source points, or the (n_samples, n_targets) cost matrix when
        ``metric="precomputed"``.
    X_target : array-like of shape (n_targets, n_features), default=None
        Target points; None means self-transport of ``X``.
    n_clusters : int
        Rank K of the plan.
    metric : str or callable, default="sqeuclidean"
        Ground cost: ``"sqeuclidean"`` (factored, O(n K d) per iteration), any
        :func:`scipy.spatial.distance.cdist` metric or callable (dense), or
        ``"precomputed"``.
    registration : {"auto", "exact", "sinkhorn", "hierarchical"}, default="auto"
        Full-rank registration (see :class:`~skpapers.cluster.TransportClustering`).
    reg : float, default=1e-5
        Final entropic regularisation of ``"sinkhorn"`` on the max-normalised cost.
    max_iter : int, default=250
        Maximum number of generalized K-means iterations per run.
    step_size : float, default=2.0
        ``gamma_0`` of the mirror-descent step.
    init : {"kmeans", "random"} or array-like of shape (n_samples, n_clusters), \
            default="kmeans"
        Initial assignment of the sources.
    init_mix : float in [0, 1], default=0.5
        Weight of the random part of the initial assignment.
    n_init : int or "auto", default="auto"
        Number of restarts; the cheapest final plan is kept (a restart is
        polished only if it beats the best plan so far before polishing).
        ``"auto"``: 2 when the n x m cost matrix is formed (within
        ``max_dense_entries``), else 1.
    both_sides : bool, default=True
        Also cluster the target side and keep the cheaper plan.
    refine : {"polish", "harden", "none"}, default="polish"
        Finishing stages after generalized K-means: ``"harden"`` turns the soft
        assignment into a partition improved by single-point moves until none
        lowers the cost; ``"polish"`` then also updates both factors in turn at
        fixed co-cluster masses (exact marginals), and with unequal sizes or
        weights moves the masses too (Frank-Wolfe steps); ``"none"`` keeps the
        mirror-descent plan as in the paper. Self-transport with the squared
        Euclidean cost and ``init="kmeans"`` (other than ``"none"``) is solved
        as K-means: a K-means partition, hardened.
    sample_weight : array-like of shape (n_samples,), default=None
        Nonnegative source masses (normalised; uniform if None).
    target_weight : array-like of shape (n_targets,), default=None
        Nonnegative target masses (normalised; uniform if None).
    max_dense_entries : int, default=25_000_000
        The largest n x m matrix the function may form.
    random_state : int, RandomState instance or None, default=None
        Seeds K-means, the random part of the initialisation and the
        subsamples of ``"hierarchical"``.
    verbose : int, default=0
        0 silent; 1 one line per stage (registration, each clustering run,
        finishing) with the elapsed seconds; 2 also the objective of the
        generalized K-means iterations (at most every 2 s) and why they stopped.
        Lines go to the ``skpapers.transport`` logger.

    Returns
    -------
    Q : ndarray of shape (n_samples, n_clusters)
        Source factor, ``Q 1 = a`` (normalised source weights).
    R : ndarray of shape (n_targets, n_clusters)
        Target factor, ``R 1 = b``.
    g : ndarray of shape (n_clusters,)
        Co-cluster masses, ``Q^T 1 = R^T 1 = g``.
    result : TransportClusteringResult
        Cost, registration, its cost and method, and the iteration count.

    See Also
    --------
    skpapers.cluster.TransportClustering : The estimator (prediction of new
        points, pipelines).
    skpapers.metrics.lowrank_ot_cost : Cost of a low-rank plan.

    Examples
    --------
    >>> from skpapers.cluster import transport_clustering
    >>> from skpapers.datasets import make_shifted_gaussians
    >>> X, Y, _, _ = make_shifted_gaussians(200, n_clusters=4, sigma=0.1, random_state=0)
    >>> Q, R, g, result = transport_clustering(X, Y, n_clusters=4, random_state=0)
    >>> Q.shape, R.shape, g.shape
    ((200, 4), (200, 4), (4,))
    >>> bool(result.cost >= result.registration_cost)
    True
    """
    progress = Progress("transport", verbose)
    precomputed = metric == "precomputed"
    X = check_array(X, dtype=np.float64, order="C", ensure_min_samples=2)
    if precomputed and X_target is not None:
        raise ValueError(
            "metric='precomputed' takes the (n_sources, n_targets) cost matrix as X; "
            "X_target must be None."
        )
    Y = None
    if X_target is not None:
        Y = check_array(
            X_target, dtype=np.float64, order="C", ensure_min_samples=2, input_name="X_target"
        )
        if Y.shape[1] != X.shape[1]:
            raise ValueError(
                f"X_target has {Y.shape[1]} features, but X has {X.shape[1]} features; "
                "sources and targets must live in the same space."
            )
    self_transport = Y is None and not precomputed
    if self_transport and target_weight is not None:
        raise ValueError(
            "target_weight is given without X_target: in self-transport the targets are "
            "the sources and carry sample_weight. Pass X_target, or drop target_weight."
        )
    n = X.shape[0]
    m = X.shape[1] if precomputed else (n if Y is None else Y.shape[0])
    a = normalised_weights(sample_weight, n, "sample_weight")
    b = a if self_transport else normalised_weights(target_weight, m, "target_weight")
    if n_clusters > min(n, m):
        raise ValueError(
            f"n_clusters={n_clusters} must be at most min(n_samples, n_targets) = "
            f"{min(n, m)} (n_samples = {n}, n_targets = {m})."
        )
    kind, uniform = _resolve_registration(
        registration, metric, n, m, a, b, self_transport, max_dense_entries
    )
    if not isinstance(init, str):
        init = check_array(init, dtype=np.float64, input_name="init")
        if init.shape != (n, n_clusters) or np.any(init < 0):
            raise ValueError(
                f"init must be a nonnegative array of shape {(n, n_clusters)}, "
                f"got shape {init.shape}."
            )
    rng = check_random_state(random_state)
    # work in units where the largest coordinate (or cost) is about 1: dividing by a
    # power of two is exact, so the plan does not depend on the units of the data
    degree = _COST_DEGREE.get(metric) if isinstance(metric, str) else None
    exponent = 0 if degree is None else unit_exponent(X, Y)
    if exponent:
        X = np.ldexp(X, -exponent)
        Y = None if Y is None else np.ldexp(Y, -exponent)
    Yp = X if self_transport else Y

    # cost in user units (dense C or factors) and its normalised twin
    if metric == "sqeuclidean":
        cost = sqeuclidean_factors(X, Yp)
        scale = sqeuclidean_scale(X, Yp)
        cost_n = (cost[0] / scale, cost[1])
        C = cost[0] @ cost[1].T if kind in ("exact", "sinkhorn") else None
    else:
        C = X if precomputed else cdist(X, Yp, metric)
        if not np.all(np.isfinite(C)):
            raise ValueError(f"the {metric!r} cost between X and X_target is not finite.")
        cost = C
        scale = float(np.max(np.abs(C))) or 1.0
        cost_n = C / scale

    progress.stage(f"{n} sources, {m} targets, rank {n_clusters}: registration {kind!r}")
    plan, registration_cost = _register(
        kind, uniform, X, Yp, C, a, b, scale, reg, rng, step_size=step_size, max_iter=max_iter
    )
    shown = _in_user_units(registration_cost, exponent, degree)
    progress.stage(f"registration done (cost {shown})")
    sides = [(1, C), (2, C.T)] if precomputed else [(1, X), (2, Yp)]
    if self_transport or not both_sides:
        sides = sides[:1]

    if n_init == "auto":
        n_init = _N_INIT_DENSE if C is not None else 1
    best = None
    # self-transport with the squared Euclidean cost is K-means
    kmeans = self_transport and metric == "sqeuclidean" and refine != "none"
    kmeans = kmeans and isinstance(init, str) and init == "kmeans"
    # factored mode with hardening on many points: mirror descent on a subsample
    sampled = C is None and refine != "none" and n > _GKMS_SAMPLE
    for seed in rng.randint(np.iinfo(np.int32).max, size=n_init):
        if kmeans:
            run = _self_transport_run(
                X, cost, cost_n, a, n_clusters, np.random.RandomState(seed), progress
            )
            shown = _in_user_units(run[0], exponent, degree)
            progress.stage(f"K-means and hardening done (cost {shown})")
            if best is None or run[0] < best[0]:
                best = run
            continue
        run = None
        if sampled:
            run = _sampled_run(
                cost, cost_n, plan, sides, a, b, init, seed, n_clusters=n_clusters,
                progress=progress, init_mix=init_mix, step_size=step_size, max_iter=max_iter,
                patience=_GKMS_PATIENCE,
            )
        for direction, Z in [] if sampled else sides:
            candidates, n_iter = _cluster_one_side(
                cost_n,
                plan,
                direction,
                Z,
                a if direction == 1 else b,
                init,
                n_clusters=n_clusters,
                init_mix=init_mix,
                step_size=step_size,
                max_iter=max_iter,
                harden=refine != "none",
                patience=_GKMS_PATIENCE if C is None else None,
                rng=np.random.RandomState(seed),
                progress=progress,
            )
            progress.stage(f"clustering of the {'sources' if direction == 1 else 'targets'} done")
            gkms_value = None
            for Q, R in candidates:
                g = np.maximum(Q.sum(axis=0), G_MIN)
                value = lowrank_cost(cost, Q, R, g)
                gkms_value = value if gkms_value is None else gkms_value
                if run is None or value < run[0]:
                    run = (value, Q, R, g, n_iter, gkms_value)
        # a restart is polished only if it already beats the best plan so far
        if refine == "polish" and (best is None or run[0] < best[0]):
            run = _polish_run(run, cost, cost_n, a, b, uniform, n_clusters, max_dense_entries)
            progress.stage(f"polishing done (cost {_in_user_units(run[0], exponent, degree)})")
        if best is None or run[0] < best[0]:
            best = run
    value, Q, R, g, n_iter, gkms_value = best
    routes = route_costs(cost, Q, R, g)
    if exponent and degree:
        with np.errstate(over="ignore"):
            value, registration_cost, gkms_value = (
                float(np.ldexp(v, exponent * degree))
                for v in (value, registration_cost, gkms_value)
            )
            routes = np.ldexp(routes, exponent * degree)
        if not np.isfinite(value):
            raise ValueError(
                f"the plan's cost in the units of X ({metric!r} cost of entries up to "
                f"2**{exponent}) is beyond the float64 range; rescale X (the plan "
                "itself does not depend on the units)."
            )
    progress.stage(f"done: cost {value:.6g}")
    result = TransportClusteringResult(
        cost=value,
        registration_cost=registration_cost,
        registration=plan.sigma,
        registration_method=kind,
        n_iter=int(n_iter),
        gkms_cost=gkms_value,
        route_costs=routes,
    )
    return Q, R, g, result
