# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic transport problems of Schmidt, Halmos and Raphael (2026).

Parameters the paper leaves unspecified (cluster sizes, the moons' scaling, the
Gaussians' spread, SBM edge weights) are chosen here and documented in each
generator's Notes.
"""

import numbers

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import shortest_path
from sklearn.datasets import make_moons
from sklearn.utils import check_random_state

from skpapers.utils._memory import GENERATED_MAX_ENTRIES, check_generated_size
from skpapers.utils._sklearn import Interval, validate_params

__all__ = [
    "make_fragmented_hypercube",
    "make_moons_to_gaussians",
    "make_sbm_cost",
    "make_shifted_gaussians",
]


def _labels_with_all_clusters(n_samples, n_clusters, rng):
    """Random labels in which every cluster appears at least once."""
    labels = np.concatenate(
        [np.arange(n_clusters), rng.randint(n_clusters, size=n_samples - n_clusters)]
    )
    return labels[rng.permutation(n_samples)]


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "sigma": [Interval(numbers.Real, 0, None, closed="left")],
        "tau": [Interval(numbers.Real, 0, None, closed="left")],
        "max_dense_entries": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_shifted_gaussians(
    n_samples=5000,
    n_clusters=250,
    *,
    sigma=0.1,
    tau=0.1,
    random_state=None,
    max_dense_entries=GENERATED_MAX_ENTRIES,
):
    """Planted co-clusters: Gaussian clusters shifted by one random vector each.

    Cluster k has mean ``e_k`` in ``R^k`` (k = ``n_clusters``) and per-coordinate
    standard deviation ``sigma / sqrt(k)``; every target is its source moved by
    its cluster's shift ``delta_k ~ N(0, tau^2 / k I)``, and the targets are
    returned shuffled.

    Parameters
    ----------
    n_samples : int, default=5000
        Number of sources (= number of targets); at least ``n_clusters``.
    n_clusters : int, default=250
        Number of planted clusters, also the dimension.
    sigma : float, default=0.1
        Cluster spread.
    tau : float, default=0.1
        Scale of the per-cluster shift.
    random_state : int, RandomState instance or None, default=None
        Seed.
    max_dense_entries : int or None, default=250_000_000
        Largest single array the generator may allocate, in entries (float64:
        2 GB by default); a ValueError is raised before allocating beyond it.
        It caps one array, not the total: the peak memory of a call is about
        3.3 times its largest array. ``None``: no limit.

    Returns
    -------
    X : ndarray of shape (n_samples, n_clusters)
        Sources.
    Y : ndarray of shape (n_samples, n_clusters)
        Targets (shuffled).
    labels_x : ndarray of shape (n_samples,)
        Planted cluster of every source.
    labels_y : ndarray of shape (n_samples,)
        Planted cluster of every target.

    See Also
    --------
    skpapers.cluster.TransportClustering : Recovers the co-clusters.

    Notes
    -----
    The paper's "SG" family (k = 250, sigma in {0.1, 0.2, 0.3}, tau = 0.1). It
    speaks of random cluster sizes without a distribution: here every point
    draws its cluster uniformly (multinomial sizes), with every cluster
    non-empty.

    Examples
    --------
    >>> from skpapers.datasets import make_shifted_gaussians
    >>> X, Y, lx, ly = make_shifted_gaussians(100, 5, random_state=0)
    >>> X.shape, Y.shape
    ((100, 5), (100, 5))
    """
    check_generated_size([(n_samples, n_clusters), (n_clusters, n_clusters)], max_dense_entries)
    if n_samples < n_clusters:
        raise ValueError(f"n_samples={n_samples} must be at least n_clusters={n_clusters}.")
    rng = check_random_state(random_state)
    k = n_clusters
    labels = _labels_with_all_clusters(n_samples, k, rng)
    X = np.eye(k)[labels] + rng.standard_normal((n_samples, k)) * (sigma / np.sqrt(k))
    shifts = rng.standard_normal((k, k)) * (tau / np.sqrt(k))
    Y = X + shifts[labels]
    perm = rng.permutation(n_samples)
    return X, Y[perm], labels, labels[perm]


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 8, None, closed="left")],
        "noise": [Interval(numbers.Real, 0, None, closed="left")],
        "radius": [Interval(numbers.Real, 0, None, closed="neither")],
        "gaussian_std": [Interval(numbers.Real, 0, None, closed="left")],
        "max_dense_entries": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_moons_to_gaussians(
    n_samples=5000, *, noise=0.1, radius=5.0, gaussian_std=0.5, random_state=None,
    max_dense_entries=GENERATED_MAX_ENTRIES,
):
    """Two moons (sources) and eight Gaussians on a ring (targets), "2M-8G".

    Parameters
    ----------
    n_samples : int, default=5000
        Number of sources and of targets.
    noise : float, default=0.1
        Standard deviation of the noise of :func:`sklearn.datasets.make_moons`.
    radius : float, default=5.0
        Radius of the ring of Gaussian means.
    gaussian_std : float, default=0.5
        Standard deviation of every Gaussian.
    random_state : int, RandomState instance or None, default=None
        Seed.
    max_dense_entries : int or None, default=250_000_000
        Largest single array the generator may allocate, in entries (float64:
        2 GB by default); a ValueError is raised before allocating beyond it.
        It caps one array, not the total: the peak memory of a call is about
        4.5 times its largest array. ``None``: no limit.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        Two-moons sources.
    Y : ndarray of shape (n_samples, 2)
        Eight-Gaussians targets.
    labels_x : ndarray of shape (n_samples,)
        Moon (0 or 1) of every source.
    labels_y : ndarray of shape (n_samples,)
        Gaussian (0 to 7) of every target.

    See Also
    --------
    make_shifted_gaussians : Planted co-clusters.

    Notes
    -----
    The authors draw moons with torchdyn's generator; its scaling and the
    Gaussians' spread are not given in the paper. Here the moons are
    ``3 * make_moons(noise=noise) - 1`` (the flow-matching convention) and the
    Gaussians have standard deviation ``gaussian_std`` around
    ``radius * (cos, sin)(2 pi j / 8)``.

    Examples
    --------
    >>> from skpapers.datasets import make_moons_to_gaussians
    >>> X, Y, lx, ly = make_moons_to_gaussians(80, random_state=0)
    >>> X.shape, Y.shape
    ((80, 2), (80, 2))
    """
    check_generated_size((n_samples, 2), max_dense_entries)
    rng = check_random_state(random_state)
    X, labels_x = make_moons(n_samples, noise=noise, random_state=rng)
    X = 3.0 * X - 1.0
    labels_y = rng.randint(8, size=n_samples)
    angles = 2 * np.pi * np.arange(8) / 8
    centers = radius * np.column_stack([np.cos(angles), np.sin(angles)])
    Y = centers[labels_y] + gaussian_std * rng.standard_normal((n_samples, 2))
    return X, Y, labels_x, labels_y


@validate_params(
    {
        "n_blocks": [Interval(numbers.Integral, 1, None, closed="left")],
        "block_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "p_intra": [Interval(numbers.Real, 0, 1, closed="both")],
        "p_inter": [Interval(numbers.Real, 0, 1, closed="both")],
        "max_dense_entries": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_sbm_cost(
    n_blocks=10,
    block_size=50,
    *,
    p_intra=0.5,
    p_inter=0.01,
    random_state=None,
    max_dense_entries=GENERATED_MAX_ENTRIES,
):
    """Shortest-path cost of a weighted stochastic block model graph.

    Parameters
    ----------
    n_blocks : int, default=10
        Number of planted blocks.
    block_size : int, default=50
        Nodes per block.
    p_intra : float, default=0.5
        Edge probability inside a block.
    p_inter : float, default=0.01
        Edge probability between blocks.
    random_state : int, RandomState instance or None, default=None
        Seed.
    max_dense_entries : int or None, default=250_000_000
        Largest single array the generator may allocate, in entries (float64:
        2 GB by default); a ValueError is raised before allocating beyond it.
        It caps one array, not the total: the peak memory of a call is about
        3.3 times its largest array. ``None``: no limit.

    Returns
    -------
    C : ndarray of shape (n_blocks * block_size, n_blocks * block_size)
        Symmetric shortest-path distances (zero diagonal).
    labels : ndarray of shape (n_blocks * block_size,)
        Block of every node.

    See Also
    --------
    skpapers.cluster.TransportClustering : With ``metric="precomputed"``.

    Notes
    -----
    Edge weights are drawn uniformly in [1, 2] (the paper says "uniform edge
    weights" without a range). Unreachable pairs (a disconnected graph) get
    twice the largest finite distance.

    Examples
    --------
    >>> from skpapers.datasets import make_sbm_cost
    >>> C, labels = make_sbm_cost(3, 10, random_state=0)
    >>> C.shape
    (30, 30)
    """
    n = n_blocks * block_size
    check_generated_size((n, n), max_dense_entries)
    rng = check_random_state(random_state)
    n = n_blocks * block_size
    labels = np.repeat(np.arange(n_blocks), block_size)
    prob = np.where(labels[:, None] == labels[None, :], p_intra, p_inter)
    upper = np.triu(rng.uniform(size=(n, n)) < prob, k=1)
    weights = np.where(upper, rng.uniform(1.0, 2.0, size=(n, n)), 0.0)
    C = shortest_path(sparse.csr_matrix(weights), directed=False)
    finite = np.isfinite(C)
    if not finite.all():
        C[~finite] = 2.0 * C[finite].max() if C[finite].max() > 0 else 1.0
    return C, labels


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_features": [Interval(numbers.Integral, 2, None, closed="left")],
        "max_dense_entries": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_fragmented_hypercube(
    n_samples=1000, n_features=30, *, random_state=None, max_dense_entries=GENERATED_MAX_ENTRIES
):
    """Fragmented hypercube of Forrow et al. (2019), with W2^2 = 8.

    Sources are uniform on ``[-1, 1]^d``; targets are an independent uniform
    sample pushed by ``T(x) = x + 2 sign(x) * (e_1 + e_2)``, the optimal map, so
    the squared 2-Wasserstein distance between the two distributions is 8.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of sources and of targets.
    n_features : int, default=30
        Dimension d (at least 2).
    random_state : int, RandomState instance or None, default=None
        Seed.
    max_dense_entries : int or None, default=250_000_000
        Largest single array the generator may allocate, in entries (float64:
        2 GB by default); a ValueError is raised before allocating beyond it.
        It caps one array, not the total: the peak memory of a call is about
        3.0 times its largest array. ``None``: no limit.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Sources.
    Y : ndarray of shape (n_samples, n_features)
        Targets.

    See Also
    --------
    make_shifted_gaussians : Planted co-clusters.

    References
    ----------
    .. [1] A. Forrow, J.-C. Huetter, M. Nitzan, P. Rigollet, G. Schiebinger,
       J. Weed, "Statistical optimal transport via factored couplings",
       AISTATS 2019.

    Examples
    --------
    >>> from skpapers.datasets import make_fragmented_hypercube
    >>> X, Y = make_fragmented_hypercube(50, 4, random_state=0)
    >>> X.shape, Y.shape
    ((50, 4), (50, 4))
    """
    check_generated_size((n_samples, n_features), max_dense_entries)
    rng = check_random_state(random_state)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    Z = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    Y = Z.copy()
    Y[:, :2] += 2.0 * np.sign(Z[:, :2])
    return X, Y
