# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of TransportClustering: feasibility, bounds, identities, recovery, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment, linprog
from scipy.sparse import eye, kron, vstack
from scipy.spatial.distance import cdist
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from skpapers.cluster import TransportClustering
from skpapers.cluster._transport.cost import sqeuclidean_factors
from skpapers.cluster._transport.generalized_kmeans import _gkms, _init_log_q
from skpapers.cluster._transport.solver import _Registration
from skpapers.datasets import make_sbm_cost, make_shifted_gaussians
from skpapers.metrics import lowrank_ot_cost
from skpapers.testing import assert_allclose_up_to_column_order, assert_same_partition


def _exact_ot_cost(C, a, b):
    """Independent exact OT: assignment for uniform n = m, else an LP."""
    n, m = C.shape
    if n == m and np.allclose(a, 1 / n) and np.allclose(b, 1 / m):
        r, c = linear_sum_assignment(C)
        return C[r, c].mean()
    A_eq = vstack([kron(eye(n), np.ones((1, m))), kron(np.ones((1, n)), eye(m))])
    res = linprog(C.ravel(), A_eq=A_eq, b_eq=np.r_[a, b], bounds=(0, None), method="highs")
    return res.fun


@pytest.fixture(scope="module")
def planted():
    return make_shifted_gaussians(400, n_clusters=8, sigma=0.1, random_state=3)


def _check_feasible(tc, a, b, tol=1e-8):
    P = tc.transport_plan()
    np.testing.assert_allclose(P.sum(axis=1), a, atol=tol)
    np.testing.assert_allclose(P.sum(axis=0), b, atol=tol)
    np.testing.assert_allclose(tc.Q_.sum(axis=1), a, atol=tol)
    np.testing.assert_allclose(tc.R_.sum(axis=1), b, atol=tol)
    np.testing.assert_allclose(tc.Q_.sum(axis=0), tc.g_, atol=tol)
    np.testing.assert_allclose(tc.R_.sum(axis=0), tc.g_, atol=tol)
    assert np.all(P >= 0)
    return P


@pytest.mark.parametrize("registration", ["exact", "sinkhorn", "hierarchical"])
def test_feasible_and_above_full_rank_ot(planted, registration):
    X, Y, _, _ = planted
    n = X.shape[0]
    tc = TransportClustering(8, registration=registration, random_state=0).fit(X, X_target=Y)
    a = np.full(n, 1 / n)
    P = _check_feasible(tc, a, a)
    C = cdist(X, Y, "sqeuclidean")
    ot = _exact_ot_cost(C, a, a)
    assert tc.cost_ >= ot - 1e-12
    assert tc.cost_ == pytest.approx(np.sum(P * C), rel=1e-10)
    # a bijection registration is optimal for "exact" and rounded for "sinkhorn"
    assert tc.registration_cost_ == pytest.approx(
        ot, rel=1e-9 if registration != "hierarchical" else 0.05
    )
    assert np.array_equal(np.sort(tc.registration_), np.arange(n))


@pytest.mark.parametrize("registration", ["auto", "sinkhorn"])
@pytest.mark.parametrize("m", [150, 60])
def test_kantorovich_registration_uneven_sizes(m, registration):
    rng = np.random.RandomState(0)
    X = rng.randn(200, 3)
    Y = rng.randn(m, 3) + 1.0
    w = rng.uniform(0.5, 2.0, size=200)
    tc = TransportClustering(4, registration=registration, random_state=0)
    tc.fit(X, X_target=Y, sample_weight=w)
    a, b = w / w.sum(), np.full(m, 1 / m)
    _check_feasible(tc, a, b)
    assert tc.registration_ is None
    C = cdist(X, Y, "sqeuclidean")
    ot = _exact_ot_cost(C, a, b)
    assert tc.cost_ >= ot - 1e-10
    assert tc.registration_cost_ >= ot - 1e-10
    if registration == "auto":  # small: the exact linear program
        assert tc.registration_cost_ == pytest.approx(ot, rel=1e-7)
    else:
        assert tc.registration_cost_ <= 1.02 * ot  # eps = 1e-5 Sinkhorn is nearly exact


def test_exact_kantorovich_registration_uneven_sizes():
    rng = np.random.RandomState(2)
    X, Y = rng.randn(60, 2), rng.randn(25, 2) + 0.5
    tc = TransportClustering(3, registration="exact", random_state=0).fit(X, X_target=Y)
    a, b = np.full(60, 1 / 60), np.full(25, 1 / 25)
    _check_feasible(tc, a, b)
    assert tc.registration_ is None
    C = cdist(X, Y, "sqeuclidean")
    ot = _exact_ot_cost(C, a, b)
    assert tc.registration_cost_ == pytest.approx(ot, rel=1e-7)
    assert tc.cost_ >= ot - 1e-10


def test_nearly_uniform_weights_are_not_rounded_to_uniform():
    rng = np.random.RandomState(0)
    X, Y = rng.randn(300, 2), rng.randn(300, 2)
    w = np.ones(300)
    w[:150] += 2e-6  # a change that np.allclose's default atol (1e-8) would hide
    tc = TransportClustering(2, random_state=0).fit(X, X_target=Y, sample_weight=w)
    assert tc.registration_ is None  # a coupling, not a bijection
    _check_feasible(tc, w / w.sum(), np.full(300, 1 / 300), tol=1e-13)


def test_exact_registration_weighted_equal_sizes():
    rng = np.random.RandomState(1)
    X, Y = rng.randn(40, 2), rng.randn(40, 2)
    w = rng.uniform(0.1, 1.0, 40)
    tc = TransportClustering(3, registration="exact", random_state=0)
    tc.fit(X, X_target=Y, sample_weight=w)
    a, b = w / w.sum(), np.full(40, 1 / 40)
    _check_feasible(tc, a, b)
    C = cdist(X, Y, "sqeuclidean")
    assert tc.registration_cost_ == pytest.approx(_exact_ot_cost(C, a, b), rel=1e-7)


def test_self_transport_is_kmeans():
    X, y = make_blobs(300, centers=4, cluster_std=0.5, random_state=0)
    tc = TransportClustering(4, random_state=0).fit(X)
    km = KMeans(4, n_init=10, random_state=0).fit(X)
    assert adjusted_rand_score(km.labels_, tc.labels_) == 1.0
    centers = np.array([X[tc.labels_ == k].mean(axis=0) for k in range(4)])
    inertia = np.sum((X - centers[tc.labels_]) ** 2)
    assert tc.cost_ == pytest.approx(2 * inertia / X.shape[0], rel=1e-4)  # Q is soft
    assert tc.registration_cost_ == 0.0
    np.testing.assert_array_equal(tc.labels_, tc.target_labels_)


def test_coclustering_identity_on_hard_partitions():
    """Spec 1: a hard co-cluster costs (within variances + s |mu_x - mu_y|^2) / n."""
    rng = np.random.RandomState(0)
    n, K = 60, 3
    X, Y = rng.randn(n, 2), rng.randn(n, 2) + 2
    lab = np.arange(n) % K
    Q = np.eye(K)[lab] / n
    R = np.eye(K)[rng.permutation(lab)] / n
    g = Q.sum(axis=0)
    lx, ly = np.argmax(Q, 1), np.argmax(R, 1)
    expected = 0.0
    for k in range(K):
        xs, ys = X[lx == k], Y[ly == k]
        mx, my = xs.mean(0), ys.mean(0)
        expected += (((xs - mx) ** 2).sum() + ((ys - my) ** 2).sum()) + len(xs) * (
            (mx - my) ** 2
        ).sum()
    C = cdist(X, Y, "sqeuclidean")
    assert lowrank_ot_cost(C, Q, R, g) == pytest.approx(expected / n, rel=1e-12)


@pytest.mark.filterwarnings("ignore:Dykstra did not converge:UserWarning")
def test_planted_recovery_and_beats_pot():
    import ot
    X, Y, lx, ly = make_shifted_gaussians(500, n_clusters=10, sigma=0.3, random_state=7)
    tc = TransportClustering(10, random_state=0).fit(X, X_target=Y)
    assert adjusted_rand_score(lx, tc.labels_) > 0.9
    assert adjusted_rand_score(ly, tc.target_labels_) > 0.9
    C = cdist(X, Y, "sqeuclidean")
    s = C.max()
    Q, R, g = ot.lowrank_sinkhorn(
        X / np.sqrt(s), Y / np.sqrt(s), rank=10, rescale_cost=False, seed_init=0
    )
    pot_cost = lowrank_ot_cost(C, np.asarray(Q), np.asarray(R), np.asarray(g))
    assert tc.cost_ < pot_cost


def test_gkms_dense_equals_factored():
    rng = np.random.RandomState(0)
    X, Y = rng.randn(80, 3), rng.randn(80, 3) + 0.5
    A, B = sqeuclidean_factors(X, Y)
    C = cdist(X, Y, "sqeuclidean")
    sigma = rng.permutation(80)
    a = np.full(80, 1 / 80)
    log_q0 = _init_log_q(X, a, 4, "random", 1.0, np.random.RandomState(1))
    Qd, nd = _gkms(C[:, sigma] / 10, log_q0, a, step_size=2.0, max_iter=60, tol=0)
    Qf, nf = _gkms((A / 10, B[sigma]), log_q0, a, step_size=2.0, max_iter=60, tol=0)
    assert nd == nf == 60
    np.testing.assert_allclose(Qd, Qf, atol=1e-10, rtol=0)


@pytest.mark.parametrize("direction", [1, 2])
@pytest.mark.parametrize("kind", ["sigma", "coupling"])
def test_registered_cost_dense_equals_factored(direction, kind):
    rng = np.random.RandomState(0)
    n = 30
    X, Y = rng.randn(n, 2), rng.randn(n, 2)
    A, B = sqeuclidean_factors(X, Y)
    C = A @ B.T
    a = rng.uniform(0.5, 1.5, n)
    a /= a.sum()
    b = np.full(n, 1 / n)
    if kind == "sigma":
        sigma = rng.permutation(n)
        reg = _Registration(b, b, sigma=sigma)
        P = np.eye(n)[sigma] / n  # P[i, sigma[i]] = 1/n
        a = b
        # C[:, sigma] equals n * C P^T
        np.testing.assert_allclose(reg.registered_cost(C, 1), n * C @ P.T, atol=1e-12)
    else:
        P = rng.uniform(size=(n, n))
        for _ in range(200):
            P *= (a / P.sum(1))[:, None]
            P *= (b / P.sum(0))[None, :]
        reg = _Registration(a, b, P=P)
    expected = C @ P.T / a[None, :] if direction == 1 else (P.T / b[:, None]) @ C
    for cost in (C, (A, B)):
        got = reg.registered_cost(cost, direction)
        dense = got[0] @ got[1].T if isinstance(got, tuple) else got
        np.testing.assert_allclose(dense, expected, atol=1e-10)


def test_factored_mode_equals_dense_mode(planted):
    X, Y, _, _ = planted
    dense = TransportClustering(8, registration="exact", random_state=0).fit(X, X_target=Y)
    factored = TransportClustering(8, max_dense_entries=1000, random_state=0).fit(X, X_target=Y)
    # n = 400 fits one leaf of "hierarchical": the same exact bijection, no n x m matrix
    np.testing.assert_array_equal(dense.registration_, factored.registration_)
    # the two modes compute the distances in another order: the co-clusters may be
    # numbered differently (a tie broken by rounding), the plan is the same
    order = assert_allclose_up_to_column_order(dense.Q_, factored.Q_, atol=1e-12)
    np.testing.assert_allclose(dense.R_, factored.R_[:, order], atol=1e-12)
    assert_same_partition(dense.labels_, factored.labels_)
    assert_same_partition(dense.target_labels_, factored.target_labels_)
    assert dense.cost_ == pytest.approx(factored.cost_, rel=1e-12)


def test_hierarchical_close_to_exact():
    X, Y, _, _ = make_shifted_gaussians(2100, n_clusters=10, sigma=0.2, random_state=0)
    tc = TransportClustering(10, registration="hierarchical", random_state=0).fit(X, X_target=Y)
    C = cdist(X, Y, "sqeuclidean")
    ot = _exact_ot_cost(C, np.full(2100, 1 / 2100), np.full(2100, 1 / 2100))
    assert np.array_equal(np.sort(tc.registration_), np.arange(2100))
    assert ot <= tc.registration_cost_ <= 1.02 * ot


def test_transform_score_and_predict(planted):
    X, Y, lx, ly = planted
    tc = TransportClustering(8, random_state=0).fit(X, X_target=Y)
    D = tc.transform(X)
    assert np.sum(tc.Q_ * D) == pytest.approx(tc.cost_, rel=1e-10)
    C = cdist(X, Y, "sqeuclidean")
    np.testing.assert_allclose(D, C @ tc.R_ / tc.g_, rtol=1e-10)
    assert tc.score(X) >= -tc.cost_ - 1e-12
    assert adjusted_rand_score(tc.predict(X), tc.labels_) == 1.0
    assert adjusted_rand_score(tc.predict_target(Y), tc.target_labels_) == 1.0
    assert tc.get_feature_names_out().tolist() == [f"transportclustering{k}" for k in range(8)]


@pytest.mark.parametrize("metric", ["euclidean", "cityblock"])
def test_dense_metrics(planted, metric):
    X, Y, lx, ly = planted
    tc = TransportClustering(8, metric=metric, random_state=0).fit(X, X_target=Y)
    C = cdist(X, Y, metric)
    a = np.full(X.shape[0], 1 / X.shape[0])
    _check_feasible(tc, a, a)
    assert tc.cost_ >= _exact_ot_cost(C, a, a) - 1e-12
    assert adjusted_rand_score(lx, tc.labels_) > 0.9
    np.testing.assert_allclose(tc.transform(X), C @ tc.R_ / tc.g_, rtol=1e-10)
    assert adjusted_rand_score(tc.predict_target(Y), tc.target_labels_) == 1.0


def test_precomputed_sbm_self_transport():
    C, labels = make_sbm_cost(4, 25, p_intra=0.6, p_inter=0.02, random_state=0)
    tc = TransportClustering(4, metric="precomputed", random_state=0).fit(C)
    assert adjusted_rand_score(labels, tc.labels_) > 0.9
    # identity is an optimal registration of a metric space onto itself
    assert tc.registration_cost_ == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(tc.transform(C), C @ tc.R_ / tc.g_)
    assert tc.cluster_centers_ is None


def test_deterministic_and_ties():
    X = np.repeat(np.random.RandomState(0).randn(20, 2), 3, axis=0)  # triplicated points
    Y = X[::-1] + 0.1
    fits = [TransportClustering(3, random_state=5).fit(X, X_target=Y) for _ in range(2)]
    np.testing.assert_array_equal(fits[0].Q_, fits[1].Q_)
    np.testing.assert_array_equal(fits[0].registration_, fits[1].registration_)
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)


def test_n_clusters_one():
    rng = np.random.RandomState(0)
    X, Y = rng.randn(10, 2), rng.randn(10, 2)
    tc = TransportClustering(1).fit(X, X_target=Y)
    C = cdist(X, Y, "sqeuclidean")
    assert tc.cost_ == pytest.approx(C.mean())  # the independent coupling a b^T
    assert np.all(tc.labels_ == 0)


def test_both_sides_keeps_cheaper(planted):
    X, Y, _, _ = planted
    one = TransportClustering(8, both_sides=False, random_state=0).fit(X, X_target=Y)
    both = TransportClustering(8, both_sides=True, random_state=0).fit(X, X_target=Y)
    assert both.cost_ <= one.cost_ + 1e-15


def test_init_array_and_random(planted):
    X, Y, lx, _ = planted
    init = np.eye(8)[lx]
    tc = TransportClustering(8, init=init, init_mix=0.1, random_state=0).fit(X, X_target=Y)
    assert adjusted_rand_score(lx, tc.labels_) == 1.0
    rnd = TransportClustering(8, init="random", n_init=2, random_state=0).fit(X, X_target=Y)
    assert rnd.cost_ >= tc.cost_ - 1e-12


def test_transport_plan_refused_above_the_memory_budget(planted):
    X, Y, _, _ = planted
    tc = TransportClustering(2, random_state=0).fit(X, X_target=Y)
    n, m = X.shape[0], Y.shape[0]
    tc.set_params(max_dense_entries=n * m - 1)
    with pytest.raises(ValueError, match=rf"dense {n} x {m} transport plan needs {n * m} entries"):
        tc.transport_plan()
    tc.set_params(max_dense_entries=n * m)
    assert tc.transport_plan().shape == (n, m)


def test_weighted_registration_refused_above_the_memory_budget():
    # unequal sizes or weights need the dense cost (network simplex or Sinkhorn)
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(60, 2)), rng.normal(size=(50, 2))
    w = rng.uniform(0.5, 2.0, 60)
    for registration in ("auto", "exact", "sinkhorn"):
        est = TransportClustering(2, registration=registration, max_dense_entries=60 * 50 - 1)
        with pytest.raises(ValueError, match="dense 60 x 50 cost matrix"):
            est.fit(X, X_target=Y, sample_weight=w)


def test_network_simplex_registration_is_the_exact_plan():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(70, 3)), rng.normal(size=(45, 3)) + 0.5
    w, v = rng.uniform(0.5, 2.0, 70), rng.uniform(0.5, 2.0, 45)
    C = cdist(X, Y, "sqeuclidean")
    a, b = w / w.sum(), v / v.sum()
    # "auto" registers unequal weighted sets exactly (the dense cost fits)
    est = TransportClustering(3, random_state=0).fit(X, X_target=Y, sample_weight=w,
                                                     target_weight=v)
    _check_feasible(est, a, b)
    assert est.registration_ is None  # a coupling, not a bijection
    assert est.registration_cost_ == pytest.approx(_exact_ot_cost(C, a, b), rel=1e-9)


def test_network_simplex_stopped_short_warns(monkeypatch):
    import ot

    from skpapers.cluster._transport.registration import _exact_ot

    def stopped(a, b, C, **kwargs):
        return np.outer(a, b), {"result_code": 3, "warning": "numItermax reached"}

    monkeypatch.setattr(ot, "emd", stopped)
    a, b = np.full(4, 0.25), np.full(2, 0.5)
    with pytest.warns(ConvergenceWarning, match="numItermax reached.*feasible coupling"):
        P = _exact_ot(np.ones((4, 2)), a, b)
    np.testing.assert_allclose(P.sum(axis=1), a)
    np.testing.assert_allclose(P.sum(axis=0), b)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(exponent=st.floats(-150, 150), weighted=st.booleans())
def test_plan_does_not_depend_on_the_units(exponent, weighted):
    X, Y, _, _ = make_shifted_gaussians(80, n_clusters=3, sigma=0.1, random_state=2)
    Y = Y[:60]
    w = np.random.default_rng(1).uniform(0.5, 2.0, 80) if weighted else None
    c = 10.0**exponent
    ref = TransportClustering(3, random_state=0).fit(X, X_target=Y, sample_weight=w)
    est = TransportClustering(3, random_state=0).fit(c * X, X_target=c * Y, sample_weight=w)
    # 10**exponent is not exact in binary: rounding may renumber the co-clusters
    assert_same_partition(est.labels_, ref.labels_)
    assert_same_partition(est.target_labels_, ref.target_labels_)
    assert est.cost_ / c**2 == pytest.approx(ref.cost_, rel=1e-6)
    self_ref = TransportClustering(3, random_state=0).fit(X)
    self_est = TransportClustering(3, random_state=0).fit(c * X)
    assert_same_partition(self_est.labels_, self_ref.labels_)
    assert np.all(np.isfinite(self_est.Q_))


def test_cost_beyond_the_float_range_is_a_clear_error():
    X, Y, _, _ = make_shifted_gaussians(40, n_clusters=2, sigma=0.1, random_state=0)
    with pytest.raises(ValueError, match="beyond the float64 range"):
        TransportClustering(2, random_state=0).fit(X * 1e160)


@pytest.mark.parametrize(
    "params, kwargs, match",
    [
        ({"n_clusters": 11}, {}, "n_clusters=11 must be at most"),
        ({"n_clusters": 2}, {"X_target": "nan"}, "NaN"),
        ({"n_clusters": 2}, {"X_target": "3d"}, "X_target has 3 features, but X has 2"),
        ({"n_clusters": 2}, {"sample_weight": "neg"}, "[Nn]egative"),
        ({"n_clusters": 2, "metric": "precomputed"}, {"X_target": "ok"}, "X_target must be None"),
        (
            {"n_clusters": 2, "metric": "euclidean", "max_dense_entries": 50},
            {"X_target": "ok"},
            "exceeds max_dense_entries=50. Use the factored mode",
        ),
        (
            {"n_clusters": 2, "registration": "hierarchical"},
            {"X_target": "short"},
            "needs metric='sqeuclidean', as many targets",
        ),
    ],
)
def test_errors(params, kwargs, match):
    rng = np.random.RandomState(0)
    X = rng.randn(10, 2)
    targets = {
        "ok": rng.randn(10, 2),
        "short": rng.randn(7, 2),
        "3d": rng.randn(10, 3),
        "nan": np.where(np.eye(10, 2, dtype=bool), np.nan, rng.randn(10, 2)),
    }
    fit_kwargs = {}
    if "X_target" in kwargs:
        fit_kwargs["X_target"] = targets[kwargs["X_target"]]
    if "sample_weight" in kwargs:
        fit_kwargs["sample_weight"] = -np.ones(10)
    X_in = cdist(X, X) if params.get("metric") == "precomputed" else X
    with pytest.raises(ValueError, match=match):
        TransportClustering(**params).fit(X_in, **fit_kwargs)


def test_nan_in_X_and_bad_init():
    X = np.ones((5, 2))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        TransportClustering(2).fit(X)
    with pytest.raises(ValueError, match="init must be a nonnegative array of shape"):
        TransportClustering(2, init=np.ones((4, 2))).fit(np.random.RandomState(0).randn(5, 2))


def test_inputs_not_modified(planted):
    X, Y, _, _ = planted
    Xc, Yc = X.copy(), Y.copy()
    w = np.ones(X.shape[0])
    TransportClustering(3, random_state=0).fit(X, X_target=Y, sample_weight=w)
    np.testing.assert_array_equal(X, Xc)
    np.testing.assert_array_equal(Y, Yc)
    np.testing.assert_array_equal(w, 1.0)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"registration": "sinkhorn", "n_init": 2},
        {"metric": "euclidean", "both_sides": False},
    ],
)
def test_function_and_estimator_agree(params):
    from skpapers.cluster import transport_clustering

    X, Y, _, _ = make_shifted_gaussians(120, n_clusters=4, sigma=0.2, random_state=3)
    est = TransportClustering(4, random_state=7, **params).fit(X, X_target=Y)
    Q, R, g, result = transport_clustering(X, Y, n_clusters=4, random_state=7, **params)
    np.testing.assert_array_equal(est.Q_, Q)
    np.testing.assert_array_equal(est.R_, R)
    np.testing.assert_array_equal(est.g_, g)
    assert est.cost_ == result.cost
    assert est.registration_cost_ == result.registration_cost
    assert est.n_iter_ == result.n_iter


def test_function_validates_its_parameters():
    from skpapers.cluster import transport_clustering

    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="n_clusters"):
        transport_clustering(X, n_clusters=0)
    with pytest.raises(ValueError, match="at most min"):
        transport_clustering(X, n_clusters=11)


def test_packed_domains_in_a_pipeline_scale_both_sides_alike():
    import sklearn
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, Y, _, _ = make_shifted_gaussians(60, n_clusters=3, sigma=0.2, random_state=4)
    Y = Y[:45] * 3.0 + 1.0
    packed = np.vstack([X, Y])
    domain = np.r_[np.ones(60), -np.ones(45)]
    scaled = StandardScaler().fit_transform(packed)
    by_hand = TransportClustering(3, random_state=0).fit(scaled[:60], X_target=scaled[60:])
    pipe = make_pipeline(StandardScaler(), TransportClustering(3, random_state=0))
    pipe.fit(packed, transportclustering__sample_domain=domain)
    est = pipe[-1]
    np.testing.assert_array_equal(est.Q_, by_hand.Q_)
    np.testing.assert_array_equal(est.R_, by_hand.R_)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = make_pipeline(
            StandardScaler(),
            TransportClustering(3, random_state=0).set_fit_request(sample_domain=True),
        ).fit(packed, sample_domain=domain)
    np.testing.assert_array_equal(routed[-1].Q_, by_hand.Q_)


@pytest.mark.parametrize(
    "domain, kwargs, match",
    [
        (np.r_[np.ones(5), np.zeros(5)], {}, "zero entries"),
        (np.r_[np.ones(9), -1.0], {}, "at least 2 sources"),
        (np.r_[np.ones(5), -np.ones(5)], {"X_target": np.ones((3, 2))}, "neither X_target"),
        (np.ones(7), {}, "inconsistent numbers of samples"),
    ],
)
def test_packed_domains_errors(domain, kwargs, match):
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match=match):
        TransportClustering(2).fit(X, sample_domain=domain, **kwargs)


def test_target_frame_must_have_the_features_of_x():
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(20, 2)), columns=["a", "b"])
    Y = pd.DataFrame(rng.normal(size=(15, 2)), columns=["a", "b"])
    TransportClustering(2, random_state=0).fit(X, X_target=Y)
    with pytest.raises(ValueError, match="same order"):
        TransportClustering(2).fit(X, X_target=Y[["b", "a"]])
    with pytest.raises(ValueError, match="unseen at fit time"):
        TransportClustering(2).fit(X, X_target=Y.rename(columns={"b": "c"}))


def test_verbose_logs_stages_and_why_the_clustering_stopped(caplog):
    import logging

    X, Y, _, _ = make_shifted_gaussians(60, n_clusters=3, sigma=0.2, random_state=4)
    with caplog.at_level(logging.INFO, logger="skpapers.transport"):
        TransportClustering(3, verbose=2, random_state=0).fit(X, X_target=Y)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "registration 'exact'" in text
    assert "generalized K-means stopped after" in text
    assert ("converged" in text) or ("max_iter" in text)
    assert "done: cost" in text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="skpapers.transport"):
        TransportClustering(3, random_state=0).fit(X, X_target=Y)
    assert not caplog.records
