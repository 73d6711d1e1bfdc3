# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the subspace metrics."""

import numpy as np
import pytest

from skpapers.metrics import principal_angle, relative_restoration_error


def test_principal_angle_known_values():
    e = np.eye(4)
    assert principal_angle(e[:1], e[:1] + e[1:2]) == pytest.approx(45.0)
    assert principal_angle(e[:2], e[2:]) == pytest.approx(90.0)
    assert principal_angle(e[:2], e[:2]) == pytest.approx(0.0, abs=1e-12)
    # 2-D against 3-D: the smaller subspace lies inside the larger one
    assert principal_angle(e[:2], e[:3]) == pytest.approx(0.0, abs=1e-12)


def test_principal_angle_ignores_the_basis_and_is_accurate_for_tiny_angles():
    rng = np.random.default_rng(0)
    A = np.linalg.qr(rng.standard_normal((20, 3)))[0].T
    mix = rng.standard_normal((3, 3))
    assert principal_angle(A, mix @ A) == pytest.approx(0.0, abs=1e-9)
    theta = 1e-9  # rotate one basis vector by theta radians towards an orthogonal one
    e = np.linalg.qr(np.c_[A.T, rng.standard_normal(20)])[0][:, 3]
    B = A.copy()
    B[0] = np.cos(theta) * A[0] + np.sin(theta) * e
    assert principal_angle(A, B) == pytest.approx(np.degrees(theta), rel=1e-3)


def test_principal_angle_errors():
    with pytest.raises(ValueError, match="same number of columns"):
        principal_angle(np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match="A is zero"):
        principal_angle(np.zeros((1, 3)), np.eye(3))
    with pytest.raises(ValueError, match="B is zero"):
        principal_angle(np.eye(3), np.zeros((2, 3)))
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="B contains NaN or infinite"):
            principal_angle(np.eye(3), np.array([[1.0, bad, 0.0]]))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_restoration_errors_reject_non_finite_and_zero_inputs(bad):
    from skpapers.metrics import refined_restoration_error

    X = np.eye(3)
    Y = X.copy()
    Y[0, 1] = bad
    for fn in (relative_restoration_error,
               lambda a, b: refined_restoration_error(a, b, 2)):  # fmt: skip
        with pytest.raises(ValueError, match="X_restored contains NaN or infinite"):
            fn(X, Y)
        with pytest.raises(ValueError, match="X_true contains NaN or infinite"):
            fn(Y, X)
        with pytest.raises(ValueError, match="X_true is zero"):
            fn(np.zeros((3, 3)), X)
    with pytest.raises(ValueError, match="X_restored is zero"):
        refined_restoration_error(X, np.zeros((3, 3)), 2)


def test_relative_restoration_error():
    X = np.array([[3.0, 4.0], [0.0, 0.0]])
    assert relative_restoration_error(X, X) == 0.0
    assert relative_restoration_error(X, np.zeros_like(X)) == pytest.approx(1.0)
    assert relative_restoration_error(X, 2 * X) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same shape"):
        relative_restoration_error(X, X[:, :1])
    with pytest.raises(ValueError, match="X_true is zero"):
        relative_restoration_error(np.zeros((2, 2)), X)


def test_relative_error_is_exact_at_extreme_scales():
    from skpapers.metrics import relative_restoration_error

    X = np.array([[3.0, 4.0]])
    X_hat = np.array([[3.0, 3.0]])
    for c in (1e-300, 1e300):
        assert relative_restoration_error(c * X, c * X_hat) == pytest.approx(0.2, rel=1e-12)
    # a restoration far larger than the truth: a huge but finite error
    assert relative_restoration_error(np.array([[1.0, 2.0]]), np.array([[1e300, 2.0]])) == (
        pytest.approx(1e300 / np.sqrt(5.0), rel=1e-12)
    )
