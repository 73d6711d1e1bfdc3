# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of make_contaminated_sim: shapes, counts, attacks and noise laws."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import ndtr

from skpapers.datasets import make_contaminated_sim

ATTACKS = [
    "labels", "hijack", "gradient", "leverage", "mimic", "random",
    "saturate", "cluster", "spread_hijack", "subclip", "second_index", "point_mass", "mixed",
]


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("n, eps", [(1000, 0.1), (333, 0.05), (50, 0.0)])
def test_shapes_and_outlier_count(attack, n, eps):
    X, y, coef, mask = make_contaminated_sim(n, 7, "gelu", 0.5, eps, attack, random_state=0)
    assert X.shape == (n, 7) and y.shape == (n,) and mask.shape == (n,)
    assert mask.dtype == bool and int(mask.sum()) == round(eps * n)
    assert_allclose(np.linalg.norm(coef), 1.0)
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))


def test_no_attack_and_determinism():
    a = make_contaminated_sim(200, 5, attack=None, random_state=3)
    b = make_contaminated_sim(200, 5, attack=None, random_state=3)
    assert not a[3].any()
    for u, v in zip(a, b, strict=True):
        assert_array_equal(u, v)


def test_clean_rows_follow_the_model_and_attacks_their_laws():
    n, d = 4000, 10
    X, y, coef, mask = make_contaminated_sim(n, d, "gelu", 0.0, 0.1, "labels", random_state=1)
    f = X @ coef * ndtr(X @ coef)
    assert_allclose(y[~mask], f[~mask])
    assert_allclose(y[mask], -3 * f[mask] + 5)

    X, y, coef, mask = make_contaminated_sim(n, d, "gelu", 0.0, 0.1, "hijack", random_state=1)
    # hijack rows: x = a u + 0.3 g with u orthogonal to coef, so <x, coef> ~ N(0, 0.09)
    assert abs(np.std(X[mask] @ coef) - 0.3) < 0.05
    a_proxy = np.linalg.norm(X[mask], axis=1)
    assert np.median(a_proxy) < np.median(np.linalg.norm(X[~mask], axis=1))

    X, y, coef, mask = make_contaminated_sim(n, d, "relu", 0.0, 0.1, "gradient", random_state=1)
    assert_allclose(np.mean(X[mask] @ coef), 1.0, atol=0.05)
    xi = np.sign(y[mask] - np.maximum(X[mask] @ coef, 0))
    assert_allclose(np.abs(y[mask] - np.maximum(X[mask] @ coef, 0)), 3.0)
    assert abs(xi.mean()) < 0.15

    X, y, _, mask = make_contaminated_sim(n, d, "gelu", 0.5, 0.1, "leverage", random_state=1)
    assert_allclose(y[mask], 100.0)
    assert np.all(np.linalg.norm(X[mask], axis=1) > 5 * np.sqrt(d))

    X, y, _, mask = make_contaminated_sim(n, d, "gelu", 0.5, 0.1, "random", random_state=1)
    assert 8 < np.std(y[mask]) < 12


@pytest.mark.parametrize("df", [2.5, 5.0])
def test_student_noise_is_scaled_to_sigma(df):
    X, y, coef, _ = make_contaminated_sim(
        200_000, 2, "identity", (df, 0.5), 0.0, None, random_state=0
    )
    resid = y - X @ coef
    # the sample std of t(2.5) converges slowly: compare a robust proxy as well
    assert abs(np.std(resid) - 0.5) < (0.1 if df < 3 else 0.01)
    assert abs(np.median(resid)) < 0.01


def test_heavy_noise_below_two_degrees_unscaled():
    X, y, coef, _ = make_contaminated_sim(50_000, 2, "identity", (1.5, 1.0), 0.0, None,
                                          random_state=0)
    from scipy.stats import t

    resid = y - X @ coef
    assert_allclose(np.quantile(resid, 0.75), t.ppf(0.75, 1.5), rtol=0.05)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(contamination=0.5), "contamination"),
        (dict(attack="bogus"), "attack"),
        (dict(noise=-1.0), "noise"),
        (dict(noise=(0, 1.0)), "df > 0"),
        (dict(noise=(np.inf, 1.0)), "finite df"),
        (dict(noise=(3.0, np.inf)), "finite sigma"),
        (dict(noise=np.inf), "noise"),
        (dict(noise=np.nan), "noise"),
        (dict(condition_number=0.5), "condition_number"),
        (dict(condition_number=np.inf), "condition_number"),
        (dict(n_features=1), "n_features"),
        (dict(n_samples=0), "n_samples"),
        (dict(link="nope"), "Unknown link"),
    ],
)
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_contaminated_sim(**kwargs)


def test_new_attacks_follow_their_laws():
    n, d = 4000, 10
    X, y, coef, mask = make_contaminated_sim(n, d, "gelu", 0.5, 0.1, "cluster", random_state=2)
    assert len(np.unique(X[mask], axis=0)) == 1 and len(np.unique(y[mask])) == 1
    assert abs(X[mask][0] @ coef) < 1e-12
    assert_allclose(np.linalg.norm(X[mask][0]), 2.5)

    X, y, coef, mask = make_contaminated_sim(n, d, "gelu", 0.5, 0.1, "saturate", random_state=2)
    assert_allclose(y[mask], np.quantile(y[~mask], 0.99))
    shift = X[mask].mean(axis=0)
    assert_allclose(np.linalg.norm(shift), 2.5, atol=0.2) and abs(shift @ coef) < 0.2

    X, y, coef, mask = make_contaminated_sim(n, d, "gelu", 0.5, 0.1, "spread_hijack",
                                             random_state=2)
    # not squeezed: the rows' norms are at least those of clean rows
    assert np.median(np.linalg.norm(X[mask], axis=1)) > np.median(
        np.linalg.norm(X[~mask], axis=1))

    X, y, coef, mask = make_contaminated_sim(n, d, "relu", 0.5, 0.1, "subclip", random_state=2)
    shift = np.abs(y[mask] - np.maximum(X[mask] @ coef, 0))
    assert np.ptp(shift) < 1e-9 and 0.3 < shift[0] < 0.6  # 1.2 * 1.4826 * 0.6745 * 0.5

    X, y, coef, mask = make_contaminated_sim(n, d, "identity", 0.0, 0.1, "second_index",
                                             random_state=2)
    direction = np.linalg.lstsq(X[mask], y[mask], rcond=None)[0]
    assert_allclose(np.linalg.norm(direction), 1.5, rtol=1e-8)
    assert abs(direction @ coef) < 1e-8


def test_point_mass_and_mixed_attacks_follow_their_laws():
    n, d = 4000, 10
    X, y, coef, mask = make_contaminated_sim(n, d, "relu", 0.5, 0.1, "point_mass", random_state=3)
    # every corrupted row on one hyperplane x . u = 1.5, u orthogonal to coef
    centred = X[mask] - X[mask].mean(axis=0)
    evals, evecs = np.linalg.eigh(centred.T @ centred)
    u = evecs[:, 0]
    assert evals[0] < 1e-12 * evals[-1]
    assert_allclose(np.abs(X[mask] @ u), 1.5, rtol=1e-12)
    assert abs(u @ coef) < 1e-12
    shift = y[mask] - np.maximum(X[mask] @ coef, 0)
    assert np.ptp(shift) < 1e-9 and 0.3 < shift[0] < 0.6  # under the Huber clip, one sign

    X, y, coef, mask = make_contaminated_sim(n, d, "identity", 0.0, 0.15, "mixed", random_state=3)
    idx = np.flatnonzero(mask)
    flipped = np.isclose(y[idx], -(X[idx] @ coef), atol=1e-12)
    assert flipped.sum() == 200  # the last third of the 600 corrupted rows
    tilted = idx[~flipped]
    # the tilted rows spread along two directions orthogonal to coef (variance 1 + 2.25 / 2)
    evals, evecs = np.linalg.eigh(np.cov(X[tilted], rowvar=False))
    assert np.all(evals[-2:] > 1.7) and np.all(evals[:-2] < 1.4)
    assert np.all(np.abs(evecs[:, -2:].T @ coef) < 0.15)


def test_condition_number_sets_the_covariance_and_the_index_scale():
    X, y, coef, mask = make_contaminated_sim(40_000, 6, "identity", 0.0, 0.05, "hijack",
                                             random_state=0, condition_number=1e3)
    evals = np.linalg.eigvalsh(np.cov(X[~mask], rowvar=False))
    assert_allclose(evals.max() / evals.min(), 1e3, rtol=0.1)
    assert_allclose(np.std(X[~mask] @ coef), 1.0, rtol=0.03)
    assert_allclose(y[~mask], X[~mask] @ coef)
    # in whitened coordinates the attack lives near the weakest direction
    evals, evecs = np.linalg.eigh(np.cov(X[~mask], rowvar=False))
    whitened = X[mask] @ (evecs / np.sqrt(evals)) @ evecs.T
    outlier_dir = np.linalg.svd(whitened, full_matrices=False)[2][0]
    assert abs(evecs[:, 0] @ outlier_dir) > 0.7  # made orthogonal to the index: not 1
