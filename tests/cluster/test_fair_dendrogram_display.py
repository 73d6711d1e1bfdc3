# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""FairDendrogramDisplay: real merge heights, colours by deviation, panels, errors."""

import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex
from scipy.cluster.hierarchy import is_monotonic, is_valid_linkage, linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.datasets import make_blobs

from skpapers.cluster import FairHierarchicalClustering
from skpapers.cluster._fair_hierarchical.display import GREY, FairDendrogramDisplay
from skpapers.exceptions import SensitiveFeaturesWarning
from skpapers.metrics import cluster_fairness, dasgupta_cost

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def fitted():
    """60 samples, a group mostly equal to the blob; a fair tree with k-ary nodes."""
    X, blob = make_blobs([32, 28], random_state=0)
    flip = np.random.default_rng(0).random(blob.shape[0]) < 0.15
    group = np.where(flip, 1 - blob, blob)
    est = FairHierarchicalClustering(h=4, k=2).fit(X, sensitive_features=group)
    assert np.diff(est.tree_.children_ptr).max() > 2  # chains of merges are exercised
    return X, group, est


def _distance(X, scale):
    """max(S) - S for the default similarity, computed independently (dense)."""
    S = 1.0 / (1.0 + squareform(pdist(X)) / scale)
    np.fill_diagonal(S, 0.0)
    return S, S.max() - S


def _leaf_sets(Z):
    n = Z.shape[0] + 1
    members = [{i} for i in range(n)]
    for a, b in Z[:, :2].astype(int):
        members.append(members[a] | members[b])
    return members[n:]


def _node_heights(tree, D):
    """Mean distance between leaves in different children, per internal node."""
    heights = {}
    for u in range(tree.n_leaves, tree.n_nodes):
        kids = [tree.leaves_of(c) for c in tree.children_of(u)]
        pairs = [D[np.ix_(a, b)].ravel() for i, a in enumerate(kids) for b in kids[i + 1 :]]
        heights[u] = np.concatenate(pairs).mean()
    return heights


def _node_of_rows(Z, tree):
    """Smallest node of the k-ary tree holding the cluster of every merge of Z."""
    nodes = [(tree.size[u], u, set(tree.leaves_of(u))) for u in range(tree.n_leaves, tree.n_nodes)]
    nodes.sort(key=lambda t: t[0])
    return [next(u for _, u, s in nodes if rows <= s) for rows in _leaf_sets(Z)]


def _monotone(tree, brute):
    """Every node raised to the highest node below it."""
    return {
        u: max(h for v, h in brute.items() if set(tree.leaves_of(v)) <= set(tree.leaves_of(u)))
        for u in brute
    }


def test_linkage_heights_are_mean_distances_then_monotone(fitted):
    # linkage_matrix_ heights: mean distance max(S) - S between a node's
    # children (brute force), raised to the highest node below it
    X, _, est = fitted
    _, D = _distance(X, est.distance_scale_)
    Z, tree = est.linkage_matrix_, est.tree_
    brute = _node_heights(tree, D)
    highest = _monotone(tree, brute)
    nodes = _node_of_rows(Z, tree)
    np.testing.assert_allclose(Z[:, 2], [highest[u] for u in nodes], rtol=1e-10, atol=1e-12)
    assert np.any(Z[:, 2] > np.array([brute[u] for u in nodes]) + 1e-9)  # monotone step acted
    np.testing.assert_array_equal(est.merge_sizes_, tree.size[nodes])
    assert is_valid_linkage(Z) and is_monotonic(Z)
    with pytest.warns(FutureWarning, match="merge_sizes_"):
        np.testing.assert_array_equal(est.distances_, Z[:, 2])
    sizes = tree.to_linkage()  # the 0.1 matrix: heights are cluster sizes
    np.testing.assert_array_equal(np.sort(sizes[:, 2]), np.sort(est.merge_sizes_))


@pytest.mark.parametrize("similarity", ["inverse_distance", "rbf", "precomputed"])
@pytest.mark.parametrize("given", [False, True])
def test_vanilla_heights_reproduce_scipy_average_linkage(similarity, given):
    # without groups the tree is average linkage's; its heights are scipy's,
    # read from the linkage (given=False) or computed from the sweep (a given Z)
    X, _ = make_blobs(25, random_state=1)
    if similarity == "rbf":
        S = np.exp(-(pdist(X) ** 2) / X.shape[1])
    else:
        S = 1.0 / (1.0 + pdist(X))
    Z = linkage(S.max() - S, "average")
    if similarity == "precomputed":
        X = squareform(S)
    scale = "std" if similarity == "precomputed" else 1.0
    est = FairHierarchicalClustering(
        similarity=similarity, distance_scale=scale, linkage=Z if given else "average"
    )
    with pytest.warns(SensitiveFeaturesWarning):
        est.fit(X)
    np.testing.assert_allclose(est.linkage_matrix_[:, 2], Z[:, 2], rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(est.linkage_matrix_[:, 3], Z[:, 3])


def test_display_linkages_are_valid_and_monotone_along_the_tree(fitted):
    X, group, est = fitted
    display = FairDendrogramDisplay.from_estimator(est, X, group)
    fair, average = display.linkages
    np.testing.assert_array_equal(np.sort(fair[:, 2]), est.linkage_matrix_[:, 2])
    for Z in display.linkages:
        assert is_valid_linkage(Z)
        n = Z.shape[0] + 1
        for a, b, h, _ in Z:
            for child in (int(a), int(b)):
                assert child < n or Z[child - n, 2] <= h
    _, D = _distance(X, est.distance_scale_)
    expected = linkage(squareform(D, checks=False), "average")
    np.testing.assert_allclose(np.sort(average[:, 2]), expected[:, 2], rtol=1e-12)


def _brute_deviation(Z, group, threshold):
    shares = np.bincount(group) / group.shape[0]
    out = []
    for rows in _leaf_sets(Z):
        members = group[list(rows)]
        share = np.bincount(members, minlength=shares.shape[0]) / members.shape[0]
        out.append(np.abs(share - shares).max() if len(rows) >= threshold else np.nan)
    return np.array(out)


def test_colours_grey_below_threshold_else_from_deviation(fitted):
    X, group, est = fitted
    threshold = est.fairness_threshold_
    display = FairDendrogramDisplay.from_estimator(est, X, group)
    fair, average = display.linkages
    # the average tree: every merge's own cluster
    np.testing.assert_allclose(display.deviations[1], _brute_deviation(average, group, threshold))
    # the fair tree: a merge inside a k-ary node shows the node's cluster
    nodes = _node_of_rows(fair, est.tree_)
    tree = est.tree_
    shares = np.bincount(group) / group.shape[0]
    expected = np.array(
        [
            np.abs(np.bincount(group[tree.leaves_of(u)], minlength=2) / tree.size[u] - shares).max()
            if tree.size[u] >= threshold
            else np.nan
            for u in nodes
        ]
    )
    np.testing.assert_allclose(display.deviations[0], expected)
    cmap, norm = display.colorbar_.cmap, display.colorbar_.norm
    assert norm.vmin == 0.0
    assert norm.vmax == pytest.approx(max(np.nanmax(d) for d in display.deviations))
    for Z, dev, tree_drawn in zip(
        display.linkages, display.deviations, display.dendrograms_, strict=True
    ):
        colours = np.array([GREY if np.isnan(v) else to_hex(cmap(norm(v))) for v in dev])
        assert len(tree_drawn["color_list"]) == Z.shape[0]
        assert tree_drawn["color_list"].count(GREY) == np.count_nonzero(np.isnan(dev))
        for ys, colour in zip(tree_drawn["dcoord"], tree_drawn["color_list"], strict=True):
            rows = np.flatnonzero(Z[:, 2] == ys[1])
            assert colour in set(colours[rows])
    # the largest deviation is the top of the colorbar
    worst = np.nanargmax(display.deviations[1])
    assert to_hex(cmap(norm(display.deviations[1][worst]))) == to_hex(cmap(1.0))


def test_titles_give_fairness_and_cost_ratio(fitted):
    X, group, est = fitted
    threshold = est.fairness_threshold_
    display = FairDendrogramDisplay.from_estimator(est, X, group)
    assert isinstance(display.ax_, np.ndarray) and display.ax_.shape == (2,)
    S, D = _distance(X, est.distance_scale_)
    average = linkage(squareform(D, checks=False), "average")
    fair_violation = cluster_fairness(est.tree_, group, min_size=threshold)["violation"]
    average_violation = cluster_fairness(average, group, min_size=threshold)["violation"]
    ratio = dasgupta_cost(S, est.tree_) / dasgupta_cost(S, average)
    assert fair_violation < average_violation
    numbers = []
    for ax in display.ax_:
        title = ax.get_title()
        deviation = re.search(r"max deviation ([0-9.]+)", title).group(1)
        cost = re.search(r"cost ratio ([0-9.]+)", title).group(1)
        numbers.append((float(deviation), float(cost)))
    assert "Fair" in display.ax_[0].get_title()
    assert "Average" in display.ax_[1].get_title()
    assert numbers[0] == (round(fair_violation, 3), round(ratio, 2))
    assert numbers[1] == (round(average_violation, 3), 1.0)


@pytest.mark.parametrize("max_leaves", [None, 60, 10, 2])
def test_number_of_leaves(fitted, max_leaves):
    X, group, est = fitted
    n = X.shape[0]
    display = FairDendrogramDisplay.from_estimator(est, X, group, max_leaves=max_leaves)
    for drawn in display.dendrograms_:
        labels = drawn["ivl"]
        assert len(labels) == min(max_leaves or n, n)
        sizes = [int(lab.strip("()")) if lab.startswith("(") else 1 for lab in labels]
        assert sum(sizes) == n


def test_ax_is_honoured(fitted):
    X, group, est = fitted
    fig, axes = plt.subplots(1, 2)
    display = FairDendrogramDisplay.from_estimator(est, X, group, ax=axes)
    assert display.figure_ is fig
    assert list(display.ax_) == list(axes)
    fig, ax = plt.subplots()
    display = FairDendrogramDisplay.from_estimator(est, X, group, ax=ax, compare=False)
    assert display.ax_ is ax and display.figure_ is fig
    assert len(display.linkages) == 1 and "Fair" in ax.get_title()


def test_wrong_ax_raises(fitted):
    X, group, est = fitted
    _, ax = plt.subplots()
    with pytest.raises(ValueError, match="2 panel"):
        FairDendrogramDisplay.from_estimator(est, X, group, ax=ax)
    _, axes = plt.subplots(1, 2)
    with pytest.raises(ValueError, match="1 panel"):
        FairDendrogramDisplay.from_estimator(est, X, group, ax=axes, compare=False)
    with pytest.raises(ValueError, match="max_leaves"):
        FairDendrogramDisplay.from_estimator(est, X, group, max_leaves=1)


def test_wrong_data_raises(fitted):
    X, group, est = fitted
    with pytest.raises(ValueError, match="training samples"):
        FairDendrogramDisplay.from_estimator(est, X[:-1], group[:-1])
    with pytest.raises(ValueError, match="sensitive_features differ"):
        FairDendrogramDisplay.from_estimator(est, X, 1 - group)


def test_memory_budget_refused(fitted):
    X, group, est = fitted
    small = FairHierarchicalClustering(h=4, k=2).fit(X, sensitive_features=group)
    small.set_params(max_dense_entries=100)
    with pytest.raises(ValueError, match="max_dense_entries=100"):
        FairDendrogramDisplay.from_estimator(small, X, group)


def test_precomputed_similarity(fitted):
    X, group, _ = fitted
    S, D = _distance(X, np.std(X))
    est = FairHierarchicalClustering(h=4, k=2, similarity="precomputed")
    est.fit(S, sensitive_features=group)
    display = FairDendrogramDisplay.from_estimator(est, S, group)
    highest = _monotone(est.tree_, _node_heights(est.tree_, D))
    nodes = _node_of_rows(est.linkage_matrix_, est.tree_)
    np.testing.assert_allclose(
        est.linkage_matrix_[:, 2], [highest[u] for u in nodes], rtol=1e-10, atol=1e-12
    )
    assert display.linkages[0].shape == (X.shape[0] - 1, 4)


def test_inputs_not_modified(fitted):
    X, group, est = fitted
    X_before, group_before = X.copy(), group.copy()
    Z_before = est.linkage_matrix_.copy()
    FairDendrogramDisplay.from_estimator(est, X, group)
    np.testing.assert_array_equal(X, X_before)
    np.testing.assert_array_equal(group, group_before)
    np.testing.assert_array_equal(est.linkage_matrix_, Z_before)
