# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The residual point-mass filter of RobustSingleIndexRegressor (issue 29, subclip).

Seeds 10450-10457 were not used while the filter was developed.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor
from skpapers.linear_model._single_index import robust_statistics
from skpapers.linear_model._single_index.robust_statistics import residual_mass_mask


def _subclip(link, seed, eps=0.1, n=10_000, d=20):
    return make_contaminated_sim(n, d, link, (2.5, 0.5), eps, "subclip", random_state=seed)


@pytest.mark.parametrize("link, seed", [("gelu", 10450), ("tanh", 10451)])
def test_subclip_within_twice_the_fair_oracle(link, seed):
    # corrupted responses shifted by +-1.2 robust sd of the noise, without noise:
    # under the Huber clip; before the filter 2.0-2.3x the fair oracle at eps 0.1
    X, y, coef, outliers = _subclip(link, seed)
    est = RobustSingleIndexRegressor(link, random_state=seed).fit(X, y)
    oracle = RobustSingleIndexRegressor(link, random_state=seed).fit(X[~outliers], y[~outliers])
    error = np.linalg.norm(est.coef_ - coef)
    assert error <= 2.0 * np.linalg.norm(oracle.coef_ - coef)
    # what the filter removed is reported: nearly all corrupted rows, few clean ones
    removed = ~est.residual_mask_
    assert removed[outliers].mean() >= 0.9
    assert removed[~outliers].mean() <= 0.03
    assert est.contamination_ >= removed.mean()


def test_residual_mask_is_all_true_on_clean_data():
    for link, noise, seed in [("gelu", (2.5, 0.5), 10452), ("relu", 0.5, 10453),
                              ("tanh", (2.5, 0.5), 10454)]:
        X, y, _, _ = make_contaminated_sim(10_000, 20, link, noise, 0.0, None,
                                           random_state=seed)
        for contamination in ("auto", 0.1):
            est = RobustSingleIndexRegressor(
                link, contamination=contamination, random_state=seed).fit(X, y)
            assert est.residual_mask_.all()
            assert est.residual_mask_.shape == (X.shape[0],)


@pytest.mark.parametrize("kind", ["integers", "zero-inflated"])
def test_discrete_responses_are_not_trimmed(kind):
    # integer responses, or a fifth of them at 0: point masses of y itself, whose
    # residuals concentrate where the fit is flat; they are the data's own
    X, y, _, _ = make_contaminated_sim(10_000, 20, "gelu", (2.5, 0.5), 0.0, None,
                                       random_state=10455)
    rng = np.random.RandomState(10455)
    y = np.round(y) if kind == "integers" else np.where(rng.rand(y.size) < 0.2, 0.0, y)
    est = RobustSingleIndexRegressor("gelu", contamination=0.1, random_state=10455).fit(X, y)
    assert est.residual_mask_.all()


def test_residual_mass_mask_skips_a_mass_of_repeated_responses():
    # the same mass of residuals is dropped when its responses are distinct, and
    # kept when they share a few values (a lattice of y)
    rng = np.random.RandomState(10456)
    n, d = 10_000, 5
    Z = rng.standard_normal((n, d))
    residual = 0.5 * rng.standard_t(2.5, size=n)
    on = rng.rand(n) < 0.05
    residual[on] = 0.4
    slope = np.ones(n)
    y = rng.standard_normal(n)
    drop, masses = residual_mass_mask(Z, residual, slope, y, budget=1000)
    assert drop[on].all() and len(masses) >= 1
    y[on] = rng.randint(0, 3, size=on.sum())
    drop, masses = residual_mass_mask(Z, residual, slope, y, budget=1000)
    assert not drop.any() and not masses


def test_subsample_fit_applies_the_masses_to_all_rows():
    # above 40 000 rows the masses are found on the subsample and their screens,
    # carried into the whitening of all rows, drop the rows of the whole data
    X, y, coef, outliers = _subclip("gelu", 10457, n=60_000)
    est = RobustSingleIndexRegressor("gelu", random_state=10457).fit(X, y)
    removed = ~est.residual_mask_
    assert removed[outliers].mean() >= 0.9
    assert removed[~outliers].mean() <= 0.03


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), share=st.floats(0.0, 0.3), budget=st.integers(0, 600),
       link=st.sampled_from(["identity", "relu"]))
def test_residual_mass_mask_never_drops_more_than_its_budget(seed, share, budget, link):
    # the documented cap (at most 2 eps n rows in the fit): whatever the masses; and
    # every mass is one of residuals (|v_0| >= 1/sqrt(2)), even where the slope
    # column has point masses of its own (constant for the identity, 0 on the
    # inactive rows of a ReLU)
    rng = np.random.RandomState(seed)
    n, d = 4000, 3
    Z = rng.standard_normal((n, d))
    residual = 0.5 * rng.standard_t(2.5, size=n)
    on = rng.rand(n) < share
    residual[on] = rng.choice([-0.4, 0.4], size=on.sum())
    slope = np.ones(n) if link == "identity" else (rng.rand(n) < 0.5).astype(float)
    drop, masses = residual_mass_mask(Z, residual, slope, rng.standard_normal(n), budget)
    assert drop.sum() <= budget
    assert drop.shape == (n,) and len(masses) <= 4
    assert all(abs(v[0]) >= 1 / np.sqrt(2) - 1e-12 for v, _, _ in masses)


# the robust gradient descent, before the masses are dropped, creeps along the tilt
# the mass makes and stops at max_iter with a ConvergenceWarning (it did before the
# refined peaks were searched); with max_iter=300 it converges, to errors within 3 %
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", [12601, 13203])
def test_a_tilted_mass_is_found_along_a_refined_direction(seed):
    # d = 50, a fifth of the rows on a point mass along u with responses shifted
    # under the clip: the fit tilts towards u, and the windows of the residuals'
    # two largest peaks refine to a direction at |cos| 0.98-0.99 from the mass's
    # but settle beside it; before the peaks along the refined directions were
    # searched too, nothing was found (3.59 and 2.66 times the fair oracle; 13203
    # is from seeds 13200-13207, not used while the search was developed)
    X, y, coef, outliers = make_contaminated_sim(
        10_000, 50, "gelu", (2.5, 0.5), 0.2, "point_mass", random_state=seed
    )
    est = RobustSingleIndexRegressor("gelu", random_state=seed).fit(X, y)
    oracle = RobustSingleIndexRegressor("gelu", random_state=seed).fit(
        X[~outliers], y[~outliers]
    )
    removed = ~est.residual_mask_
    assert removed[outliers].mean() >= 0.95
    assert removed[~outliers].mean() <= 0.04
    assert np.linalg.norm(est.coef_ - coef) <= 1.25 * np.linalg.norm(oracle.coef_ - coef)


def test_a_mass_of_the_slope_column_is_not_a_residual_mass():
    # with the identity link the design's -f'(s) column is constant: a refinement
    # turned towards it found ten rows "on a mass" of statsmodels' Engel table
    # (235 rows, food expenditure from income), none of which share a residual
    sm = pytest.importorskip("statsmodels.api", reason="engel ships with statsmodels")
    from sklearn.model_selection import train_test_split

    frame = sm.datasets.engel.load_pandas().data
    X, y = frame[["income"]].to_numpy(float), frame["foodexp"].to_numpy(float)
    X_tr, _, y_tr, _ = train_test_split(X, y, test_size=0.3, random_state=13407)
    est = RobustSingleIndexRegressor("identity", random_state=13407).fit(X_tr, y_tr)
    assert est.residual_mask_.all()


def test_refined_directions_are_searched_only_from_a_cluster(monkeypatch):
    # the peaks along refined directions cost four refinements more; they are
    # searched only when the residuals' largest peak is a cluster
    rng = np.random.RandomState(10458)
    n, d = 10_000, 20
    Z = rng.standard_normal((n, d))
    residual = 0.5 * rng.standard_t(2.5, size=n)
    slope = rng.uniform(0.2, 1.0, size=n)
    y = rng.standard_normal(n)
    _, scores = robust_statistics._local_peaks(residual, count=2)
    assert scores[0] < robust_statistics._RESIDUAL_CLUSTER
    calls = []
    refine = robust_statistics._refine_hyperplane
    monkeypatch.setattr(robust_statistics, "_refine_hyperplane",
                        lambda *a, **k: calls.append(1) or refine(*a, **k))
    drop, masses = residual_mass_mask(Z, residual, slope, y, budget=2000)
    assert not drop.any() and not masses
    assert len(calls) <= 2  # the two peaks along the fit's direction only
    # a tight cluster of a tenth of the rows (a tilted mass) scores far above, and
    # the peaks along the refined directions are searched: at most two per
    # direction, two directions; a cluster with noise is still not a point mass
    residual[: n // 10] = 0.3 + 0.02 * rng.standard_normal(n // 10)
    _, scores = robust_statistics._local_peaks(residual, count=2)
    assert scores[0] >= 2 * robust_statistics._RESIDUAL_CLUSTER
    calls.clear()
    drop, masses = residual_mass_mask(Z, residual, slope, y, budget=2000)
    assert 2 < len(calls) <= 6
    assert not drop.any() and not masses
