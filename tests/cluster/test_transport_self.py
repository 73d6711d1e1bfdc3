# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Self-transport with the squared Euclidean cost: the K-means problem."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics import adjusted_rand_score

from skpapers.cluster import TransportClustering, transport_clustering
from skpapers.cluster._transport.generalized_kmeans import _ward_merge


def weighted_inertia(X, labels, w):
    """``sum_i w_i ||x_i - mu_{label_i}||^2`` with weighted cluster means."""
    total = 0.0
    for k in np.unique(labels):
        Xk, wk = X[labels == k], w[labels == k]
        mu = wk @ Xk / wk.sum()
        total += wk @ np.sum((Xk - mu) ** 2, axis=1)
    return total


@pytest.mark.parametrize("K", [1, 3, 7])
def test_plan_is_the_hardened_kmeans_partition(K):
    X, _ = make_blobs(150, centers=5, random_state=3)
    w = np.random.RandomState(0).uniform(0.5, 2.0, 150)
    Q, R, g, result = transport_clustering(X, n_clusters=K, sample_weight=w, random_state=0)
    a = w / w.sum()
    labels = np.argmax(Q, axis=1)
    # a hard plan Q = R: each row holds its whole mass in one co-cluster
    np.testing.assert_array_equal(Q, R)
    np.testing.assert_allclose(Q.max(axis=1), a, rtol=0, atol=0)
    np.testing.assert_allclose(g, np.bincount(labels, weights=a, minlength=K), rtol=1e-12)
    # its cost is twice the weighted K-means inertia (normalised weights)
    assert result.cost == pytest.approx(2 * weighted_inertia(X, labels, a), rel=1e-10)
    # hardening starts from the K-means partition and never raises its cost
    assert result.cost <= result.gkms_cost * (1 + 1e-12)
    assert result.n_iter >= 1  # hardening sweeps (the last one moves nothing)


@pytest.mark.parametrize("name, K, seed", [("moons", 50, 30), ("blobs", 12, 31)])
def test_weighted_cost_at_most_kmeans(name, K, seed):
    n = 600
    if name == "moons":
        X, _ = make_moons(n, noise=0.1, random_state=seed)
    else:
        X, _ = make_blobs(n, centers=20, n_features=3, random_state=seed)
    w = np.random.RandomState(seed).uniform(0.2, 3.0, n)
    km = KMeans(K, n_init=10, random_state=seed).fit(X, sample_weight=w)
    _, _, _, result = transport_clustering(X, n_clusters=K, sample_weight=w, random_state=seed)
    assert result.cost <= 1.01 * 2 * km.inertia_ / w.sum()


def test_estimator_self_transport_matches_kmeans_labels():
    X, _ = make_blobs(400, centers=6, cluster_std=0.4, random_state=5)
    tc = TransportClustering(6, random_state=0).fit(X)
    km = KMeans(6, n_init=10, random_state=0).fit(X)
    assert adjusted_rand_score(km.labels_, tc.labels_) == 1.0
    assert tc.cost_ == pytest.approx(2 * km.inertia_ / 400, rel=1e-10)


def test_refine_none_keeps_mirror_descent():
    # the paper's plan: generalized K-means by mirror descent, a soft Q
    X, _ = make_blobs(120, centers=4, random_state=2)
    Q, _, _, result = transport_clustering(X, n_clusters=4, refine="none", random_state=0)
    assert np.count_nonzero(Q) > Q.shape[0]
    assert result.cost == result.gkms_cost


def test_ward_merge_equals_scipy_ward_with_equal_masses():
    centers = np.random.RandomState(0).standard_normal((24, 3))
    ours = _ward_merge(centers, np.ones(24), 5)
    ref = fcluster(linkage(centers, "ward"), 5, criterion="maxclust")
    assert adjusted_rand_score(ref, ours) == 1.0
    assert set(ours) == set(range(5))


def test_ward_merge_weights_pull_the_merge():
    # merging i and j costs g_i g_j / (g_i + g_j) ||mu_i - mu_j||^2: with equal
    # masses an end joins the middle centre (1.625 < 2); a heavy middle centre
    # makes that cost about 3.2 and the two light ends merge instead
    centers = np.array([[0.0, 1.0], [0.0, -1.0], [1.5, 0.0]])
    np.testing.assert_array_equal(_ward_merge(centers, [1.0, 1.0, 1.0], 2), [0, 1, 0])
    np.testing.assert_array_equal(_ward_merge(centers, [1.0, 1.0, 100.0], 2), [0, 0, 1])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), L=st.integers(2, 12), data=st.data())
def test_ward_merge_returns_contiguous_groups_of_zero_mass_too(seed, L, data):
    K = data.draw(st.integers(1, L))
    rng = np.random.RandomState(seed)
    masses = rng.uniform(0, 1, L) * (rng.uniform(size=L) > 0.3)
    labels = _ward_merge(rng.standard_normal((L, 2)), masses, K)
    assert labels.shape == (L,)
    np.testing.assert_array_equal(np.unique(labels), np.arange(K))
