# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The point-mass filter and the tail cut of RobustSingleIndexRegressor (issue 29, item 2).

Seeds 4000-4012 were not used while these were developed.
"""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.special import ndtr

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor
from skpapers.linear_model._single_index.robust_statistics import (
    _tail_cut,
    covariate_filter,
    heavy_tail_direction,
    lattice_loadings,
    point_mass_mask,
    robust_whitening,
)


def _whitened(X):
    location, W, Z = robust_whitening(X, "trimmed", 0.25, np.random.RandomState(0))
    return Z, W


# at d = 50 (15 % of the rows at 1.5 along u), the symmetric kurtosis pursuit
# (100 steps, not converging) missed the mass on 7 of seeds 8100-8111, these two
# included; the one-unit fixed point from four start bases found all 12
@pytest.mark.parametrize(
    "seed, n, d, at",
    [(4000, 10_000, 20, 1.3), (4001, 10_000, 20, 1.3), (8103, 20_000, 50, 1.5),
     (8104, 20_000, 50, 1.5)],
)
def test_point_mass_mask_finds_a_planted_point_mass(seed, n, d, at):
    rng = np.random.RandomState(seed)
    Z = rng.standard_normal((n, d))
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    planted = rng.rand(n) < 0.15
    Z[planted] += (at - Z[planted] @ u)[:, None] * u
    drop, planes = point_mass_mask(*_whitened(Z)[:1], 0.25)
    assert drop[planted].mean() >= 0.99
    # the window also takes the Gaussian rows that happen to lie in it: a few
    assert drop.sum() <= 1.1 * planted.sum()
    assert len(planes) == 1


@pytest.mark.parametrize("design", ["gauss", "t3", "exponential", "discrete"])
@pytest.mark.parametrize("d", [20, 50])
def test_point_mass_mask_spares_clean_designs(design, d):
    rng = np.random.RandomState(4002 + d)
    n = 10_000
    if design == "gauss":
        X = rng.standard_normal((n, d))
    elif design == "t3":  # multivariate t with 3 degrees of freedom
        X = rng.standard_normal((n, d)) / np.sqrt(rng.chisquare(3, size=(n, 1)) / 3)
    elif design == "exponential":
        X = rng.exponential(size=(n, d))
    else:  # a binary and two integer columns among Gaussian ones
        X = rng.standard_normal((n, d))
        X[:, 0] = rng.rand(n) < 0.5
        X[:, 1] = rng.poisson(3.0, n)
        X[:, 2] = rng.randint(0, 70, n)
    Z, W = _whitened(X)
    drop, _ = point_mass_mask(Z, 0.25, lattice_loadings(X, W))
    assert drop.mean() <= 0.01


@pytest.mark.parametrize("eps", [0.1, 0.2])
@pytest.mark.parametrize("link", ["gelu", "tanh"])
def test_point_mass_attack_within_the_fair_oracle(link, eps):
    # each corrupted row has x . u = 1.5 for a hidden u and a residual under the
    # Huber clip: 2.1-4.5x (eps 0.1) and 3.6-6.9x (eps 0.2) the fair oracle before
    # the filter (seeds 2000-2007 of the benchmark)
    worst = 0.0
    for seed in (4003, 4004, 4005):
        X, y, coef, outliers = make_contaminated_sim(
            10_000, 20, link, (2.5, 0.5), eps, "point_mass", random_state=seed
        )
        est = RobustSingleIndexRegressor(link, random_state=0).fit(X, y)
        oracle = RobustSingleIndexRegressor(link, random_state=0).fit(
            X[~outliers], y[~outliers]
        )
        ratio = np.linalg.norm(est.coef_ - coef) / np.linalg.norm(oracle.coef_ - coef)
        worst = max(worst, ratio)
        assert est.covariate_mask_[outliers].mean() <= 0.01
        # contamination_ counts the rows the point-mass filter removed
        assert est.contamination_ >= eps
    assert worst <= 1.25


def test_tail_cut_sees_rows_left_beyond_three_robust_sd():
    # a tenth of the rows spread at ten times the clean variance: only the count
    # beyond 3 robust sd shows them (the 2-3 sd bands are within 4 sd of chance)
    rng = np.random.RandomState(4006)
    tau = rng.standard_normal(10_000)
    tau[:1000] *= np.sqrt(10.0)
    keep = np.abs(tau) < 4.5
    kept, gaussian = _tail_cut([tau], keep, budget=5000)
    assert kept.sum() < keep.sum()
    assert not kept[np.abs(tau) > 1.6].any()
    # one cut: the Gaussian share beyond 1.5 sd of the rows it saw
    assert gaussian == pytest.approx(2 * ndtr(-1.5) * keep.sum())
    # a cut the budget stops drops no more Gaussian rows than rows
    kept, gaussian = _tail_cut([tau], keep, budget=300)
    assert keep.sum() - kept.sum() == 300
    assert gaussian == 300
    for seed in range(4007, 4012):  # Gaussian projections: nothing goes
        tau = np.random.RandomState(seed).standard_normal(10_000)
        keep = np.ones(10_000, dtype=bool)
        assert_array_equal(_tail_cut([tau], keep, budget=5000)[0], keep)
        assert _tail_cut([tau], keep, budget=5000)[1] == 0.0


def test_tail_cut_cuts_along_the_most_significant_direction_first():
    # a fifth of the rows spread along e1; tau_b is 20 degrees from it, so its tail
    # is heavy too, but less: cut first along it (the filter's last direction), the
    # outliers' tail along e1 thins, and 55 of them stay beyond 1.8 along e1
    rng = np.random.RandomState(11410)
    Z = rng.standard_normal((10_000, 2))
    Z[:2000, 0] *= np.sqrt(10.0)
    keep = np.abs(Z[:, 0]) < 3.5
    tau_a, tau_b = Z[:, 0], Z @ np.array([np.cos(0.35), np.sin(0.35)])
    both = _tail_cut([tau_b, tau_a], keep, budget=5000)[0]
    assert_array_equal(both, _tail_cut([tau_a], keep, budget=5000)[0])
    assert not both[np.abs(Z[:, 0]) > 1.8].any()
    assert both[2000:].mean() > 0.85  # the clean rows beyond 1.5 robust sd only
    # the order given would have cut along tau_b, and left outliers far along e1
    first_b = _tail_cut([tau_b], keep, budget=5000)[0]
    assert first_b.sum() < keep.sum()
    assert (first_b[:2000] & (np.abs(Z[:2000, 0]) > 1.8)).sum() > 20
    assert_array_equal(_tail_cut([tau_a], first_b, budget=5000)[0], first_b)


@pytest.mark.parametrize("seed", [4010, 4011, 4012])
def test_spread_hijack_with_tanh_within_twice_the_fair_oracle(seed):
    # was 2.3-2.7x on 3 of 8 benchmark seeds at eps = 0.1 before the count beyond 3 sd
    X, y, coef, outliers = make_contaminated_sim(
        10_000, 20, "tanh", (2.5, 0.5), 0.1, "spread_hijack", random_state=seed
    )
    est = RobustSingleIndexRegressor("tanh", random_state=0).fit(X, y)
    oracle = RobustSingleIndexRegressor("tanh", random_state=0).fit(X[~outliers], y[~outliers])
    ratio = np.linalg.norm(est.coef_ - coef) / np.linalg.norm(oracle.coef_ - coef)
    assert ratio <= 2.0


@pytest.mark.parametrize("seed", [4013, 4014])
def test_a_point_mass_larger_than_twice_the_contamination_refutes_it(seed):
    # a fifth of the rows on a point mass with contamination=0.05: the filter
    # drops at most a tenth of the rows and the fit explained the rest, so
    # nothing warned (error 0.069 / 0.068 against 0.024 / 0.032 for "auto" on
    # these data). The rows on the mass found now count against the given number
    X, y, coef, _ = make_contaminated_sim(4000, 10, "gelu", (2.5, 0.5), 0.2, "point_mass",
                                          random_state=seed)
    with pytest.warns(UserWarning, match=r"contamination=0.05 is contradicted.*lie on point"):
        under = RobustSingleIndexRegressor(contamination=0.05, random_state=0).fit(X, y)
    auto = RobustSingleIndexRegressor(random_state=0).fit(X, y)
    assert_array_equal(under.coef_, auto.coef_)  # the refit is "auto"
    assert np.linalg.norm(auto.coef_ - coef) < 0.04


def test_a_subsample_fit_finds_a_point_mass_whatever_the_random_state():
    # n = 6e4 > 2 x the 20 000-row subsample, d = 50, a tenth of the rows on a
    # point mass: looking for its direction on the subsample found it for some
    # random_state only (2 of 5 missed on these data, spread 0.98 of the error);
    # on twice the subsample's rows of the whole data, every time
    X, y, coef, outliers = make_contaminated_sim(
        60_000, 50, "gelu", (2.5, 0.5), 0.1, "point_mass", random_state=8202
    )
    fits = [RobustSingleIndexRegressor(random_state=seed).fit(X, y) for seed in (0, 2)]
    for est in fits:
        assert est.covariate_mask_[outliers].mean() <= 0.01
    errors = [np.linalg.norm(est.coef_ - coef) for est in fits]
    assert max(errors) < 0.015
    assert np.linalg.norm(fits[0].coef_ - fits[1].coef_) < 0.1 * np.mean(errors)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", [11201, 11206])
def test_tail_cut_along_every_direction_of_the_filter(seed):
    # a fifth of the rows spread at ten times the clean variance along the weakest
    # direction of an ill-conditioned covariance, tanh: once the down-weighting thins
    # their tail, the filter's last eigenvector can turn away from it; the tail test
    # along the earlier directions still sees it (within 3x the same estimator on the
    # clean rows, the fair oracle; 2.2x on seed 11206, 4.8x with the last direction only)
    ours, oracle = _spread_hijack_errors(seed)
    assert ours <= 3 * oracle, (seed, ours, oracle)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", [11303, 11305])
def test_tail_cut_along_the_most_leptokurtic_direction(seed):
    # the same attack where none of the filter's directions sees the tail (its last
    # one at |cos| 0.08 and 0.07 from the attack's): the most leptokurtic direction,
    # found on the even rows, does (|cos| 0.97 and 0.98), and its tail on the odd
    # rows is heavy on both sides (3.49 and 3.82 times the fair oracle without it,
    # 1.98 and 2.06 with it)
    ours, oracle = _spread_hijack_errors(seed)
    assert ours <= 3 * oracle, (seed, ours, oracle)


def _spread_hijack_errors(seed):
    """Errors of ours and of the fair oracle: condition number 1e3, tanh, spread hijack 0.2."""
    X, y, coef, out = make_contaminated_sim(
        10_000, 20, "tanh", (2.5, 0.5), 0.2, "spread_hijack", random_state=seed,
        condition_number=1e3,
    )
    evals, evecs = np.linalg.eigh(np.cov(X[~out], rowvar=False))
    root = (evecs * np.sqrt(evals)) @ evecs.T

    def error(rows):
        est = RobustSingleIndexRegressor("tanh", random_state=seed).fit(X[rows], y[rows])
        return float(np.linalg.norm(root @ (est.coef_ - coef)))

    return error(np.ones(out.size, dtype=bool)), error(~out)


def test_heavy_tail_direction_finds_a_spread_along_one_direction():
    # a fifth of the rows spread at ten times the variance along u: the scale mixture
    # is the most leptokurtic direction; too few rows per feature: no direction
    rng = np.random.RandomState(4020)
    Z = rng.standard_normal((8000, 20))
    u = rng.standard_normal(20)
    u /= np.linalg.norm(u)
    spread = rng.uniform(size=8000) < 0.2
    Z[spread] += (3.0 * rng.standard_normal(spread.sum()))[:, None] * u
    assert abs(heavy_tail_direction(Z) @ u) > 0.95
    assert heavy_tail_direction(Z[:1999]) is None  # below 2 000 rows
    wide = np.tile(Z[:2200], (1, 3))  # 60 features: below 40 rows per feature
    assert heavy_tail_direction(wide) is None
    assert heavy_tail_direction(wide[:, :50]) is not None


def test_tail_cut_tests_each_direction_on_its_own_rows():
    # a tail planted on even rows only: tested on the odd rows, nothing is cut
    rng = np.random.RandomState(4021)
    tau = rng.standard_normal(10_000)
    tau[:4000:2] *= 3.0
    keep = np.ones(10_000, dtype=bool)
    odd = np.arange(10_000) % 2 == 1
    kept, gaussian = _tail_cut([tau], keep, budget=5000, tested=[odd])
    assert kept.all() and gaussian == 0
    kept, _ = _tail_cut([tau], keep, budget=5000)  # on all rows: cut beyond 1.5 sd
    assert not kept[np.abs(tau) > 2.0].any() and kept[np.abs(tau) < 1.5].all()


def test_tail_cut_on_held_out_rows_needs_both_sides():
    # a fifth of the rows at three times the sd on both sides: tested on the odd rows,
    # cut beyond 2 robust sd (not 1.5), with its Gaussian share 2 Phi(-2); the same
    # rows pushed to one side only (a skewed law) are not cut
    rng = np.random.RandomState(4026)
    tau = rng.standard_normal(10_000)
    wide = rng.uniform(size=10_000) < 0.2
    tau[wide] *= 3.0
    keep = np.ones(10_000, dtype=bool)
    odd = np.arange(10_000) % 2 == 1
    kept, gaussian = _tail_cut([tau], keep, budget=5000, tested=[odd])
    med = np.median(tau[odd])  # the scale is the tested rows'
    sd = 1.4826 * np.median(np.abs(tau[odd] - med))
    assert not kept[np.abs(tau - med) > 2.01 * sd].any()
    assert kept[np.abs(tau - med) < 1.99 * sd].all()
    assert gaussian == pytest.approx(2 * ndtr(-2.0) * 10_000)
    tau[wide] = np.abs(tau[wide])  # the same tail on one side
    kept, gaussian = _tail_cut([tau], keep, budget=5000, tested=[odd])
    assert kept.all() and gaussian == 0
    kept, _ = _tail_cut([tau], keep, budget=5000)  # tested on all rows, two-sided
    assert not kept.all()


@pytest.mark.parametrize("d", [20, 50])
def test_the_heavy_tail_test_spares_clean_rows(d):
    # the direction was chosen for its fourth moment by the even rows; on the odd
    # ones the test does not fire on Gaussian rows (the filter keeps the same rows
    # as without the direction)
    for seed in range(4022, 4026):
        Z = np.random.RandomState(seed).standard_normal((10_000, d))
        rng = np.random.RandomState(0)
        with_heavy = covariate_filter(Z, 0.25, rng)
        without = covariate_filter(Z, 0.25, np.random.RandomState(0), state={"heavy": None})
        assert_array_equal(with_heavy, without)
