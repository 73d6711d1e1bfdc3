# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Every whitening of the robust SIM is free of the units of X."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # MinCovDet's own determinant warnings
@settings(max_examples=10, deadline=None)
@given(log10_c=st.floats(min_value=-300, max_value=300), whiten=st.sampled_from(["mcd", "diag"]))
def test_robust_whitenings_do_not_depend_on_the_units(log10_c, whiten):
    # X -> c X divides coef_ by c; "mcd" used to fail below c = 1e-10 (MinCovDet
    # saw a covariance "equal to 0") and above c = 1e200 (overflow)
    X, y, _, _ = make_contaminated_sim(300, 4, "gelu", 0.3, 0.1, "labels", random_state=15)
    params = {"whiten": whiten, "random_state": 0, "max_iter": 20}
    ref = RobustSingleIndexRegressor(**params).fit(X, y)
    c = 10.0**log10_c
    est = RobustSingleIndexRegressor(**params).fit(X * c, y)
    assert_allclose(est.coef_ * c, ref.coef_, rtol=1e-8, atol=1e-10)
    assert_allclose(est.intercept_, ref.intercept_, atol=1e-10)
    assert np.isfinite(est.predict(X[:5] * c)).all()


def test_independent_columns_sample_shortcut_agrees_with_all_rows():
    from skpapers.linear_model._single_index.solver import _independent_columns

    rng = np.random.RandomState(51)
    X = rng.standard_normal((5000, 6))
    X[:, 4] = X[:, 0] - 2 * X[:, 1]  # a combination on all rows
    X[:, 5] = 0.0
    X[7, 5] = 1.0  # constant on the sample, moving on all rows: kept
    short = _independent_columns(X, sample_rows=500)
    full = _independent_columns(X, sample_rows=10**9)
    assert_array_equal(short[0], full[0])
    assert short[1] == full[1] == {4: "a combination of earlier columns"}
    clean = rng.standard_normal((5000, 6))
    assert_array_equal(_independent_columns(clean, sample_rows=500)[0], np.arange(6))


@pytest.mark.parametrize("attack", ["hijack", "spread_hijack"])
def test_fit_does_not_depend_on_random_state(attack):
    # the filters' power iterations start from exact eigenvectors (fresh seed, ill-conditioned
    # covariance): only the Lanczos start of the spectral step is random, converged to 1e-6
    X, y, coef, _ = make_contaminated_sim(
        3000, 10, "tanh", (2.5, 0.5), 0.1, attack, random_state=2101, condition_number=1e3
    )
    fits = [RobustSingleIndexRegressor("tanh", random_state=rs).fit(X, y).coef_ for rs in (0, 1, 2)]
    error = np.linalg.norm(fits[0] - coef)
    for other in fits[1:]:
        assert np.linalg.norm(other - fits[0]) <= 1e-3 * max(error, 1e-3)


def test_trimmed_mse_and_its_standard_error():
    from skpapers.linear_model._single_index.solver import _trimmed_mse_and_se

    r = np.array([1.0, -1.0, 2.0, -2.0, 100.0])
    mean, se = _trimmed_mse_and_se(r, 0.2)  # keeps 1, 1, 4, 4
    assert mean == 2.5
    assert se == pytest.approx(np.std([1, 1, 4, 4], ddof=1) / 2 / 2.5)
    assert _trimmed_mse_and_se(np.zeros(4), 0.1) == (0.0, 0.0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_refit_guard_tolerates_the_loss_sampling_error():
    # tanh, 20 % of the responses shifted below the Huber clip: the refit raised the trimmed
    # loss by 2.03 %, within its sampling error; a fixed 2 % guard rejected it and kept a
    # tilted fit (0.168 against 0.082 when accepted)
    X, y, coef, _ = make_contaminated_sim(
        10_000, 20, "tanh", (2.5, 0.5), 0.2, "subclip", random_state=1005
    )
    est = RobustSingleIndexRegressor("tanh", random_state=0).fit(X, y)
    assert np.linalg.norm(est.coef_ - coef) < 0.1


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 60), block=st.integers(1, 17), seed=st.integers(0, 2**16))
def test_compress_rows_equals_boolean_indexing(n, block, seed):
    # the in-place row selection of the all-rows pass gives exactly A[mask]
    from skpapers.linear_model._single_index.robust_statistics import compress_rows

    rng = np.random.RandomState(seed)
    A = rng.standard_normal((n, 3))
    mask = rng.rand(n) < rng.rand()
    expected = A[mask]
    assert_array_equal(compress_rows(A, mask, block=block), expected)


def test_residual_refit_returns_the_residuals_of_its_fit():
    # the refit's residuals are reused for contamination_: they are those of the returned fit
    from skpapers.linear_model._single_index.solver import _residual_refit
    from skpapers.utils._links import resolve_link
    from skpapers.utils._progress import Progress

    rng = np.random.RandomState(52)
    Z = rng.standard_normal((800, 4))
    y = np.tanh(Z @ np.array([1.0, -0.5, 0.2, 0.0])) + 0.1 * rng.standard_normal(800)
    y[:40] += 3.0
    link = resolve_link("tanh")
    theta, b, _, _, r = _residual_refit(
        Z, y, np.array([0.8, -0.3, 0.1, 0.1]), 0.0, link, fit_intercept=True,
        location_z=np.zeros(4), learning_rate="auto", tol=1e-6, rng=rng,
        verbose=Progress("single_index", 0), guard_eps=0.1,
    )
    assert_array_equal(r, y - link.f(Z @ theta + b))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_median_mad_equals_the_columnwise_computation(dtype):
    # _median_mad partitions a transposed copy in place: the same numbers as numpy's
    # median along axis 0, the mean-deviation spread for zero-MAD columns included
    from skpapers.linear_model._single_index.robust_statistics import (
        _MAD_TO_SD,
        _MEAN_AD_TO_SD,
        _median_mad,
    )

    rng = np.random.RandomState(54)
    X = rng.standard_normal((20001, 6))
    X[:, 1] = (rng.rand(20001) < 0.2) * rng.exponential(5, 20001)  # MAD 0
    X[:, 2] = 2.0  # constant
    X = X.astype(dtype)
    med = np.median(X, axis=0)
    dev = np.abs(X - med)
    mad = _MAD_TO_SD * np.median(dev, axis=0)
    mad[1], mad[2] = _MEAN_AD_TO_SD * np.mean(dev, axis=0)[1], 1.0
    got = _median_mad(X)
    assert_array_equal(got[0], med)
    assert_array_equal(got[1], mad)


@pytest.mark.parametrize("n", [5, 4095, 4096, 20001, 60000])
@pytest.mark.parametrize(
    "kind",
    ["normal", "sorted", "reversed", "ties", "signed_zeros", "float32", "mode", "nan", "inf"],
)
def test_fast_median_is_numpys_median_bit_for_bit(n, kind):
    # _median brackets the middle from a systematic sample and partitions only the
    # values inside: the same order statistics, so the same number as np.median
    from skpapers.linear_model._single_index.robust_statistics import _median, _row_medians

    rng = np.random.RandomState(n)
    x = rng.standard_normal(n)
    if kind == "sorted":
        x.sort()
    elif kind == "reversed":
        x = np.sort(x)[::-1].copy()
    elif kind == "ties":
        x = np.round(x, 1)
    elif kind == "signed_zeros":
        x[: n // 2] = 0.0
        x[: n // 4] = -0.0
    elif kind == "float32":
        x = x.astype(np.float32)
    elif kind == "mode":  # more than half of the values on one
        x[rng.rand(n) < 0.6] = 1.5
    elif kind == "nan":
        x[n // 3] = np.nan
    elif kind == "inf":
        x[: n // 10] = np.inf
    want, got = np.median(x), _median(x)
    assert type(got) is type(want)
    assert_array_equal(np.signbit(got), np.signbit(want))
    assert_array_equal(got, want)
    rows = np.vstack([x, x[::-1], -x])
    assert_array_equal(_row_medians(rows), np.median(rows, axis=1))
