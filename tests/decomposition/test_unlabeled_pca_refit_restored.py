# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA with missing entries: the subspace refitted with the samples it restores."""

import itertools
import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.decomposition._unlabeled_pca.solver import _reordered
from skpapers.metrics import principal_angle


def _observed_shuffled(seed, n=150, m=40, r=4, missing=0.5, clean=20):
    """The mask drawn first, then the observed entries of all but ``clean`` samples shuffled."""
    X, X_true, components, _ = make_permuted_subspace(
        n, m, r, outlier_ratio=0.0, noise=0.01, random_state=seed
    )
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < missing] = np.nan
    shuffled = np.arange(n) >= clean
    for i in np.flatnonzero(shuffled):
        seen = np.flatnonzero(~np.isnan(X[i]))
        X[i, seen] = X[i, seen[rng.permutation(seen.size)]]
    return X, X_true, components, shuffled


@pytest.mark.parametrize("seed", [1833, 1835])
def test_restored_samples_refit_a_subspace_the_clean_ones_leave_off(seed, caplog):
    # 20 clean samples of 150, half of the entries missing: Stage I from the clean
    # samples alone was 6-13 degrees off and restored 17-25% of the shuffled ones
    X, X_true, components, shuffled = _observed_shuffled(seed)
    upca = UnlabeledPCA(4, random_state=0, verbose=1)
    with caplog.at_level(logging.INFO, logger="skpapers.unlabeled_pca"):
        X_hat = upca.fit_restore(X)
    joined = [r.getMessage() for r in caplog.records if "restored sample(s)" in r.getMessage()]
    assert joined and not joined[0].startswith("subspace refitted with 0 ")
    assert principal_angle(upca.components_, components) < 1.0
    err = np.linalg.norm(X_hat - X_true, axis=1) / np.linalg.norm(X_true, axis=1)
    assert np.mean(err[shuffled] < 0.05) >= 0.99
    if seed == 1833:  # fit alone gives the same subspace (the refit is part of the fit)
        fitted = UnlabeledPCA(4, random_state=0).fit(X)
        np.testing.assert_array_equal(fitted.components_, upca.components_)


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(2, 6),
    seed=st.integers(0, 2**32 - 1),
    ties=st.booleans(),
)
def test_reordering_is_the_closest_permutation_of_the_observed_values(size, seed, ties):
    rng = np.random.default_rng(seed)
    m = size + 2
    observed = np.zeros(m, dtype=bool)
    observed[rng.choice(m, size, replace=False)] = True
    y = np.where(observed, rng.integers(0, 3, m) if ties else rng.standard_normal(m), 0.0)
    fit = rng.standard_normal(m)
    z = _reordered(y[None], observed[None], fit[None])[0]
    assert np.all(z[~observed] == 0.0)
    np.testing.assert_array_equal(np.sort(z[observed]), np.sort(y[observed]))
    best = min(
        np.sum((np.array(p) - fit[observed]) ** 2)
        for p in itertools.permutations(y[observed])
    )
    assert np.sum((z[observed] - fit[observed]) ** 2) <= best + 1e-12
