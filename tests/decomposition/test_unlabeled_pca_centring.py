# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA and centring: fit_mean (affine subspace) and a scaler in front."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA, unlabeled_pca
from skpapers.decomposition._unlabeled_pca.solver import stage2_basis
from skpapers.exceptions import FlaggingWarning
from skpapers.metrics import relative_restoration_error

SCALED = "looks centred or scaled per feature"


def _affine(seed, n=200, m=30, r=3, permuted=0.5, shuffled=0.1, noise=0.01):
    """Samples ``mu + c @ U`` plus noise; the first half with 10% of their entries shuffled."""
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.standard_normal((m, r)))[0].T
    mu = rng.standard_normal(m) / np.sqrt(m)
    X_true = mu + rng.standard_normal((n, r)) @ U / np.sqrt(r)
    X = X_true + noise * rng.standard_normal((n, m)) / np.sqrt(m)
    for j in range(int(permuted * n)):
        k = rng.choice(m, int(shuffled * m), replace=False)
        X[j, k] = X[j, rng.permutation(k)]
    return X, X_true, U, mu


@pytest.mark.parametrize("seed", [301, 302])
def test_fit_mean_restores_an_affine_subspace(seed):
    # the permutation acts on the raw entries x = mu + U c: the linear model
    # cannot restore them (it does nothing here), the affine one can
    X, X_true, U, mu = _affine(seed)
    nothing = relative_restoration_error(X_true, X)
    upca = UnlabeledPCA(3, fit_mean=True)
    affine = relative_restoration_error(X_true, upca.fit_restore(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FlaggingWarning)
        linear = relative_restoration_error(X_true, UnlabeledPCA(3).fit_restore(X))
    assert affine < 0.01 < 0.2 < nothing <= linear * 1.1
    # mean_ is a point of the true affine subspace, components_ its directions
    off = (upca.mean_ - mu) - (upca.mean_ - mu) @ U.T @ U
    assert np.linalg.norm(off) < 2e-3
    assert np.allclose(upca.components_ @ upca.components_.T, np.eye(3), atol=1e-10)
    clean = X_true[100:]
    back = upca.inverse_transform(upca.transform(clean))
    assert np.max(np.abs(back - clean)) < 5e-3


def test_fit_mean_false_has_zero_mean_and_linear_transform():
    X, _, _, _ = make_permuted_subspace(
        n_samples=100, n_features=20, n_components=2, random_state=303
    )
    upca = UnlabeledPCA(2).fit(X)
    assert upca.mean_.shape == (20,) and not upca.mean_.any()
    C = upca.transform(X[:5])
    assert np.array_equal(upca.inverse_transform(C), C @ upca.components_)


def test_fit_mean_agrees_with_the_function():
    X, _, _, _ = _affine(304, n=80, m=20)
    components, X_fun, result = unlabeled_pca(X, 3, fit_mean=True)
    upca = UnlabeledPCA(3, fit_mean=True)
    assert np.array_equal(upca.fit_restore(X), X_fun)
    assert np.array_equal(upca.components_, components)
    assert np.array_equal(upca.mean_, result.mean)


def test_fit_mean_needs_one_more_feature():
    X = np.random.default_rng(305).standard_normal((20, 4))
    with pytest.raises(ValueError, match=r"n_components \+ 1 \(fit_mean=True\) = 4 must be"):
        UnlabeledPCA(3, fit_mean=True).fit(X)


def _sparse_setting(seed):
    """The paper's synthetic setting: 90% of the samples with 10% of their entries shuffled."""
    X, X_true, _, _ = make_permuted_subspace(
        n_samples=500, n_features=50, n_components=3, outlier_ratio=0.9,
        shuffled_ratio=0.1, noise=0.01, random_state=seed,
    )  # fmt: skip
    return X, X_true


@pytest.mark.parametrize("seed", [306, 308])
def test_a_centring_scaler_in_front_is_refused(seed):
    # the reproducer on fresh seeds: with StandardScaler() in front the
    # restoration was 51x worse than without it, with a warning only
    X, X_true = _sparse_setting(seed)
    pipe = make_pipeline(StandardScaler(), UnlabeledPCA(3))
    with pytest.raises(ValueError, match=f"every feature of X has mean 0.*{SCALED}.*refused"):
        pipe.fit(X)
    # what the refusal prevents: the centred fit, mapped back, far worse than none
    scaler = StandardScaler().fit(X)
    upca = UnlabeledPCA(3)
    with pytest.raises(ValueError, match="Centred data are refused"):
        upca.fit(scaler.transform(X))
    Xc = scaler.transform(X) + 1e-3  # just off exact zero means: fitted, for the record
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FlaggingWarning)
        scaled = scaler.inverse_transform(upca.fit(Xc).restore(Xc) - 1e-3)
        plain = UnlabeledPCA(3).fit_restore(X)
    err_scaled = relative_restoration_error(X_true, scaled)
    assert err_scaled > 10 * relative_restoration_error(X_true, plain)


def test_a_scaler_without_centring_in_front_warns():
    X, X_true = _sparse_setting(306)
    pipe = make_pipeline(StandardScaler(with_mean=False), UnlabeledPCA(3))
    with pytest.warns(FlaggingWarning, match=f"every feature of X has variance 1.*{SCALED}"):
        pipe.fit(X)
    scaler, upca = pipe.steps[0][1], pipe.steps[1][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FlaggingWarning)
        scaled = scaler.inverse_transform(upca.restore(scaler.transform(X)))
        plain = UnlabeledPCA(3).fit_restore(X)
    assert relative_restoration_error(X_true, scaled) > 10 * relative_restoration_error(
        X_true, plain
    )


def test_transformer_checks_on_uncentred_data():
    # scikit-learn's check_transformer_general, _data_not_an_array and
    # _preserve_dtypes fit on StandardScaler output, which is refused (see
    # PER_ESTIMATOR_XFAIL_CHECKS): their assertions, on the same blobs moved off it
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(30, centers=[[0, 0, 0], [1, 1, 1]], n_features=3, cluster_std=0.1,
                      random_state=0)  # fmt: skip
    X = 2.0 * StandardScaler().fit_transform(X) + 1.0  # no mean 0, no variance 1
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        once = UnlabeledPCA(1).fit_transform(Xd)
        twice = UnlabeledPCA(1).fit(Xd).transform(Xd)
        np.testing.assert_allclose(once, twice, rtol=1e-5, atol=1e-6)
        assert once.dtype == dtype and twice.dtype == dtype
    reference = UnlabeledPCA(1).fit(X).transform(X)
    for like in (X.tolist(), pd.DataFrame(X)):
        np.testing.assert_allclose(UnlabeledPCA(1).fit(like).transform(like), reference)


def test_unscaled_data_do_not_warn():
    X, _, _, _ = make_permuted_subspace(
        n_samples=200, n_features=20, n_components=2, random_state=307
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        UnlabeledPCA(2).fit(X)
        UnlabeledPCA(2).fit(X * 3.0 + 1.0)  # a common shift and factor commute
    assert not [w for w in caught if SCALED in str(w.message)]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    r=st.integers(1, 4),
    shift=st.sampled_from([0.0, 1e-3, 1.0, 1e3]),
)
def test_stage2_basis_is_an_orthonormal_span_of_mean_and_components(seed, r, shift):
    rng = np.random.default_rng(seed)
    components = np.linalg.qr(rng.standard_normal((8, r)))[0].T
    mean = shift * rng.standard_normal(8)
    B = stage2_basis(components, mean)
    assert B.shape[0] == r + (shift > 0)
    assert np.allclose(B @ B.T, np.eye(B.shape[0]), atol=1e-10)
    for v in (*components, mean):  # both lie in the span
        assert np.linalg.norm(v - (v @ B.T) @ B) <= 1e-9 * max(1.0, np.linalg.norm(v))
