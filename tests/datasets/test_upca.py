# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the UPCA data: the permuted-subspace generator and the real records."""

import numpy as np
import pytest

from skpapers.datasets import (
    load_breast_cancer_benign,
    load_exam_scores,
    load_yaleb_faces,
    make_permuted_subspace,
)


def test_shapes_subspace_and_corruption_model():
    X, X_true, components, permuted = make_permuted_subspace(
        200, 40, 3, outlier_ratio=0.7, shuffled_ratio=0.25, noise=0.0, random_state=0
    )
    assert X.shape == X_true.shape == (200, 40)
    assert components.shape == (3, 40)
    assert permuted.dtype == bool and permuted.sum() == 140
    np.testing.assert_allclose(components @ components.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(X_true, axis=1), 1.0)
    np.testing.assert_allclose(X_true - X_true @ components.T @ components, 0.0, atol=1e-12)
    # clean samples untouched; permuted ones are permutations of at most 10 entries
    np.testing.assert_array_equal(X[~permuted], X_true[~permuted])
    np.testing.assert_array_equal(np.sort(X, axis=1), np.sort(X_true, axis=1))
    changed = (X != X_true).sum(axis=1)
    assert np.all(changed[permuted] >= 2) and np.all(changed[permuted] <= 10)


def test_noise_and_random_outliers():
    X, X_true, _, permuted = make_permuted_subspace(
        100, 20, 2, outlier_ratio=0.3, noise=0.05, outlier_type="random", random_state=1
    )
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    dist = np.linalg.norm(X[~permuted] - X_true[~permuted], axis=1)
    assert np.all(dist < 0.06) and np.all(dist > 0.03)  # noise rows of norm 0.05
    assert np.all(np.linalg.norm(X[permuted] - X_true[permuted], axis=1) > 0.1)


def test_missing_entries_and_determinism():
    X, _, _, _ = make_permuted_subspace(300, 50, 3, missing_ratio=0.2, random_state=3)
    assert 0.18 < np.isnan(X).mean() < 0.22
    X2, _, _, _ = make_permuted_subspace(300, 50, 3, missing_ratio=0.2, random_state=3)
    np.testing.assert_array_equal(X, X2)


def test_errors():
    with pytest.raises(ValueError, match="n_components = 5 must be smaller"):
        make_permuted_subspace(10, 5, 5)
    with pytest.raises(ValueError, match="fewer than 2 entries"):
        make_permuted_subspace(10, 10, 2, shuffled_ratio=0.1)
    with pytest.raises(ValueError, match="outlier_type"):
        make_permuted_subspace(10, 10, 2, outlier_type="other")


def test_breast_cancer_benign_rows():
    X = load_breast_cancer_benign()
    assert X.shape == (357, 30) and X.dtype == np.float64


def test_upca_mat_loaders(data_home):
    scores = load_exam_scores()
    assert scores.shape == (707, 14) and scores.dtype == np.float64
    # columns 6 and 13 (0-based) are the totals of the two exams
    assert np.corrcoef(scores[:, :6].sum(axis=1), scores[:, 6])[0, 1] > 0.99
    faces = load_yaleb_faces()
    assert faces.shape == (64, 32256) and faces.dtype == np.float64
    assert faces.min() >= 0 and faces.max() <= 255


def test_normalize_records_at_extreme_scales():
    from skpapers.datasets import normalize_records

    D = np.array([[1.0, 2.0], [3.0, 6.0], [2.0, 1.0]])
    Z, norms, means = normalize_records(D)
    for c in (1e-300, 1e300):
        Zc, norms_c, means_c = normalize_records(c * D)
        np.testing.assert_allclose(Zc, Z, rtol=1e-12)
        np.testing.assert_allclose(norms_c / c, norms, rtol=1e-12)
        np.testing.assert_allclose(means_c / c, means, rtol=1e-12)
