# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Hardening and polishing of transport clustering: cost against peers, feasibility."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs, make_moons

from skpapers.cluster import TransportClustering, transport_clustering
from skpapers.cluster._transport import polish
from skpapers.cluster._transport.cost import sqeuclidean_factors
from skpapers.cluster._transport.polish import _flow_lp, _harden, _polish
from skpapers.metrics import lowrank_ot_cost


def clouds(n, d, seed, k0=15):
    """Gaussian clouds whose planted cluster count differs from the rank."""
    rng = np.random.RandomState(seed)
    centers = rng.uniform(-10, 10, (k0, d))
    X, _ = make_blobs(n, centers=centers, random_state=rng)
    Y, _ = make_blobs(n, centers=centers + rng.normal(0, 1, (k0, d)), random_state=rng)
    return X, Y


def marginal_error(Q, R, g, a, b):
    return np.abs(Q @ (R.sum(0) / g) - a).sum() + np.abs(R @ (Q.sum(0) / g) - b).sum()


@pytest.mark.parametrize("d, K, seed", [(10, 25, 7101), (50, 25, 7102)])
def test_cost_at_most_pot_best_on_hard_cells(d, K, seed):
    import ot
    n = 300
    X, Y = clouds(n, d, seed)
    C = ot.dist(X, Y)
    root = np.sqrt(C.max())
    pot = []
    for init in ("kmeans", "random"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Q, R, g = ot.lowrank_sinkhorn(
                X / root, Y / root, reg=0, rank=K, rescale_cost=False, init=init, seed_init=seed
            )
        pot.append(lowrank_ot_cost(C, Q, R, g))
    est = TransportClustering(K, random_state=seed).fit(X, X_target=Y)
    ours = lowrank_ot_cost(C, est.Q_, est.R_, est.g_)
    assert ours == pytest.approx(est.cost_, rel=1e-10)
    assert ours <= 1.01 * min(pot)
    a = np.full(n, 1 / n)
    assert marginal_error(est.Q_, est.R_, est.g_, a, a) < 1e-12


@pytest.mark.parametrize(
    "name, K, seed", [("moons", 50, 8101), ("blobs", 10, 8102), ("blobs", 40, 8103)]
)
def test_self_transport_matches_kmeans_cost(name, K, seed):
    n = 500
    if name == "moons":
        X, _ = make_moons(n, noise=0.1, random_state=seed)
    else:
        X, _ = make_blobs(n, centers=15, n_features=5, random_state=seed)
    km = KMeans(K, n_init=10, random_state=seed).fit(X)
    Q, R, g, result = transport_clustering(X, n_clusters=K, random_state=seed)
    # a hard plan Q = R of the K-means partition costs twice the inertia over n
    assert result.cost <= 1.01 * 2 * km.inertia_ / n
    assert marginal_error(Q, R, g, np.full(n, 1 / n), np.full(n, 1 / n)) < 1e-12


def test_refine_stages_only_lower_the_cost():
    X, Y = clouds(200, 10, 9001)
    costs = {}
    for refine in ("none", "harden", "polish"):
        Q, R, g, result = transport_clustering(X, Y, n_clusters=12, refine=refine,
                                               random_state=0)
        costs[refine] = result.cost
        assert result.gkms_cost >= result.cost - 1e-12 * result.cost
        assert marginal_error(Q, R, g, np.full(200, 1 / 200), np.full(200, 1 / 200)) < 1e-12
    assert costs["none"] >= costs["harden"] >= costs["polish"]
    # the paper's plan: no finishing stage
    _, _, _, result = transport_clustering(X, Y, n_clusters=12, refine="none", random_state=0)
    assert result.cost == result.gkms_cost


def test_refine_weighted_plans_stay_feasible():
    X, Y = clouds(120, 4, 9002)
    rng = np.random.RandomState(0)
    a, b = rng.uniform(0.5, 1.5, 120), rng.uniform(0.5, 1.5, 90)
    costs = {}
    for refine in ("harden", "polish"):
        Q, R, g, result = transport_clustering(X, Y[:90], n_clusters=6, sample_weight=a,
                                               target_weight=b, refine=refine, random_state=0)
        assert marginal_error(Q, R, g, a / a.sum(), b / b.sum()) < 1e-12
        costs[refine] = result.cost
    # the weighted polishing (exact linear programs) never raises the cost
    assert costs["polish"] <= costs["harden"] * (1 + 1e-12)


def lognormal_three_to_one(seed):
    """900 sources against 300 targets, log-normal weights (the W table's family)."""
    rng = np.random.RandomState(seed)
    centers = rng.uniform(-10, 10, (15, 10))
    X, _ = make_blobs(900, centers=centers, random_state=rng)
    Y, _ = make_blobs(300, centers=centers + rng.normal(0, 1, (15, 10)), random_state=rng)
    return X, Y, rng.lognormal(0, 1, 900), rng.lognormal(0, 1, 300)


def test_weighted_polish_moves_the_cocluster_masses(monkeypatch):
    # seed 1101 (not a benchmark seed): with the joint flow step the plan costs
    # 182.61; without it (fixed co-cluster masses, the previous polish) 186.43
    X, Y, a, b = lognormal_three_to_one(1101)
    fit = TransportClustering(10, random_state=0).fit(X, X_target=Y, sample_weight=a,
                                                       target_weight=b)
    assert marginal_error(fit.Q_, fit.R_, fit.g_, a / a.sum(), b / b.sum()) < 1e-12
    # the flow step replaced by the all-in-one-co-cluster plan, never cheaper: never kept
    one = np.eye(10)[0]
    monkeypatch.setattr(polish, "_flow_lp",
                        lambda Dq, Dr, a, b: (np.outer(a, one), np.outer(b, one)))
    fixed = TransportClustering(10, random_state=0).fit(X, X_target=Y, sample_weight=a,
                                                         target_weight=b)
    assert fit.cost_ < 0.985 * fixed.cost_
    assert np.abs(np.sort(fit.g_) - np.sort(fixed.g_)).max() > 1e-3


def test_flow_lp_is_feasible_and_beats_any_feasible_plan():
    rng = np.random.RandomState(3)
    n, m, K = 30, 20, 4
    a, b = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(m))
    Dq, Dr = rng.standard_normal((n, K)), rng.standard_normal((m, K))
    Q, R = _flow_lp(Dq, Dr, a, b)
    assert np.allclose(Q.sum(1), a, atol=1e-12) and np.allclose(R.sum(1), b, atol=1e-12)
    assert np.allclose(Q.sum(0), R.sum(0), atol=1e-12) and Q.min() >= 0 and R.min() >= 0
    value = np.sum(Dq * Q) + np.sum(Dr * R)
    # feasible plans with other co-cluster masses: spread by g, or all through one hub
    g = rng.dirichlet(np.ones(K))
    assert value <= a @ Dq @ g + b @ Dr @ g + 1e-12
    assert value <= min(a @ Dq[:, k] + b @ Dr[:, k] for k in range(K)) + 1e-12


def test_refine_rejects_unknown_option():
    with pytest.raises(ValueError, match="refine"):
        TransportClustering(3, refine="round").fit(np.arange(20.0).reshape(10, 2))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), K=st.integers(2, 6))
def test_harden_and_polish_never_increase_the_cost(seed, K):
    rng = np.random.RandomState(seed)
    n = 40
    X, Y = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)) + 1.0
    A, B = sqeuclidean_factors(X, Y)
    w = np.full(n, 1 / n)

    def cost_of(lq, lr):
        Q = np.zeros((n, K))
        Q[np.arange(n), lq] = w
        R = np.zeros((n, K))
        R[np.arange(n), lr] = w
        return lowrank_ot_cost((A, B), Q, R, np.maximum(Q.sum(0), 1e-18))

    start = rng.randint(K, size=n)
    # identity registration: source i and target i share a co-cluster
    before = cost_of(start, start)
    labels, _ = _harden((A, B), start, w, K)
    hardened = cost_of(labels, labels)
    assert hardened <= before * (1 + 1e-12)
    lq, lr, _ = _polish((A, B), labels, labels, K)
    assert cost_of(lq, lr) <= hardened * (1 + 1e-12)
    assert np.array_equal(np.bincount(lq, minlength=K), np.bincount(lr, minlength=K))


def test_fit_with_positional_targets_raises_type_error():
    X, Y = clouds(30, 2, 1)
    with pytest.raises(TypeError, match="X_target"):
        TransportClustering(3).fit(X, Y)


def test_target_weight_without_targets_is_an_error():
    X, _ = clouds(30, 2, 1)
    with pytest.raises(ValueError, match="target_weight"):
        TransportClustering(3).fit(X, target_weight=np.ones(30))
