# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""FairHierarchicalClustering does not depend on the units of X."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist, squareform
from sklearn.datasets import make_blobs

from skpapers.cluster import FairHierarchicalClustering
from skpapers.metrics import dasgupta_cost


def _data(n=80, seed=0):
    X, _ = make_blobs(n_samples=n, centers=3, n_features=3, random_state=seed)
    colour = np.random.default_rng(seed).integers(0, 2, n)
    return X, colour


@settings(max_examples=25, deadline=None)
@given(
    log10_c=st.floats(-150, 150),
    method=st.sampled_from(["polylog", "reduction"]),
    similarity=st.sampled_from(["inverse_distance", "rbf"]),
)
def test_the_tree_does_not_depend_on_the_units(log10_c, method, similarity):
    """Same tree, cost and fairness for X and c X, c in [1e-150, 1e150] (rel 1e-9)."""
    X, colour = _data()
    c = 10.0**log10_c
    params = {"method": method, "similarity": similarity, "h": 8, "random_state": 0}
    ref = FairHierarchicalClustering(**params).fit(X, sensitive_features=colour)
    est = FairHierarchicalClustering(**params).fit(c * X, sensitive_features=colour)
    np.testing.assert_array_equal(est.tree_.to_linkage(), ref.tree_.to_linkage())
    assert est.cost_ == pytest.approx(ref.cost_, rel=1e-9)
    assert est.base_cost_ == pytest.approx(ref.base_cost_, rel=1e-9)
    assert est.fairness_violation_ == pytest.approx(ref.fairness_violation_, rel=1e-9)
    assert est.distance_scale_ == pytest.approx(c * ref.distance_scale_, rel=1e-9)


def test_distance_scale_one_is_the_papers_similarity():
    X, colour = _data(64, 1)
    est = FairHierarchicalClustering(h=8, distance_scale=1.0).fit(X, sensitive_features=colour)
    assert est.distance_scale_ == 1.0
    S = squareform(1.0 / (1.0 + pdist(X)))  # raw features, as in the papers
    assert est.cost_ == pytest.approx(dasgupta_cost(S, est.tree_), rel=1e-10)
    # a fixed unit follows the data: X in kilo-units with unit 1e3 is the same fit
    kilo = FairHierarchicalClustering(h=8, distance_scale=1e-3).fit(
        X * 1e-3, sensitive_features=colour
    )
    assert kilo.cost_ == pytest.approx(est.cost_, rel=1e-9)


@pytest.mark.parametrize("c, word", [(1e200, "overflow"), (1e-200, "underflow")])
def test_a_fixed_unit_far_from_the_data_is_refused(c, word):
    X, colour = _data(64, 2)
    with pytest.raises(ValueError, match=f"distances between samples .* {word}"):
        FairHierarchicalClustering(h=8, distance_scale=1.0).fit(c * X, sensitive_features=colour)


def test_distance_scale_with_a_precomputed_similarity_is_refused():
    X, colour = _data(64, 3)
    S = squareform(1.0 / (1.0 + pdist(X)))
    est = FairHierarchicalClustering(h=8, similarity="precomputed", distance_scale=2.0)
    with pytest.raises(ValueError, match="no meaning with similarity='precomputed'"):
        est.fit(S, sensitive_features=colour)
    fitted = FairHierarchicalClustering(h=8, similarity="precomputed").fit(
        S, sensitive_features=colour
    )
    assert fitted.distance_scale_ is None  # not NaN: a finite answer or None
