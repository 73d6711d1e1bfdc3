# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Large-n paths of transport clustering: hierarchical registration, fast hardening, subsample."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist
from sklearn.datasets import make_blobs

from skpapers.cluster import transport_clustering
from skpapers.cluster._transport import solver
from skpapers.cluster._transport.cost import sqeuclidean_factors
from skpapers.cluster._transport.polish import _FactoredState, _harden
from skpapers.cluster._transport.registration import _hierarchical_assignment
from skpapers.datasets import make_shifted_gaussians


def bijection_cost(X, Y, sigma):
    return float(np.mean(np.sum((X - Y[sigma]) ** 2, axis=1)))


@pytest.mark.parametrize("d, seed", [(10, 9101), (50, 9102)])
def test_hierarchical_registration_within_one_percent_of_exact(d, seed):
    # two levels of splits (n > 2 leaves of 1024) on clusters a cut must go through
    X, Y, _, _ = make_shifted_gaussians(2100, d, sigma=0.3, random_state=seed)
    sigma = _hierarchical_assignment(X, Y, np.random.RandomState(seed))
    assert np.array_equal(np.sort(sigma), np.arange(2100))
    rows, cols = linear_sum_assignment(cdist(X, Y, "sqeuclidean"))
    exact = float(np.mean(np.sum((X[rows] - Y[cols]) ** 2, axis=1)))
    assert exact <= bijection_cost(X, Y, sigma) <= 1.01 * exact


@settings(max_examples=15, deadline=None)
@given(n=st.integers(70, 260), d=st.integers(1, 6), seed=st.integers(0, 2**31 - 1))
def test_seams_never_raise_the_registration_cost(n, d, seed):
    X = np.random.RandomState(seed).standard_normal((n, d))
    Y = X + np.random.RandomState(seed + 1).standard_normal((n, d))
    kwargs = dict(leaf_size=32, sample_size=64, max_iter=30)
    plain = _hierarchical_assignment(X, Y, np.random.RandomState(seed), seams=False, **kwargs)
    seamed = _hierarchical_assignment(X, Y, np.random.RandomState(seed), seams=True, **kwargs)
    assert np.array_equal(np.sort(seamed), np.arange(n))
    assert bijection_cost(X, Y, seamed) <= bijection_cost(X, Y, plain) * (1 + 1e-12)


@pytest.mark.parametrize("uniform", [True, False])
def test_factored_hardening_equals_dense_hardening(uniform):
    rng = np.random.RandomState(9201)
    X, _ = make_blobs(400, centers=6, n_features=3, random_state=9201)
    Y = X + rng.normal(0, 0.5, X.shape)
    A, B = sqeuclidean_factors(X, Y)
    w = np.full(400, 1 / 400) if uniform else rng.uniform(0.5, 1.5, 400) / 400
    start = rng.randint(0, 8, 400)
    dense, _ = _harden(A @ B.T, start, w, 8)
    factored, sweeps = _harden((A, B), start, w, 8)
    assert sweeps > 1
    np.testing.assert_array_equal(dense, factored)


def test_subsampled_mirror_descent_close_to_full(monkeypatch):
    # factored mode (no polishing): mirror descent on 300 of 900 pairs, then all points
    X, Y, _, _ = make_shifted_gaussians(900, 8, sigma=0.3, random_state=9301)
    kwargs = dict(n_clusters=10, max_dense_entries=10_000, random_state=9301)
    *_, full = transport_clustering(X, Y, **kwargs)
    monkeypatch.setattr(solver, "_GKMS_SAMPLE", 300)
    Q, R, g, sampled = transport_clustering(X, Y, **kwargs)
    assert sampled.registration_method == "hierarchical"
    a = np.full(900, 1 / 900)
    np.testing.assert_allclose(Q.sum(axis=1), a, rtol=1e-12)
    np.testing.assert_allclose(R.sum(axis=1), a, rtol=1e-12)
    np.testing.assert_allclose(Q.sum(axis=0), R.sum(axis=0), rtol=1e-12)
    assert np.count_nonzero(Q) == 900  # hard co-clusters
    assert sampled.cost <= 1.01 * full.cost


@pytest.mark.parametrize("offset", [0.0, 300.0])
def test_float32_scoring_moves_like_float64(offset):
    # equal masses: the factored sweeps score in float32 and rescore near-ties in
    # float64; far from the origin the factors' |x|^2 columns are large
    rng = np.random.RandomState(9401)
    X, _ = make_blobs(1500, centers=12, n_features=6, cluster_std=2.0, random_state=9401)
    X += offset
    Y = X + rng.normal(0, 1.0, X.shape)
    A, B = sqeuclidean_factors(X, Y)
    A /= np.max(A @ B.T)  # the solver's normalised cost
    w = np.full(1500, 1 / 1500)
    start = rng.randint(0, 16, 1500)
    dense, dense_sweeps = _harden(A @ B.T, start, w, 16)
    factored, sweeps = _harden((A, B), start, w, 16)
    assert sweeps == dense_sweeps > 2
    np.testing.assert_array_equal(dense, factored)


def test_cluster_sums_updated_from_movers_match_recomputed():
    rng = np.random.RandomState(9501)
    A, B = rng.standard_normal((300, 5)), rng.standard_normal((300, 5))
    w = rng.uniform(0.5, 1.5, 300) / 300
    labels = rng.randint(0, 7, 300)
    state = _FactoredState(A, B, w, labels, 7)
    for _ in range(20):
        new = labels.copy()
        new[rng.choice(300, 15, replace=False)] = rng.randint(0, 7, 15)
        state, labels = state.moved(new), new
    fresh = _FactoredState(A, B, w, labels, 7)
    for name in ("MA", "MB", "g", "s"):
        np.testing.assert_allclose(getattr(state, name), getattr(fresh, name), atol=1e-12)


@pytest.mark.parametrize("seed", [9601, 9602])
def test_more_restarts_never_cost_more(seed):
    # restart r uses the same seed whatever n_init, and the cheapest polished plan is kept
    X, Y, _, _ = make_shifted_gaussians(240, 6, sigma=0.8, random_state=seed)
    costs = [transport_clustering(X, Y, n_clusters=9, n_init=k, random_state=seed)[3].cost
             for k in (1, 2, 3)]
    assert costs[2] <= costs[1] <= costs[0]


def test_subsampled_fit_hardens_only_the_cheaper_start(monkeypatch, caplog):
    # both sides get a start (mirror descent on 300 of 900 pairs); only the cheaper is hardened
    import logging

    X, Y, _, _ = make_shifted_gaussians(900, 8, sigma=0.3, random_state=9302)
    monkeypatch.setattr(solver, "_GKMS_SAMPLE", 300)
    with caplog.at_level(logging.INFO, logger="skpapers.transport"):
        *_, result = transport_clustering(
            X, Y, n_clusters=10, max_dense_entries=10_000, refine="harden", random_state=0,
            verbose=1,
        )
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "start of the sources done" in text and "start of the targets done" in text
    assert text.count("hardening of the") == 1
    assert result.cost <= result.gkms_cost  # the start's cost, hardening never raises it
