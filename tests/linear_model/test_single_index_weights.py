# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""RobustSingleIndexRegressor: frequency weights, the trimmed R^2 scorer, link warnings."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import ndtr
from sklearn.metrics import r2_score
from sklearn.model_selection import cross_val_score

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor
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


def test_fractional_and_degenerate_weights_are_refused():
    X, y, _, _ = _data(43, n=100)
    weight = np.ones(100)
    weight[7] = 0.5
    with pytest.raises(ValueError, match=r"non-negative integers.*0\.5 at row 7"):
        RobustSingleIndexRegressor().fit(X, y, sample_weight=weight)
    with pytest.raises(ValueError, match="Negative values"):
        RobustSingleIndexRegressor().fit(X, y, sample_weight=-weight)
    one = np.zeros(100)
    one[3] = 1
    with pytest.raises(ValueError, match="fewer than 2 rows"):
        RobustSingleIndexRegressor().fit(X, y, sample_weight=one)


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
