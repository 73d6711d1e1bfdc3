# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA's warnings say what is true, once."""

import warnings

import numpy as np

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA


def _caught(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [str(w.message) for w in caught]


def test_restore_one_new_sample_with_missing_entries_does_not_warn():
    X, X_true, _, _ = make_permuted_subspace(200, 30, 3, shuffled_ratio=0.1, random_state=51)
    upca = UnlabeledPCA(3).fit(X)
    one = X_true[:1].copy()
    one[0, [2, 7, 11]] = np.nan  # missing in "every sample" of a batch of one
    restored, messages = _caught(upca.restore, one)
    assert not any("missing (NaN) in every sample" in m for m in messages)
    # filled from the fitted subspace, not with 0
    assert np.all(restored[0, [2, 7, 11]] != 0)
    np.testing.assert_allclose(restored[0, [2, 7, 11]], X_true[0, [2, 7, 11]], atol=0.05)


def test_fit_restore_warns_once_about_a_feature_missing_everywhere():
    X, _, _, _ = make_permuted_subspace(200, 30, 3, shuffled_ratio=0.1, random_state=52)
    X[:, 4] = np.nan
    _, messages = _caught(UnlabeledPCA(3).fit_restore, X)
    assert sum("missing (NaN) in every sample" in m for m in messages) == 1
    assert any("feature column(s) 4 " in m for m in messages)
