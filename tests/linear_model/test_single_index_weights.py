# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""RobustSingleIndexRegressor: integer and fractional weights, the trimmed R^2 scorer, links."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import ndtr
from sklearn.metrics import r2_score
from sklearn.model_selection import cross_val_score

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor
from skpapers.linear_model._single_index.estimator import _weighted_rows
from skpapers.metrics import trimmed_r2_score, trimmed_r2_scorer


def _data(seed, n=800, d=6, eps=0.1, attack="labels"):
    return make_contaminated_sim(n, d, "gelu", (2.5, 0.5), eps, attack, random_state=seed)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", [41, 42])
def test_integer_weights_are_row_repetitions(seed):
    X, y, _, _ = _data(seed)
    weight = np.random.RandomState(seed).randint(0, 4, size=X.shape[0])
    kept = weight.copy()
    weighted = RobustSingleIndexRegressor(random_state=0).fit(X, y, sample_weight=weight)
    repeated = RobustSingleIndexRegressor(random_state=0).fit(
        np.repeat(X, weight, axis=0), np.repeat(y, weight)
    )
    assert_allclose(weighted.coef_, repeated.coef_, rtol=0, atol=1e-12)
    assert weighted.intercept_ == pytest.approx(repeated.intercept_, abs=1e-12)
    assert_array_equal(weight, kept)  # not modified
    ones = RobustSingleIndexRegressor(random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
    plain = RobustSingleIndexRegressor(random_state=0).fit(X, y)
    assert_array_equal(ones.coef_, plain.coef_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fractional_weights_are_apportioned_rows():
    X, y, truth, bad = make_contaminated_sim(
        3000, 10, "tanh", 0.5, 0.1, "hijack", random_state=9710
    )
    plain = RobustSingleIndexRegressor("tanh", random_state=0).fit(X, y)
    # weights below 1 on every row: one row each, the plain fit
    halves = RobustSingleIndexRegressor("tanh", random_state=0).fit(
        X, y, sample_weight=np.full(len(y), 0.37)
    )
    assert_array_equal(halves.coef_, plain.coef_)
    # the hijacking rows weighted 0.01: the fit is that of the clean rows
    weight = np.where(bad, 0.01, 1.0)
    weighted = RobustSingleIndexRegressor("tanh", random_state=0).fit(X, y, sample_weight=weight)
    clean = RobustSingleIndexRegressor("tanh", random_state=0).fit(X[~bad], y[~bad])
    error = {
        name: np.linalg.norm(est.coef_ - truth)
        for name, est in [("plain", plain), ("weighted", weighted), ("clean", clean)]
    }
    assert error["plain"] > 1.5 * error["clean"]
    assert error["weighted"] < 1.2 * error["clean"]
    assert_array_equal(weight, np.where(bad, 0.01, 1.0))  # not modified


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 50, allow_subnormal=False), min_size=2, max_size=40),
    st.booleans(),
)
def test_weighted_rows_counts_are_floor_or_ceil_of_shares(weights, integer):
    weight = np.rint(weights) if integer else np.asarray(weights)
    total, positive = weight.sum(), np.count_nonzero(weight)
    rows = max(int(np.rint(total)), positive)
    X = np.arange(len(weight), dtype=float)[:, None]
    if rows < 2:
        with pytest.raises(ValueError, match="fewer than 2 rows|at least one non-zero"):
            _weighted_rows(X, X[:, 0], weight)
        return
    _, y = _weighted_rows(X, X[:, 0], weight)
    counts = np.bincount(y.astype(np.intp), minlength=len(weight))
    share = rows * weight / total
    assert counts.sum() == rows
    assert np.all(counts >= np.floor(share - 1e-9)) and np.all(counts <= np.ceil(share + 1e-9))
    assert np.all(counts[weight == 0] == 0)
    if integer:
        assert_array_equal(counts, weight)


def test_degenerate_weights_are_refused():
    X, y, _, _ = _data(43, n=100)
    weight = np.ones(100)
    with pytest.raises(ValueError, match="Negative values"):
        RobustSingleIndexRegressor().fit(X, y, sample_weight=-weight)
    one = np.zeros(100)
    one[3] = 1.2
    with pytest.raises(ValueError, match="fewer than 2 rows"):
        RobustSingleIndexRegressor().fit(X, y, sample_weight=one)
    with pytest.raises(ValueError, match="finite"):
        RobustSingleIndexRegressor().fit(X, y, sample_weight=np.full(100, 1e308))


def test_trimmed_r2_known_values():
    y = np.arange(10.0)
    assert trimmed_r2_score(y, y) == 1.0
    assert trimmed_r2_score(y, np.full(10, np.median(y))) == pytest.approx(0.0)
    # trim 0: R^2 around the median; the median of 0..9 is 4.5, mean square 8.25
    pred = y + 1.0
    assert trimmed_r2_score(y, pred, trim=0) == pytest.approx(1 - 1 / 8.25)
    wild = y.copy()
    wild[0] = 1e6
    assert r2_score(y, wild) < -1e9
    assert trimmed_r2_score(y, wild, trim=0.1) == 1.0
    assert trimmed_r2_score(np.ones(5), np.ones(5)) == 1.0
    assert trimmed_r2_score(np.ones(5), np.zeros(5)) == 0.0
    with pytest.raises(ValueError, match="trim must be"):
        trimmed_r2_score(y, y, trim=0.5)
    with pytest.raises(ValueError, match="1-D"):
        trimmed_r2_score(y[:, None], y[:, None])


def test_trimmed_r2_scorer_ranks_fits_on_contaminated_folds():
    X, y, coef, _ = _data(44, n=1500, eps=0.1, attack="labels")
    robust = cross_val_score(
        RobustSingleIndexRegressor(random_state=0), X, y, cv=3, scoring=trimmed_r2_scorer
    )
    plain = cross_val_score(
        RobustSingleIndexRegressor(contamination=0, aggregator="mean", random_state=0),
        X,
        y,
        cv=3,
        scoring=trimmed_r2_scorer,
    )
    assert np.all(robust > plain)
    # R^2 ranks them the other way round: the outliers dominate it
    assert np.mean(
        cross_val_score(RobustSingleIndexRegressor(random_state=0), X, y, cv=3, scoring="r2")
    ) < np.mean(
        cross_val_score(
            RobustSingleIndexRegressor(contamination=0, aggregator="mean", random_state=0),
            X,
            y,
            cv=3,
            scoring="r2",
        )
    )


def test_missing_derivative_warned_once_at_the_users_call():
    X, y, _, _ = _data(45, n=300, d=4)

    def gelu(z):
        return z * ndtr(z)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_val_score(RobustSingleIndexRegressor(gelu, random_state=0), X, y, cv=3)
        RobustSingleIndexRegressor(gelu, random_state=0).fit(X, y)
    mine = [w for w in caught if "no derivative" in str(w.message)]
    assert len(mine) == 1
    assert mine[0].filename == __file__


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("attack", ["labels", "hijack"])
def test_contradicted_contamination_warns_and_refits_as_auto(attack):
    # fresh seeds: 20 % corrupted rows and contamination=0.05
    for seed in (310, 311):
        X, y, coef, _ = make_contaminated_sim(
            3000, 10, "gelu", (2.5, 0.5), 0.2, attack, random_state=seed
        )
        with pytest.warns(UserWarning, match=r"contamination=0.05 is contradicted.*Refitting"):
            est = RobustSingleIndexRegressor(contamination=0.05, random_state=seed).fit(X, y)
        auto = RobustSingleIndexRegressor(random_state=seed).fit(X, y)
        assert_allclose(est.coef_, auto.coef_)
        assert 0.15 <= est.contamination_ <= 0.3
        assert np.linalg.norm(est.coef_ - coef) < 0.08
        # the true fraction given: no warning
        X, y, coef, _ = make_contaminated_sim(
            3000, 10, "gelu", (2.5, 0.5), 0.05, attack, random_state=seed
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            RobustSingleIndexRegressor(contamination=0.05, random_state=seed).fit(X, y)
        assert not [w for w in caught if "contradicted" in str(w.message)]
