# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of SingleIndexDisplay: what it draws matches the fit, row by row."""

import functools

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor, SingleIndexDisplay

matplotlib.use("Agg")



@functools.cache
def _fitted(attack="hijack", n_samples=2000):
    X, y, _, outliers = make_contaminated_sim(
        n_samples, 10, link="tanh", attack=attack, random_state=0
    )
    est = RobustSingleIndexRegressor("tanh", random_state=0).fit(X, y)
    X.flags.writeable = y.flags.writeable = False  # shared between tests: read only
    return est, X, y, outliers


def _n_points(collections):
    return sum(c.get_offsets().shape[0] for c in collections)


def test_curve_is_the_link_over_the_index_range():
    est, X, y, _ = _fitted()
    display = SingleIndexDisplay.from_estimator(est, X, y)
    index = X @ est.coef_ + est.intercept_
    grid, curve = display.curve_.get_data()
    assert grid[0] == pytest.approx(index.min()) and grid[-1] == pytest.approx(index.max())
    assert_allclose(curve, np.tanh(grid))
    # the points are (index, y) and (index, y - predict)
    explained = display.scatter_["explained"]
    rows = ~(display.removed | display.unexplained)
    assert_allclose(explained[0].get_offsets(), np.c_[index[rows], y[rows]])
    assert_allclose(explained[1].get_offsets()[:, 1], (y - est.predict(X))[rows])


def test_markers_match_the_fit():
    est, X, y, _ = _fitted()
    display = SingleIndexDisplay.from_estimator(est, X, y)
    for panel in range(2):
        assert _n_points(c[panel] for c in display.scatter_.values()) == len(y)
        assert display.scatter_["removed"][panel].get_offsets().shape[0] == (
            ~est.covariate_mask_
        ).sum()
    # the rows removed or not explained are the ones contamination_ counts
    assert display.n_removed + display.n_unexplained == round(est.contamination_ * len(y))
    assert display.ax_[0].get_title() == (
        f"{display.n_removed} of 2000 rows removed by the filter, "
        f"{display.n_unexplained} not explained"
    )


def test_residual_band_is_three_robust_sd():
    est, X, y, _ = _fitted()
    display = SingleIndexDisplay.from_estimator(est, X, y)
    kept = est.covariate_mask_
    residual = y[kept] - np.tanh(X[kept] @ est.coef_ + est.intercept_)
    sd = 1.4826 * np.median(np.abs(residual))
    lower, upper = (line.get_ydata()[0] for line in display.band_)
    assert_allclose([lower, upper], [-3 * sd, 3 * sd])
    assert_array_equal(display.unexplained[kept], np.abs(residual) > 3 * sd)
    assert not display.unexplained[~kept].any()


@pytest.mark.parametrize("attack", ["labels", "gradient"])
def test_planted_outliers_are_marked(attack):
    # "labels" is caught by the residual rule, "gradient" by the covariate filter
    est, X, y, outliers = _fitted(attack)
    display = SingleIndexDisplay.from_estimator(est, X, y)
    marked = display.removed | display.unexplained
    assert marked[outliers].mean() > 0.8
    # the filter's tail test also drops clean rows far along one direction (about 13 %)
    assert marked[~outliers].mean() < 0.15


def test_subsample_is_deterministic_and_counts_all_rows():
    est, X, y, _ = _fitted()
    first = SingleIndexDisplay.from_estimator(est, X, y, max_points=500)
    second = SingleIndexDisplay.from_estimator(est, X, y, max_points=500)
    for panel in range(2):
        assert _n_points(c[panel] for c in first.scatter_.values()) == 500
    assert_array_equal(first.index, second.index)
    assert len(np.unique(first.index)) == 500
    full = SingleIndexDisplay.from_estimator(est, X, y)
    assert (first.n_removed, first.n_unexplained) == (full.n_removed, full.n_unexplained)
    assert first.ax_[0].get_title().endswith("(500 shown)")


def test_new_data_uses_the_residual_rule_only():
    est, X, y, _ = _fitted()
    X_new, y_new, _, _ = make_contaminated_sim(
        300, 10, link="tanh", attack="labels", random_state=1
    )
    with pytest.raises(ValueError, match="training=False"):
        SingleIndexDisplay.from_estimator(est, X_new, y_new)
    display = SingleIndexDisplay.from_estimator(est, X_new, y_new, training=False)
    assert not display.removed.any() and display.n_removed == 0
    residual = y_new - est.predict(X_new)
    sd = 1.4826 * np.median(np.abs(residual))
    assert_array_equal(display.unexplained, np.abs(residual) > 3 * sd)


def test_ax_is_honoured_and_checked():
    est, X, y, _ = _fitted()
    figure, axes = plt.subplots(2, 1)
    display = SingleIndexDisplay.from_estimator(est, X, y, ax=axes)
    assert display.figure_ is figure
    assert list(display.ax_) == list(axes)
    assert display.curve_.axes is axes[0] and display.band_[0].axes is axes[1]
    with pytest.raises(ValueError, match="2 Axes"):
        SingleIndexDisplay.from_estimator(est, X, y, ax=axes[0])
    with pytest.raises(ValueError, match="max_points"):
        SingleIndexDisplay.from_estimator(est, X, y, max_points=0)
    with pytest.raises(TypeError, match="RobustSingleIndexRegressor"):
        SingleIndexDisplay.from_estimator(object(), X, y)


def test_plot_kwargs_and_inputs_untouched():
    est, X, y, _ = _fitted()
    X_list, y_list = X.tolist(), y.tolist()
    display = SingleIndexDisplay.from_estimator(
        est, X_list, y_list, line_kwargs={"color": "tab:green"}, scatter_kwargs={"s": 1}
    )
    assert X_list == X.tolist() and y_list == y.tolist()
    assert display.curve_.get_color() == "tab:green"
    assert display.scatter_["explained"][0].get_sizes()[0] == 1
    first_figure = display.figure_
    assert display.plot() is display  # redraws the stored arrays on a new figure
    assert display.figure_ is not first_figure
    assert_allclose(display.curve_.get_ydata(), np.tanh(display.curve_.get_xdata()))
