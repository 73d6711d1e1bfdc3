# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of UnlabeledPCA on data where the right answer is known."""

import pickle

import numpy as np
import pytest
from scipy.optimize import linprog

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.decomposition._unlabeled_pca.subspace import _dpcp
from skpapers.decomposition._unlabeled_pca.unlabeled_sensing import (
    _hard_em,
    _lad,
    _lsrf,
    _pseudo_likelihood,
)
from skpapers.exceptions import FlaggingWarning
from skpapers.metrics import principal_angle, refined_restoration_error, relative_restoration_error


def lsrf_textbook(A, y, tol=None):
    """LSRF for one sample written literally: a fresh least-squares fit per deletion."""
    m, r = A.shape
    keep = np.arange(m)
    x = np.linalg.lstsq(A, y, rcond=None)[0]
    for _ in range(m - r):
        x = np.linalg.lstsq(A[keep], y[keep], rcond=None)[0]
        res = np.abs(y[keep] - A[keep] @ x)
        t = np.argmax(res)
        if tol is not None and res[t] <= tol:
            break
        keep = np.delete(keep, t)
    return x


def _pca_projection(X, r):
    """The paper's PCA-proj baseline: projection on the top-r (uncentred) subspace."""
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    return (X @ Vt[:r].T) @ Vt[:r], Vt[:r]


@pytest.fixture(scope="module")
def fig3():
    """The paper's Fig. 3 setting: m=50, n=500, 90% permuted, noise 0.01, r=3."""
    return {
        alpha: make_permuted_subspace(500, 50, 3, shuffled_ratio=alpha, random_state=0)
        for alpha in (0.1, 0.3)
    }


# --- end-to-end accuracy ---------------------------------------------------------


@pytest.mark.parametrize("alpha, bound", [(0.1, 0.01), (0.3, 0.02)])
@pytest.mark.parametrize("restore_samples", ["all", "flagged"])
def test_fig3_refined_error_beats_pca_projection(fig3, alpha, bound, restore_samples):
    X, X_true, components, _ = fig3[alpha]
    upca = UnlabeledPCA(3, restore_samples=restore_samples)
    X_hat = upca.fit_restore(X)
    err = refined_restoration_error(X_true, X_hat, 3)
    X_pca, _ = _pca_projection(X, 3)
    err_pca = refined_restoration_error(X_true, X_pca, 3)
    assert err <= bound  # paper prototype: 0.005 / 0.006
    assert err_pca >= 5 * err  # prototype PCA-proj: 0.089 / 0.206
    assert relative_restoration_error(X_true, X) > 0.3  # doing nothing is far worse


@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_fig3_stage1_angle(fig3, alpha):
    X, _, components, _ = fig3[alpha]
    upca = UnlabeledPCA(3).fit(X)
    assert principal_angle(upca.components_, components) < 1.0  # prototype 0.17-0.21
    assert upca.n_iter_ > 1
    _, V_pca = _pca_projection(X, 3)
    angle_pca = principal_angle(V_pca, components)  # prototype 2.3-7.3
    assert angle_pca > 1.5
    assert angle_pca > 5 * principal_angle(upca.components_, components)
    with pytest.warns(FlaggingWarning, match="far from the fitted 3-dimensional"):
        pca = UnlabeledPCA(3, stage1="pca").fit(X)  # not robust: flags cannot work
    assert pca.n_iter_ == 1
    assert principal_angle(pca.components_, V_pca) < 1e-6


@pytest.mark.parametrize("stage2", ["l1", "pl"])
def test_other_stage2_solvers_restore_sparse_permutations(fig3, stage2):
    X, X_true, _, _ = fig3[0.1]
    X_hat = UnlabeledPCA(3, stage2=stage2).fit_restore(X)
    assert refined_restoration_error(X_true, X_hat, 3) < 0.01


@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_noiseless_exact_recovery(alpha):
    X, X_true, components, permuted = make_permuted_subspace(
        300, 40, 3, shuffled_ratio=alpha, noise=0.0, random_state=1
    )
    for lsrf_tol in (None, 1e-10):
        upca = UnlabeledPCA(3, lsrf_tol=lsrf_tol)
        X_hat = upca.fit_restore(X)
        assert principal_angle(upca.components_, components) < 1e-5
        assert relative_restoration_error(X_true, X_hat) < 1e-8
        np.testing.assert_array_equal(upca.permuted_mask_, permuted)


def test_lsrf_tol_auto_resolves_to_the_noise_level_and_helps():
    X, X_true, _, _ = make_permuted_subspace(500, 50, 5, shuffled_ratio=0.3, random_state=2)
    plain = UnlabeledPCA(5, lsrf_tol=None).fit_restore(X)  # the paper's LSRF
    auto = UnlabeledPCA(5, lsrf_tol="auto")
    X_auto = auto.fit_restore(X)
    sigma = 0.01 / np.sqrt(50)  # noise per entry
    assert 2 * sigma < auto.lsrf_tol_ < 4 * sigma  # 3 x robust std of the residuals
    assert relative_restoration_error(X_true, X_auto) < 0.8 * relative_restoration_error(
        X_true, plain
    )


def test_hard_em_restores_dense_permutations():
    X, X_true, _, permuted = make_permuted_subspace(
        60, 40, 3, outlier_ratio=0.8, shuffled_ratio=1.0, noise=0.0, random_state=0
    )
    upca = UnlabeledPCA(3, stage2="hard_em", random_state=0)
    X_hat = upca.fit_restore(X)
    err = np.linalg.norm(X_hat - X_true, axis=1)
    assert np.mean(err[permuted] < 1e-6) >= 0.9
    lsrf = UnlabeledPCA(3, stage2="lsrf").fit_restore(X)  # LSRF cannot undo dense ones
    assert np.mean(np.linalg.norm(lsrf - X_true, axis=1)[permuted] < 1e-6) < 0.1
    np.testing.assert_array_equal(upca.fit_restore(X), X_hat)  # seeded starts
    # the default (stage2="auto") sends them to hard EM
    auto = UnlabeledPCA(3, random_state=0).fit_restore(X)
    assert np.mean(np.linalg.norm(auto - X_true, axis=1)[permuted] < 1e-6) >= 0.9


# --- solver identities -------------------------------------------------------------


@pytest.mark.parametrize("tol", [None, 0.01])
@pytest.mark.parametrize("missing", [False, True])
def test_downdated_batched_lsrf_equals_textbook(tol, missing):
    rng = np.random.default_rng(0)
    X, _, components, _ = make_permuted_subspace(30, 25, 3, shuffled_ratio=0.3, random_state=3)
    A = components.T
    M = rng.random(X.shape) > 0.3 if missing else np.ones(X.shape, dtype=bool)
    C = _lsrf(A, np.where(M, X, 0.0), M if missing else None, tol)
    C_ref = np.array([lsrf_textbook(A[m], y[m], tol) for y, m in zip(X, M, strict=True)])
    np.testing.assert_allclose(C, C_ref, rtol=0, atol=1e-10)


def test_projected_dpcp_equals_direct_dpcp():
    X, _, components, _ = make_permuted_subspace(
        40, 90, 3, outlier_ratio=0.5, shuffled_ratio=0.3, random_state=1
    )
    U_proj, _ = _dpcp(X, None, 3, 0.5, 1000, 1e-9, projected=True)
    U_direct, _ = _dpcp(X, None, 3, 0.5, 1000, 1e-9, projected=False)
    assert principal_angle(U_proj.T, U_direct.T) < 1e-6
    assert principal_angle(U_proj.T, components) < 1.0
    # the estimator picks the projected variant by itself when n_features > n_samples
    upca = UnlabeledPCA(3).fit(X)
    assert principal_angle(upca.components_, U_proj.T) < 1e-6


def test_lad_matches_linear_programming():
    X, _, components, _ = make_permuted_subspace(12, 30, 3, shuffled_ratio=0.3, random_state=4)
    A = components.T
    m, r = A.shape
    C = _lad(A, X)
    for y, x in zip(X, C, strict=True):
        res = linprog(
            np.r_[np.zeros(r), np.ones(m)],
            A_ub=np.block([[A, -np.eye(m)], [-A, -np.eye(m)]]),
            b_ub=np.r_[y, -y],
            bounds=[(None, None)] * r + [(0, None)] * m,
            method="highs",
        )
        assert res.status == 0
        assert np.abs(A @ x - y).sum() <= res.fun * (1 + 1e-4)


def test_pseudo_likelihood_and_hard_em_with_the_true_basis():
    X, X_true, components, permuted = make_permuted_subspace(
        60, 50, 3, outlier_ratio=1.0, shuffled_ratio=0.1, noise=0.0, random_state=5
    )
    A = components.T
    C_true = X_true @ A
    C_pl = _pseudo_likelihood(A, X)
    assert np.median(np.linalg.norm(C_pl - C_true, axis=1)) < 0.02
    starts = np.random.default_rng(0).standard_normal((60, 20, 3))
    C_em, err = _hard_em(A, X, None, np.concatenate([C_true[:, None], starts], axis=1))
    np.testing.assert_allclose(C_em, C_true, atol=1e-8)
    np.testing.assert_allclose(err, 0.0, atol=1e-8)  # the true point is a fixed point


# --- missing entries (unlabeled matrix completion) ----------------------------------


@pytest.mark.parametrize("stage1", ["dpcp", "pca"])
def test_missing_entries_are_filled(stage1):
    X, X_true, components, _ = make_permuted_subspace(
        500, 50, 3, shuffled_ratio=0.1, missing_ratio=0.2, random_state=0
    )
    X_before = X.copy()
    upca = UnlabeledPCA(3, stage1=stage1)
    if stage1 == "pca":  # not robust to the permuted samples: flags cannot work
        with pytest.warns(FlaggingWarning):
            X_hat = upca.fit_restore(X)
    else:
        X_hat = upca.fit_restore(X)
    np.testing.assert_array_equal(X, X_before)  # input untouched (NaNs included)
    missing = np.isnan(X)
    assert not np.isnan(X_hat).any()
    fill_err = np.linalg.norm((X_hat - X_true)[missing]) / np.linalg.norm(X_true[missing])
    if stage1 == "dpcp":
        assert principal_angle(upca.components_, components) < 1.0
        assert fill_err < 0.02
        assert relative_restoration_error(X_true, X_hat) < 0.02
    else:  # masked PCA is not robust to the permuted samples
        assert principal_angle(upca.components_, components) > 1.0
        assert fill_err > 0.02


def test_missing_entries_in_unflagged_samples_are_filled_by_projection():
    X, X_true, components, _ = make_permuted_subspace(
        200, 30, 2, outlier_ratio=0.0, noise=0.0, missing_ratio=0.2, random_state=0
    )
    upca = UnlabeledPCA(2)
    X_hat = upca.fit_restore(X)
    assert not upca.permuted_mask_.any()
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(X_hat[observed], X[observed])
    np.testing.assert_allclose(X_hat, X_true, atol=1e-8)


# --- flagging ------------------------------------------------------------------------


def test_unpermuted_data_is_returned_unchanged():
    X, _, _, _ = make_permuted_subspace(300, 50, 3, outlier_ratio=0.0, random_state=0)
    upca = UnlabeledPCA(3)
    X_hat = upca.fit_restore(X)
    assert not upca.permuted_mask_.any()
    np.testing.assert_array_equal(X_hat, X)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_flags_precision_recall(seed, alpha):
    X, _, _, permuted = make_permuted_subspace(500, 50, 3, shuffled_ratio=alpha, random_state=seed)
    upca = UnlabeledPCA(3)
    X_hat = upca.fit_restore(X)
    flagged = upca.permuted_mask_
    assert (flagged & permuted).sum() / flagged.sum() >= 0.95
    assert (flagged & permuted).sum() / permuted.sum() >= 0.95
    np.testing.assert_array_equal(X_hat[~flagged], X[~flagged])  # bit for bit
    assert np.all(upca.distances_[flagged] > upca.threshold_)


def test_coherence_pursuit_handles_random_outliers():
    X, _, components, _ = make_permuted_subspace(
        300, 30, 3, outlier_ratio=0.5, outlier_type="random", noise=0.0, random_state=0
    )
    upca = UnlabeledPCA(3, stage1="cop").fit(X)
    assert upca.n_iter_ == 1
    assert principal_angle(upca.components_, components) < 1e-6


# --- API -----------------------------------------------------------------------------


def test_transform_inverse_transform_restore_agree(fig3):
    X, _, components, _ = fig3[0.1]
    upca = UnlabeledPCA(3, restore_samples="all").fit(X)
    C = upca.transform(X)
    assert C.shape == (500, 3)
    np.testing.assert_allclose(upca.inverse_transform(C), upca.restore(X))
    np.testing.assert_allclose(upca.components_ @ upca.components_.T, np.eye(3), atol=1e-12)


def test_new_samples_are_flagged_with_the_fitted_threshold(fig3):
    X, _, components, _ = fig3[0.1]
    upca = UnlabeledPCA(3).fit(X)
    rng = np.random.default_rng(0)
    X_new = rng.standard_normal((40, 3)) @ components
    X_new /= np.linalg.norm(X_new, axis=1, keepdims=True)
    X_new_true = X_new.copy()
    for row in X_new[:20]:  # swap 5 disjoint pairs of entries in half the samples
        idx = rng.permutation(50)[:10]
        row[idx] = row[np.r_[idx[5:], idx[:5]]]
    X_hat = upca.restore(X_new)
    np.testing.assert_array_equal(X_hat[20:], X_new[20:])  # clean: left alone
    assert relative_restoration_error(X_new_true[:20], X_hat[:20]) < 0.01
    assert relative_restoration_error(X_new_true[:20], X_new[:20]) > 0.3


def test_score_is_permutation_invariant_and_zero_on_clean_data():
    X, X_true, _, _ = make_permuted_subspace(
        200, 30, 2, shuffled_ratio=0.2, outlier_ratio=0.5, noise=0.0, random_state=0
    )
    upca = UnlabeledPCA(2).fit(X)
    assert abs(upca.score(X_true)) < 1e-12
    assert abs(upca.score(X)) < 1e-12  # X = X_true with entries permuted in half the rows
    rng = np.random.default_rng(0)
    noisy = X_true + 0.1 * rng.standard_normal(X_true.shape)
    assert upca.score(noisy) < -1e-3


def test_n_jobs_gives_the_same_result():
    X, _, _, _ = make_permuted_subspace(100, 30, 3, shuffled_ratio=0.3, random_state=0)
    serial = UnlabeledPCA(3, restore_samples="all").fit_restore(X)
    parallel = UnlabeledPCA(3, restore_samples="all", n_jobs=2).fit_restore(X)
    np.testing.assert_allclose(parallel, serial, rtol=0, atol=1e-12)


def test_feature_names_set_output_and_float32():
    pd = pytest.importorskip("pandas")
    X, _, _, _ = make_permuted_subspace(100, 10, 2, shuffled_ratio=0.3, random_state=0)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(10)])
    upca = UnlabeledPCA(2).set_output(transform="pandas").fit(frame)
    out = upca.transform(frame)
    assert list(out.columns) == ["unlabeledpca0", "unlabeledpca1"]
    assert list(upca.get_feature_names_out()) == ["unlabeledpca0", "unlabeledpca1"]
    X32 = X.astype(np.float32)
    upca32 = UnlabeledPCA(2).fit(X32)
    assert upca32.transform(X32).dtype == np.float32
    assert upca32.restore(X32).dtype == np.float32


def test_pickle_round_trip():
    X, _, _, _ = make_permuted_subspace(
        100, 10, 2, shuffled_ratio=0.3, missing_ratio=0.1, random_state=0
    )
    upca = UnlabeledPCA(2).fit(X)
    clone = pickle.loads(pickle.dumps(upca))
    np.testing.assert_array_equal(clone.restore(X), upca.restore(X))


# --- errors --------------------------------------------------------------------------


def test_clear_errors():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 6))
    with pytest.raises(ValueError, match="n_components = 6 .* n_features = 6"):
        UnlabeledPCA(6).fit(X)
    with pytest.raises(ValueError, match="n_features = 1"):
        UnlabeledPCA(1).fit(X[:, :1])
    with pytest.raises(ValueError, match="n_samples = 1"):
        UnlabeledPCA(1).fit(X[:1])
    with pytest.raises(ValueError, match="n_samples = 3, n_components = 3"):
        UnlabeledPCA(3).fit(X[:3])
    X_nan = X.copy()
    X_nan[4] = np.nan
    with pytest.raises(ValueError, match=r"1 sample\(s\) \(indices 4\) with every entry missing"):
        UnlabeledPCA(2).fit(X_nan)
    X_few = X.copy()
    X_few[[2, 7], :4] = np.nan  # two observed entries left, three needed for r = 2
    with pytest.raises(ValueError, match=r"n_components \+ 1 = 3 observed .*indices 2, 7"):
        UnlabeledPCA(2).fit(X_few)
    upca = UnlabeledPCA(2).fit(X)
    with pytest.raises(ValueError, match="indices 2, 7"):
        upca.transform(X_few)
    X_one = X.copy()
    X_one[0, 0] = np.nan
    with pytest.raises(ValueError, match="stage1='cop' does not handle missing"):
        UnlabeledPCA(2, stage1="cop").fit(X_one)
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        UnlabeledPCA(2).fit(X_inf)
    with pytest.raises(ValueError, match="n_components = 2"):
        upca.inverse_transform(np.ones((3, 3)))
    with pytest.raises(ValueError, match="restore_samples"):
        UnlabeledPCA(2, restore_samples="some").fit(X)


@pytest.mark.parametrize("params", [{}, {"stage2": "l1", "restore_samples": "all"}])
def test_function_and_estimator_agree(params):
    from skpapers.decomposition import unlabeled_pca

    X, _, _, _ = make_permuted_subspace(150, 20, 2, shuffled_ratio=0.2, random_state=5)
    est = UnlabeledPCA(2, **params)
    X_est = est.fit_restore(X)
    components, X_fun, result = unlabeled_pca(X, 2, **params)
    np.testing.assert_array_equal(est.components_, components)
    np.testing.assert_array_equal(X_est, X_fun)
    np.testing.assert_array_equal(est.permuted_mask_, result.permuted_mask)
    assert est.threshold_ == result.threshold
    _, nothing, _ = unlabeled_pca(X, 2, restore=False, **params)
    assert nothing is None
