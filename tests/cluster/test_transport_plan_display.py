# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of TransportPlanDisplay and cocluster_plan: exact masses, what is drawn, errors."""

import copy

import matplotlib
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.spatial.distance import cdist
from sklearn.datasets import make_blobs
from sklearn.decomposition import PCA
from sklearn.preprocessing import FunctionTransformer

from skpapers.cluster import TransportClustering, TransportPlanDisplay, cocluster_plan
from skpapers.datasets import make_shifted_gaussians

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

K = 3



@pytest.fixture(scope="module")
def data_2d():
    X, _ = make_blobs(40, centers=K, random_state=0)
    Y, _ = make_blobs(50, centers=K, random_state=1)
    return X, Y


@pytest.fixture(scope="module")
def fitted_2d(data_2d):
    X, Y = data_2d
    return TransportClustering(n_clusters=K, random_state=0).fit(X, X_target=Y)


@pytest.fixture(scope="module")
def data_5d():
    X, Y, _, _ = make_shifted_gaussians(60, n_clusters=5, random_state=0)
    return X, Y


@pytest.fixture(scope="module")
def fitted_5d(data_5d):
    X, Y = data_5d
    return TransportClustering(n_clusters=K, random_state=0).fit(X, X_target=Y)


def _soft_fit(weighted):
    """A fit whose factors stay soft (refine="none"), so the plan leaks between co-clusters."""
    X = make_blobs(30, centers=K, cluster_std=4.0, random_state=2)[0]
    Y = make_blobs(24, centers=K, cluster_std=4.0, random_state=3)[0]
    rng = np.random.RandomState(0)
    a, b = (rng.rand(30), rng.rand(24)) if weighted else (np.ones(30), np.ones(24))
    tc = TransportClustering(n_clusters=K, refine="none", random_state=0)
    tc.fit(X, X_target=Y, sample_weight=a, target_weight=b)
    return tc, a / a.sum(), b / b.sum()


@pytest.mark.parametrize("weighted", [False, True])
def test_cocluster_plan_is_the_dense_plan_summed_over_labels(weighted):
    tc, a, b = _soft_fit(weighted)
    P = tc.transport_plan()
    expected = np.array([
        [P[np.ix_(tc.labels_ == row, tc.target_labels_ == col)].sum() for col in range(K)]
        for row in range(K)
    ])
    plan = cocluster_plan(tc.Q_, tc.R_, tc.g_, tc.labels_, tc.target_labels_)
    assert np.count_nonzero(expected > 1e-6) > K  # soft factors: mass off the diagonal
    assert_allclose(plan, expected, atol=1e-12)

    assert_allclose(plan.sum(), 1.0)
    assert_allclose(plan.sum(axis=1), np.bincount(tc.labels_, weights=a, minlength=K))
    assert_allclose(plan.sum(axis=0), np.bincount(tc.target_labels_, weights=b, minlength=K))


def test_cocluster_plan_follows_a_renumbering_of_the_clusters():
    tc, _, _ = _soft_fit(False)
    perm = np.array([2, 0, 1])  # new cluster k is old cluster perm[k]
    new_label = np.argsort(perm)
    plan = cocluster_plan(tc.Q_, tc.R_, tc.g_, tc.labels_, tc.target_labels_)
    renumbered = cocluster_plan(
        tc.Q_[:, perm], tc.R_[:, perm], tc.g_[perm], new_label[tc.labels_],
        new_label[tc.target_labels_],
    )
    assert_allclose(renumbered, plan[np.ix_(perm, perm)])


def test_two_dimensional_data_are_drawn_as_they_are(data_2d, fitted_2d):
    X, Y = data_2d
    display = TransportPlanDisplay.from_estimator(fitted_2d, X, Y)
    assert_array_equal(display.source_scatter_.get_offsets(), X)
    assert_array_equal(display.target_scatter_.get_offsets(), Y)
    assert_array_equal(display.source_labels, fitted_2d.labels_)
    assert_array_equal(display.target_labels, fitted_2d.target_labels_)
    assert_allclose(display.source_centers, fitted_2d.cluster_centers_)
    assert_allclose(display.target_centers, fitted_2d.target_cluster_centers_)
    assert_allclose(display.plan.sum(), 1.0)
    assert display.ax_.shape == (2,)
    assert all(ax.figure is display.figure_ for ax in display.ax_)
    assert len(display.ax_[1].texts) == K * K  # annotated cells


def test_one_arrow_per_cocluster_with_width_proportional_to_mass(data_2d, fitted_2d):
    display = TransportPlanDisplay.from_estimator(fitted_2d, *data_2d, max_arrow_width=5.0)
    widths = np.array([arrow.get_linewidth() for arrow in display.arrows_])
    assert len(display.arrows_) == K
    assert all(arrow.axes is display.ax_[0] for arrow in display.arrows_)
    assert_allclose(widths, 5.0 * fitted_2d.g_ / fitted_2d.g_.max())
    assert_array_equal(np.argsort(widths), np.argsort(fitted_2d.g_))


def test_subsample_is_deterministic_and_per_side(data_2d, fitted_2d):
    X, Y = data_2d
    first, second, other = (
        TransportPlanDisplay.from_estimator(fitted_2d, X, Y, max_points=15, random_state=seed)
        for seed in (0, 0, 1)
    )
    for display in (first, second, other):
        assert display.source_scatter_.get_offsets().shape == (15, 2)
        assert display.target_scatter_.get_offsets().shape == (15, 2)
    assert_array_equal(first.source_points, second.source_points)
    assert_array_equal(first.target_points, second.target_points)
    assert not np.array_equal(first.source_points, other.source_points)
    # shown points are fitted points, with their own labels; the plan uses every point
    rows = np.argmin(cdist(first.source_points, X), axis=1)
    assert_array_equal(X[rows], first.source_points)
    assert_array_equal(fitted_2d.labels_[rows], first.source_labels)
    assert_allclose(first.plan, TransportPlanDisplay.from_estimator(fitted_2d, X, Y).plan)


def test_more_than_two_features_are_projected_by_one_pca(data_5d, fitted_5d):
    X, Y = data_5d
    display = TransportPlanDisplay.from_estimator(fitted_5d, X, Y)
    assert display.source_points.shape == (len(X), 2)
    assert display.target_points.shape == (len(Y), 2)
    pca = PCA(n_components=2).fit(np.vstack([X, Y]))
    signs = np.sign(np.sum(display.source_points * pca.transform(X), axis=0))
    assert_allclose(display.source_points, pca.transform(X) * signs, atol=1e-10)
    assert_allclose(display.target_points, pca.transform(Y) * signs, atol=1e-10)
    # an affine projection of a barycentre is the barycentre of the projections
    g = fitted_5d.g_[:, None]
    assert_allclose(display.source_centers, fitted_5d.Q_.T @ display.source_points / g)
    assert_allclose(display.target_centers, fitted_5d.R_.T @ display.target_points / g)
    assert display.axis_labels[0].startswith("PC 1")


def test_a_fitted_projection_is_used_as_given(data_5d, fitted_5d):
    X, Y = data_5d
    projection = FunctionTransformer(lambda Z: Z[:, [3, 1]] ** 2).fit(X)  # not linear
    display = TransportPlanDisplay.from_estimator(fitted_5d, X, Y, projection=projection)
    assert_allclose(display.source_points, projection.transform(X))
    assert_allclose(display.target_centers, projection.transform(fitted_5d.target_cluster_centers_))


def test_self_transport_draws_the_sources_as_targets(data_5d):
    X, _ = data_5d
    tc = TransportClustering(n_clusters=K, random_state=0).fit(X)
    display = TransportPlanDisplay.from_estimator(tc, X)
    assert_allclose(display.target_points, display.source_points)
    assert_allclose(display.plan.sum(axis=1), np.bincount(tc.labels_, minlength=K) / len(X))
    assert len(display.arrows_) == K


def test_display_does_not_depend_on_cluster_numbering(data_2d, fitted_2d):
    perm = np.array([1, 2, 0])
    new_label = np.argsort(perm)
    renumbered = copy.deepcopy(fitted_2d)
    for name in ("Q_", "R_"):
        setattr(renumbered, name, getattr(fitted_2d, name)[:, perm])
    for name in ("g_", "cluster_centers_", "target_cluster_centers_"):
        setattr(renumbered, name, getattr(fitted_2d, name)[perm])
    renumbered.labels_ = new_label[fitted_2d.labels_]
    renumbered.target_labels_ = new_label[fitted_2d.target_labels_]
    display = TransportPlanDisplay.from_estimator(fitted_2d, *data_2d)
    other = TransportPlanDisplay.from_estimator(renumbered, *data_2d)
    assert_array_equal(other.source_points, display.source_points)
    assert_allclose(other.plan, display.plan[np.ix_(perm, perm)])
    assert_allclose(other.source_centers, display.source_centers[perm])
    widths = [[arrow.get_linewidth() for arrow in d.arrows_] for d in (display, other)]
    assert_allclose(widths[1], np.asarray(widths[0])[perm])


def test_ax_is_honoured(data_2d, fitted_2d):
    figure, axes = plt.subplots(1, 2)
    display = TransportPlanDisplay.from_estimator(fitted_2d, *data_2d, ax=list(axes))
    assert display.figure_ is figure
    assert display.ax_[0] is axes[0] and display.ax_[1] is axes[1]
    assert display.source_scatter_.axes is axes[0]
    assert display.image_.axes is axes[1]


@pytest.mark.parametrize("bad_ax", ["single", "three", "not axes"])
def test_wrong_ax_is_a_clear_error(data_2d, fitted_2d, bad_ax):
    _, axes = plt.subplots(1, 3)
    ax = {"single": axes[0], "three": axes, "not axes": [1, 2]}[bad_ax]
    with pytest.raises(ValueError, match="2 panel"):
        TransportPlanDisplay.from_estimator(fitted_2d, *data_2d, ax=ax)


def test_precomputed_is_a_clear_error(data_2d):
    X, Y = data_2d
    tc = TransportClustering(n_clusters=K, metric="precomputed", random_state=0)
    tc.fit(cdist(X, Y, "sqeuclidean"))
    with pytest.raises(ValueError, match="needs coordinates.*precomputed"):
        TransportPlanDisplay.from_estimator(tc, X, Y)


def test_wrong_data_and_options_are_clear_errors(data_2d, fitted_2d):
    X, Y = data_2d
    with pytest.raises(ValueError, match="X has shape"):
        TransportPlanDisplay.from_estimator(fitted_2d, X[:-1], Y)
    with pytest.raises(ValueError, match="X_target=None only for self-transport"):
        TransportPlanDisplay.from_estimator(fitted_2d, X)
    with pytest.raises(ValueError, match="max_points"):
        TransportPlanDisplay.from_estimator(fitted_2d, X, Y, max_points=0)
    with pytest.raises(ValueError, match="projection must be"):
        TransportPlanDisplay.from_estimator(fitted_2d, X, Y, projection="tsne")
    three = PCA(n_components=3).fit(np.c_[X, X[:, 0]])
    X3, Y3 = np.c_[X, X[:, 0]], np.c_[Y, Y[:, 0]]
    tc3 = TransportClustering(n_clusters=K, random_state=0).fit(X3, X_target=Y3)
    with pytest.raises(ValueError, match="2 columns; it returns 3"):
        TransportPlanDisplay.from_estimator(tc3, X3, Y3, projection=three)


@pytest.mark.parametrize("max_points", [None, 20])
def test_inputs_are_not_modified(data_2d, fitted_2d, max_points):
    X, Y = data_2d
    X_before, Y_before = X.copy(), Y.copy()
    state = copy.deepcopy(vars(fitted_2d))
    display = TransportPlanDisplay.from_estimator(fitted_2d, X, Y, max_points=max_points)
    for name in ("source_points", "target_points", "source_centers", "target_centers", "plan"):
        getattr(display, name)[...] += 1.0  # the display owns its arrays
    assert_array_equal(X, X_before)
    assert_array_equal(Y, Y_before)
    for name, value in state.items():
        if isinstance(value, np.ndarray):
            assert_array_equal(vars(fitted_2d)[name], value)


def test_plot_from_arrays_annotates_only_small_plans():
    rng = np.random.RandomState(0)
    for n_clusters, n_texts in [(4, 16), (13, 0)]:
        labels = np.arange(40) % n_clusters
        display = TransportPlanDisplay(
            source_points=rng.rand(40, 2), target_points=rng.rand(40, 2),
            source_labels=labels, target_labels=labels,
            source_centers=rng.rand(n_clusters, 2), target_centers=rng.rand(n_clusters, 2),
            masses=np.full(n_clusters, 1 / n_clusters), plan=np.eye(n_clusters) / n_clusters,
        ).plot()
        assert len(display.ax_[1].texts) == n_texts
        assert len(display.arrows_) == n_clusters
