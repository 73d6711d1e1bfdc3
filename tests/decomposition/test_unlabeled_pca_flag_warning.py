# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA warns when flagging by distance cannot find partly permuted samples."""

import numpy as np
import pytest

from skpapers.datasets import (
    make_permuted_subspace,
)
from skpapers.decomposition import UnlabeledPCA, unlabeled_pca
from skpapers.exceptions import FlaggingWarning


def _far_from_rank(rank, seed):
    """Samples of a ``rank``-dimensional subspace, a tenth of them partly shuffled."""
    X, _, _, permuted = make_permuted_subspace(
        300, 60, rank, outlier_ratio=0.1, shuffled_ratio=0.3, random_state=seed
    )
    return X, permuted


@pytest.mark.parametrize("seed", [301, 302])
def test_warns_when_the_data_are_far_from_rank_r(seed, fit_no_warning):
    X, permuted = _far_from_rank(6, seed)
    with pytest.warns(FlaggingWarning, match=r"far from the fitted 3-dimensional.*n_components"):
        upca = UnlabeledPCA(3).fit(X)
    assert upca.permuted_mask_[permuted].mean() < 0.5  # the trap: most are left alone
    with pytest.warns(FlaggingWarning, match="restore_samples='all'"):
        unlabeled_pca(X, 3, restore=False)
    # with restore_samples="all" the flags do not decide anything: no warning
    every = fit_no_warning(UnlabeledPCA(3, restore_samples="all"), X)
    np.testing.assert_array_equal(every.distances_, upca.distances_)
    assert every.threshold_ == upca.threshold_
    # the right rank: flagging works again, no warning
    right = fit_no_warning(UnlabeledPCA(6), X)
    assert right.permuted_mask_[~permuted].mean() < 0.10
    assert right.permuted_mask_[permuted].mean() > 0.95


@pytest.mark.parametrize("seed", [303, 304])
def test_no_warning_where_flagging_works(seed, fit_no_warning):
    X, _, _, permuted = make_permuted_subspace(500, 50, 3, random_state=seed)  # sparse
    upca = fit_no_warning(UnlabeledPCA(3), X)
    assert upca.permuted_mask_[permuted].mean() > 0.95
    for inliers in (10, 25):  # dense permutations, few inliers
        X, _, _, permuted = make_permuted_subspace(
            100, 50, 3, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0, random_state=seed
        )
        upca = fit_no_warning(UnlabeledPCA(3), X)
        assert upca.permuted_mask_[permuted].mean() > 0.95


@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_the_flagging_warning_is_kept_as_fitted(missing):
    # what the FlaggingDisplay shows: the message fit emitted, also with missing
    # entries (the display once re-derived it from n_features and missed them)
    rng = np.random.default_rng(11)
    noise = rng.normal(size=(200, 20))
    noise[rng.random(noise.shape) < missing] = np.nan
    with pytest.warns(FlaggingWarning) as record:
        est = UnlabeledPCA(3, random_state=0).fit(noise)
    emitted = [str(w.message) for w in record if issubclass(w.category, FlaggingWarning)]
    assert est.flagging_warning_ == emitted[-1]
    X, _, _, _ = make_permuted_subspace(200, 20, 3, random_state=11)
    assert UnlabeledPCA(3, random_state=0).fit(X).flagging_warning_ is None
