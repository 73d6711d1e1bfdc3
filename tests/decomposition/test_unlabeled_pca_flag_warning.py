# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA warns when flagging by distance cannot find partly permuted samples."""

import warnings

import numpy as np
import pytest

from skpapers.datasets import (
    load_breast_cancer_benign,
    load_exam_scores,
    make_permuted_subspace,
    normalize_records,
    permute_records,
)
from skpapers.decomposition import UnlabeledPCA, unlabeled_pca
from skpapers.exceptions import FlaggingWarning


def _no_flagging_warning(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FlaggingWarning)
        return est.fit(X)


def _far_from_rank(rank, seed):
    """Samples of a ``rank``-dimensional subspace, a tenth of them partly shuffled."""
    X, _, _, permuted = make_permuted_subspace(
        300, 60, rank, outlier_ratio=0.1, shuffled_ratio=0.3, random_state=seed
    )
    return X, permuted


@pytest.mark.parametrize("seed", [301, 302])
def test_warns_when_the_data_are_far_from_rank_r(seed):
    X, permuted = _far_from_rank(6, seed)
    with pytest.warns(FlaggingWarning, match=r"far from the fitted 3-dimensional.*n_components"):
        upca = UnlabeledPCA(3).fit(X)
    assert upca.permuted_mask_[permuted].mean() < 0.5  # the trap: most are left alone
    with pytest.warns(FlaggingWarning, match="restore_samples='all'"):
        unlabeled_pca(X, 3, restore=False)
    # with restore_samples="all" the flags do not decide anything: no warning
    every = _no_flagging_warning(UnlabeledPCA(3, restore_samples="all"), X)
    np.testing.assert_array_equal(every.distances_, upca.distances_)
    assert every.threshold_ == upca.threshold_
    # the right rank: flagging works again, no warning
    right = _no_flagging_warning(UnlabeledPCA(6), X)
    assert right.permuted_mask_[~permuted].mean() < 0.10
    assert right.permuted_mask_[permuted].mean() > 0.95


@pytest.mark.parametrize("alpha, seed", [(0.2, 31), (0.5, 32)])
def test_no_warning_on_the_records(alpha, seed):
    # the distance cannot flag there, but the leave-one-out rule can (fewer
    # attributes than records): no warning, flagging_rule_ says which rule flagged
    records = [(load_breast_cancer_benign, 4, list(range(1, 30, 2)))]
    try:
        load_exam_scores()
        records.append((load_exam_scores, 3, list(range(7, 14))))
    except FileNotFoundError:  # the exam scores are not shipped with the package
        pass
    for loader, r, columns in records:
        Z = normalize_records(loader())[0]
        A = permute_records(Z, columns, alpha, random_state=seed).T
        upca = _no_flagging_warning(UnlabeledPCA(r, max_iter=10000), A)
        assert upca.flagging_rule_ == "unexplained"


@pytest.mark.parametrize("seed", [303, 304])
def test_no_warning_where_flagging_works(seed):
    X, _, _, permuted = make_permuted_subspace(500, 50, 3, random_state=seed)  # sparse
    upca = _no_flagging_warning(UnlabeledPCA(3), X)
    assert upca.permuted_mask_[permuted].mean() > 0.95
    for inliers in (10, 25):  # dense permutations, few inliers
        X, _, _, permuted = make_permuted_subspace(
            100, 50, 3, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0, random_state=seed
        )
        upca = _no_flagging_warning(UnlabeledPCA(3), X)
        assert upca.permuted_mask_[permuted].mean() > 0.95


def test_no_warning_on_the_faces():
    from skpapers.datasets import load_yaleb_faces

    try:
        faces = load_yaleb_faces()
    except FileNotFoundError:
        pytest.skip("the Yale B faces file is not available (set SKPAPERS_DATA)")
    rng = np.random.default_rng(305)
    X = faces.copy()
    for j in rng.choice(len(X), 16, replace=False):  # 40% of the pixels of 16 images
        idx = rng.choice(X.shape[1], int(0.4 * X.shape[1]), replace=False)
        X[j, idx] = X[j, rng.permutation(idx)]
    upca = _no_flagging_warning(UnlabeledPCA(4), X)
    assert upca.permuted_mask_.any()
