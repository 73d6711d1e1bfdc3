# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The default fair tree is fair on data it was not tuned on, whatever the cluster sizes.

A cluster too small to fold (fold groups below twice the threshold) had its
SplitRoot children kept; with ``h = 2k`` those could reach the threshold without
any fold, and on scikit-learn's breast cancer data, with the class as the group,
the default was as unfair as average linkage (0.627). Their descendants that
reach the threshold are now dissolved into them.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, make_blobs
from sklearn.preprocessing import StandardScaler

from skpapers.cluster import FairHierarchicalClustering
from skpapers.metrics import cluster_fairness


def _average_linkage_violation(X, groups, threshold):
    vanilla = FairHierarchicalClustering().fit(X)  # one group: the vanilla tree
    return cluster_fairness(vanilla.tree_, groups, min_size=threshold)["violation"]


def _single_group_clusters(est, groups):
    report = cluster_fairness(est.tree_, groups, min_size=est.fairness_threshold_)
    present = (report["proportions"][report["evaluated"]] > 0).sum(axis=1)
    return int((present < 2).sum())


@pytest.mark.filterwarnings("ignore::skpapers.exceptions.SensitiveFeaturesWarning")
def test_breast_cancer_default_is_fair():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = FairHierarchicalClustering().fit(X, sensitive_features=y)
    average = _average_linkage_violation(X, y, est.fairness_threshold_)
    assert average > 0.5  # the class follows the clusters
    assert est.fairness_violation_ <= 0.05
    assert est.fairness_violation_ <= average / 4
    assert _single_group_clusters(est, y) == 0
    assert est.cost_ratio_ < 1.25


@pytest.mark.filterwarnings("ignore::skpapers.exceptions.SensitiveFeaturesWarning")
@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    n_groups=st.integers(2, 8),
    n=st.sampled_from([200, 300, 400]),
    seed=st.integers(0, 10_000),
    method=st.sampled_from(["polylog", "reduction"]),
)
def test_default_is_fair_on_groups_that_follow_the_clusters(n_groups, n, seed, method):
    # each group mostly one blob: average linkage's clusters are nearly single-group
    X, blob = make_blobs(n, centers=n_groups, random_state=seed)
    rng = np.random.default_rng(seed)
    groups = np.where(rng.random(n) < 0.8, blob, rng.integers(0, n_groups, n))
    assert np.bincount(groups).min() >= 0.05 * n
    est = FairHierarchicalClustering(method=method).fit(X, sensitive_features=groups)
    average = _average_linkage_violation(X, groups, est.fairness_threshold_)
    if method == "polylog":
        assert est.fairness_violation_ <= min(0.05, average / 4)
    else:  # the reduction's pieces are coarser at h = 4 (see the user guide)
        assert est.fairness_violation_ <= average / 2
    assert _single_group_clusters(est, groups) == 0
