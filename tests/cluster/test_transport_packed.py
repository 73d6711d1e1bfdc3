# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Packed data (skada's sample_domain): one output row per row of X, in its place."""

import logging

import numpy as np
import pandas as pd
import pytest
import sklearn
from scipy.spatial.distance import cdist
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpapers.cluster import TransportClustering
from skpapers.datasets import make_shifted_gaussians
from skpapers.testing import assert_same_partition


@pytest.fixture
def packed():
    X, Y, _, _ = make_shifted_gaussians(80, n_clusters=4, sigma=0.2, random_state=5)
    Y = Y[:60] * 3.0 + 1.0
    rng = np.random.default_rng(0)
    order = rng.permutation(140)  # sources and targets interleaved
    data = np.vstack([X, Y])[order]
    domain = np.r_[np.ones(80), -np.ones(60)][order]
    return data, domain, X, Y, order


def test_every_per_row_output_has_a_row_per_packed_row_in_its_place(packed):
    data, domain, X, Y, order = packed
    pipe = make_pipeline(StandardScaler(), TransportClustering(4, random_state=0))
    labels = pipe.fit_predict(data, transportclustering__sample_domain=domain)
    est = pipe[-1]
    source = domain > 0
    assert labels.shape == (140,)
    np.testing.assert_array_equal(labels[source], np.argmax(est.Q_, axis=1))
    np.testing.assert_array_equal(labels[~source], est.target_labels_)
    np.testing.assert_array_equal(est.labels_, labels)
    scaled = pipe[0].transform(data)
    D = est.transform(scaled, sample_domain=domain)
    assert D.shape == (140, 4)
    np.testing.assert_allclose(D[source], est.transform(scaled[source]))
    predicted = pipe.predict(data, sample_domain=domain)
    np.testing.assert_array_equal(predicted[source], est.predict(scaled[source]))
    np.testing.assert_array_equal(predicted[~source], est.predict_target(scaled[~source]))
    np.testing.assert_array_equal(predicted, np.argmin(D, axis=1))
    frame = pd.DataFrame(data)
    frame["cluster"] = pipe.fit_predict(frame, transportclustering__sample_domain=domain)
    # the same clusters as fitting the two sides by hand, whatever the row order
    by_hand = TransportClustering(4, random_state=0).fit(scaled[source], X_target=scaled[~source])
    assert_same_partition(by_hand.labels_, labels[source])


def test_fit_transform_on_packed_rows(packed):
    data, domain, *_ = packed
    est = TransportClustering(4, random_state=0)
    D = est.fit_transform(data, sample_domain=domain)
    np.testing.assert_allclose(D, est.transform(data, sample_domain=domain))
    assert D.shape == (140, 4)


def test_several_domains_of_one_sign_are_an_error(packed):
    data, domain, *_ = packed
    three = domain.copy()
    three[np.flatnonzero(domain < 0)[:20]] = -2
    three[np.flatnonzero(domain < 0)[20:40]] = -3
    with pytest.raises(ValueError, match="3 target domains .*one source domain with one target"):
        TransportClustering(4).fit(data, sample_domain=three)
    est = TransportClustering(4, random_state=0).fit(data, sample_domain=domain)
    with pytest.raises(ValueError, match="3 target domains"):
        est.predict(data, sample_domain=three)


def test_x_target_through_a_transforming_pipeline_is_refused(packed):
    _, _, X, Y, _ = packed
    pipe = make_pipeline(StandardScaler(), TransportClustering(4, random_state=0))
    with pytest.raises(ValueError, match="Pipeline whose steps transform X only.*sample_domain"):
        pipe.fit(X, transportclustering__X_target=Y)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = make_pipeline(
            StandardScaler(), TransportClustering(4).set_fit_request(X_target=True)
        )
        with pytest.raises(ValueError, match="Pipeline whose steps transform X only"):
            routed.fit(X, X_target=Y)
    # nothing transforms X before it: X_target is fine
    make_pipeline("passthrough", TransportClustering(4, random_state=0)).fit(
        X, transportclustering__X_target=Y
    )


def test_messages_name_x_target_and_log_costs_in_the_data_units(packed, caplog):
    _, _, X, Y, _ = packed
    bad = Y.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X_target contains NaN"):
        TransportClustering(4).fit(X, X_target=bad)
    with caplog.at_level(logging.INFO, logger="skpapers"):
        est = TransportClustering(4, verbose=1, random_state=0).fit(1e6 * X, X_target=1e6 * Y)
    text = caplog.text
    assert "working units" not in text
    final = [line for line in text.splitlines() if "done: cost" in line][0]
    assert f"{est.cost_:.6g}" in final


@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean"])
def test_route_table_adds_up_to_the_plan(metric):
    X, Y, _, _ = make_shifted_gaussians(120, n_clusters=5, sigma=0.2, random_state=9)
    Y = Y[:90]
    tc = TransportClustering(5, metric=metric, random_state=0).fit(X, X_target=Y)
    table = tc.route_table()
    assert isinstance(table, pd.DataFrame) and table.shape == (5, 5)
    assert table["cost"].sum() == pytest.approx(tc.cost_, rel=1e-9)
    assert table["mass"].sum() == pytest.approx(1.0)
    assert table["sources"].sum() == 120 and table["targets"].sum() == 90
    # brute force on the dense plan: route k carries Q[:, k] R[:, k]^T / g_k
    C = cdist(X, Y, metric)
    for k in range(5):
        route = np.outer(tc.Q_[:, k], tc.R_[:, k]) / tc.g_[k]
        assert table.loc[k, "cost"] == pytest.approx(np.sum(route * C), rel=1e-8)
        assert table.loc[k, "mean cost"] == pytest.approx(np.sum(route * C) / tc.g_[k])
