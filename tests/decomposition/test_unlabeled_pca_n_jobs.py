# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""n_jobs follows joblib's convention and is checked when fitting."""

import numpy as np
import pytest

from skpapers.decomposition import UnlabeledPCA, unlabeled_pca


def test_n_jobs_zero_is_refused_at_fit():
    X = np.random.default_rng(0).normal(size=(40, 6))
    # before, fit accepted n_jobs=0 and only restore failed, inside joblib
    with pytest.raises(ValueError, match="'n_jobs' parameter of UnlabeledPCA must be"):
        UnlabeledPCA(2, n_jobs=0).fit(X)
    with pytest.raises(ValueError, match="'n_jobs' parameter of unlabeled_pca must be"):
        unlabeled_pca(X, 2, n_jobs=0)
    for n_jobs in (-1, 1, 2, None):
        UnlabeledPCA(2, n_jobs=n_jobs).fit(X)
