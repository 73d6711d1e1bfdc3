# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA at scale: the warm-started Stage I, the default LSRF stop, parallel Stage II."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.decomposition._unlabeled_pca.subspace import (
    _complement_distances,
    _dpcp,
    _subsample_size,
)
from skpapers.metrics import principal_angle, relative_restoration_error


@pytest.mark.parametrize("seed", [21, 22])
def test_subsample_warm_start_gives_the_full_data_subspace(seed):
    n, m, r = 8000, 20, 3
    assert _subsample_size(n, m) == 2000  # the warm start is used at this size
    X, _, components, _ = make_permuted_subspace(n, m, r, shuffled_ratio=0.1, random_state=seed)
    U_warm, it_warm = _dpcp(X, None, r, 0.5, 1000, 1e-9)
    U_full, it_full = _dpcp(X, None, r, 0.5, 1000, 1e-9, subsample=False)
    assert principal_angle(U_warm.T, U_full.T) < 1e-4  # degrees
    a_warm = principal_angle(U_warm.T, components)
    a_full = principal_angle(U_full.T, components)
    assert abs(a_warm - a_full) <= 1e-3 * a_full
    assert a_full < 0.2  # DPCP is accurate here (PCA is off by degrees)
    assert principal_angle(np.linalg.svd(X, full_matrices=False)[2][:r], components) > 1.0
    # the estimator uses the warm start: the paper's path gives the same subspace;
    # the default then refits it with the partly shuffled samples, closer still
    upca = UnlabeledPCA(r, lsrf_tol=None).fit(X)
    assert principal_angle(upca.components_, U_warm.T) < 1e-10
    assert upca.n_iter_ == it_warm
    assert principal_angle(UnlabeledPCA(r).fit(X).components_, components) < a_warm / 2


@settings(max_examples=40, deadline=None)
@given(
    log_eps=st.floats(-15, 0),
    seed=st.integers(0, 2**16),
)
def test_complement_distances_keep_relative_accuracy(log_eps, seed):
    rng = np.random.default_rng(seed)
    m, r = 12, 3
    U = np.linalg.qr(rng.standard_normal((m, r)))[0]
    off = rng.standard_normal((5, m))
    off -= (off @ U) @ U.T
    off /= np.linalg.norm(off, axis=1, keepdims=True)
    X = rng.standard_normal((5, r)) @ U.T + 10.0**log_eps * off
    d_ref = np.linalg.norm(X - (X @ U) @ U.T, axis=1)
    d = _complement_distances(X, np.einsum("ij,ij->i", X, X), U)
    np.testing.assert_allclose(d, d_ref, rtol=1e-6, atol=1e-14 * np.linalg.norm(X, axis=1).max())


@pytest.mark.parametrize("seed", [31, 32])
@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_default_lsrf_stop_beats_the_papers_lsrf(seed, alpha):
    X, X_true, _, permuted = make_permuted_subspace(
        1000, 50, 5, shuffled_ratio=alpha, random_state=seed
    )
    default = UnlabeledPCA(5)
    X_default = default.fit_restore(X)
    X_paper = UnlabeledPCA(5, lsrf_tol=None).fit_restore(X)
    sigma = 0.01 / np.sqrt(50)  # noise per entry of the generator
    assert 2 * sigma < default.lsrf_tol_ < 4 * sigma
    err_default = relative_restoration_error(X_true[permuted], X_default[permuted])
    err_paper = relative_restoration_error(X_true[permuted], X_paper[permuted])
    assert err_default <= 0.8 * err_paper  # measured: about half
    assert relative_restoration_error(X_true, X_default) < 0.01


@pytest.fixture(scope="module")
def shuffled_faces(faces):
    rng = np.random.default_rng(7)
    X = faces.copy()
    m = X.shape[1]
    for j in (0, 5, 22, 40):  # shuffle 4000 pixels of 4 images
        idx = rng.choice(m, 4000, replace=False)
        X[j, idx] = X[j, rng.permutation(idx)]
    return X


def test_faces_restore_with_n_jobs_and_dask(shuffled_faces):
    """Stage II on the faces (m = 32256) gives the same images sequentially, with
    two loky workers and on a local Dask cluster through joblib."""
    X = shuffled_faces
    est = UnlabeledPCA(4, stage1="pca", restore_samples="all").fit(X)
    rows = X[[0, 5, 22, 40]]
    serial = est.restore(rows)
    assert relative_restoration_error(serial, rows) > 0  # Stage II changed them
    parallel = est.set_params(n_jobs=2).restore(rows)
    np.testing.assert_allclose(parallel, serial, rtol=0, atol=1e-9 * np.abs(serial).max())
    distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    from joblib import parallel_config

    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster, distributed.Client(cluster), parallel_config(backend="dask"):
        on_dask = est.restore(rows)
    np.testing.assert_allclose(on_dask, serial, rtol=0, atol=1e-9 * np.abs(serial).max())


def test_a_single_iteration_is_pca_on_every_sample():
    X, _, _, _ = make_permuted_subspace(8000, 20, 3, shuffled_ratio=0.1, random_state=23)
    U, n_iter = _dpcp(X, None, 3, 0.5, 1, 1e-9)
    Xu = X / np.linalg.norm(X, axis=1, keepdims=True)
    V = np.linalg.svd(Xu, full_matrices=False)[2][:3]
    assert n_iter == 1
    assert principal_angle(U.T, V) < 1e-8
