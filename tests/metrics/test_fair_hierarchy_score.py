# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""fair_hierarchy_score / FairHierarchyScorer: the formula, GridSearchCV with routing, errors."""

import numpy as np
import pytest
import sklearn
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpapers.cluster import FairHierarchicalClustering
from skpapers.metrics import FairHierarchyScorer, cluster_fairness, fair_hierarchy_score


def _data(n=160, seed=0):
    X, blob = make_blobs(n_samples=n, centers=3, random_state=seed)
    flip = np.random.default_rng(seed).random(n) < 0.2
    return X, np.where(flip, blob == 0, blob != 0).astype(int)  # groups follow the blobs


def test_score_is_minus_violation_plus_relative_cost():
    X, s = _data()
    est = FairHierarchicalClustering(h=8)
    fitted = FairHierarchicalClustering(h=8).fit(X, sensitive_features=s)
    want = -(fitted.fairness_violation_ + fitted.cost_ratio_ - 1)
    assert fair_hierarchy_score(est, X, sensitive_features=s) == want
    weighted = fair_hierarchy_score(est, X, sensitive_features=s, fairness_weight=10.0)
    assert weighted == -(10 * fitted.fairness_violation_ + fitted.cost_ratio_ - 1)
    fixed = cluster_fairness(fitted.tree_, s, min_size=40)["violation"]
    got = fair_hierarchy_score(est, X, sensitive_features=s, min_size=40)
    assert got == -(fixed + fitted.cost_ratio_ - 1)
    # nothing evaluated: NaN, not a perfect score
    assert np.isnan(fair_hierarchy_score(est, X, sensitive_features=s, min_size=161))
    assert not hasattr(est, "tree_")  # the estimator passed in is not fitted
    scorer = FairHierarchyScorer(fairness_weight=10.0)
    assert scorer(est, X, sensitive_features=s) == weighted
    assert repr(scorer) == "FairHierarchyScorer(fairness_weight=10.0, min_size=None)"


def test_grid_search_with_routing_scores_each_test_fold():
    X, s = _data(200, 1)
    cv = KFold(2, shuffle=True, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        est = FairHierarchicalClustering().set_fit_request(sensitive_features=True)
        search = GridSearchCV(est, {"h": [4, 8]}, scoring=FairHierarchyScorer(), cv=cv)
        search.fit(X, sensitive_features=s)
        pipe = make_pipeline(StandardScaler(), est)
        grid = {"fairhierarchicalclustering__h": [4, 8]}
        piped = GridSearchCV(pipe, grid, scoring=FairHierarchyScorer(), cv=cv)
        piped.fit(X, sensitive_features=s)
        res = cross_validate(
            est, X, scoring=FairHierarchyScorer(), cv=cv, params={"sensitive_features": s}
        )
    # every split's score is that of a copy fitted on its test fold, with its groups
    for i, h in enumerate(search.cv_results_["param_h"]):
        for split, (_, test) in enumerate(cv.split(X)):
            want = fair_hierarchy_score(
                FairHierarchicalClustering(h=h), X[test], sensitive_features=s[test]
            )
            assert search.cv_results_[f"split{split}_test_score"][i] == want
            if h == 4:  # the default: cross_validate gives the same numbers
                assert res["test_score"][split] == want
    best = np.argmax(search.cv_results_["mean_test_score"])
    assert search.best_params_["h"] == search.cv_results_["param_h"][best]
    assert search.best_estimator_.groups_.shape[0] == 2
    assert np.all(np.isfinite(piped.cv_results_["mean_test_score"]))
    assert piped.best_estimator_[-1].groups_.shape[0] == 2


def test_without_routing_the_scorer_says_how_to_route():
    X, s = _data()
    search = GridSearchCV(
        FairHierarchicalClustering(),
        {"h": [4, 8]},
        scoring=FairHierarchyScorer(),
        cv=2,
        error_score="raise",
    )
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        search.fit(X, sensitive_features=s)
    # a Pipeline scored directly, routing off: the groups go to its last step
    pipe = make_pipeline(StandardScaler(), FairHierarchicalClustering(h=8))
    score = fair_hierarchy_score(pipe, X, sensitive_features=s)
    fitted = FairHierarchicalClustering(h=8).fit(
        StandardScaler().fit_transform(X), sensitive_features=s
    )
    assert score == -(fitted.fairness_violation_ + fitted.cost_ratio_ - 1)


def test_grid_search_without_scoring_fails_with_a_short_message():
    # the estimator has no score method (a fitted tree scores nothing on new
    # samples): GridSearchCV refuses in one line naming the missing method
    X, s = _data()
    search = GridSearchCV(FairHierarchicalClustering(), {"h": [4, 8]}, cv=2)
    with pytest.raises(TypeError, match="'score' method") as info:
        search.fit(X, sensitive_features=s)
    assert len(str(info.value)) < 200


def test_scorer_errors():
    X, s = _data()
    with pytest.raises(TypeError, match="FairHierarchicalClustering"):
        fair_hierarchy_score(KMeans(2, n_init=1), X, sensitive_features=s)
    with pytest.raises(ValueError, match="fairness_weight"):
        fair_hierarchy_score(
            FairHierarchicalClustering(), X, sensitive_features=s, fairness_weight=-1
        )
    with pytest.raises(ValueError, match="needs sensitive_features"):
        fair_hierarchy_score(FairHierarchicalClustering(), X)
