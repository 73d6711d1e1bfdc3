# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dense permutations, the flagging threshold and the large-m LSRF of UnlabeledPCA."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skpapers.datasets import (
    load_exam_scores,
    make_permuted_subspace,
    normalize_records,
    permute_records,
)
from skpapers.decomposition import UnlabeledPCA
from skpapers.decomposition._unlabeled_pca.subspace import _flag_threshold
from skpapers.decomposition._unlabeled_pca.unlabeled_sensing import _lsrf
from skpapers.exceptions import FlaggingWarning
from skpapers.metrics import principal_angle, relative_restoration_error


def _restored_fraction(X_hat, X_true, permuted, tol=0.05):
    err = np.linalg.norm(X_hat - X_true, axis=1) / np.linalg.norm(X_true, axis=1)
    return np.mean(err[permuted] < tol)


# --- dense permutations (alpha = 1) ---------------------------------------------------


@pytest.mark.parametrize(
    "m, r, inliers, seed",
    [(50, 3, 10, 101), (50, 3, 25, 102), (50, 4, 15, 103), (100, 3, 20, 105)],
)
def test_hard_em_restores_dense_permutations_where_stage1_succeeds(m, r, inliers, seed):
    X, X_true, components, permuted = make_permuted_subspace(
        100, m, r, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0, random_state=seed
    )
    upca = UnlabeledPCA(r, stage2="hard_em", random_state=seed)
    X_hat = upca.fit_restore(X)
    assert principal_angle(upca.components_, components) < 2.0  # Stage I succeeded
    assert _restored_fraction(X_hat, X_true, permuted) >= 0.99
    lsrf = UnlabeledPCA(r, stage2="lsrf").fit_restore(X)  # the sparse solver cannot
    assert _restored_fraction(lsrf, X_true, permuted) < 0.2
    # the default (stage2="auto") sends them to hard EM
    auto = UnlabeledPCA(r, random_state=seed).fit_restore(X)
    assert _restored_fraction(auto, X_true, permuted) >= 0.99


def test_hard_em_with_missing_entries_and_uninformative_first_moment():
    X, X_true, components, permuted = make_permuted_subspace(
        80, 40, 3, outlier_ratio=0.7, shuffled_ratio=1.0, noise=0.0, random_state=7
    )
    upca = UnlabeledPCA(3, stage2="hard_em", random_state=0).fit(X)
    upca.components_ = components  # the true subspace: Stage II alone
    rng = np.random.default_rng(0)
    X_miss = X_true.copy()  # observed entries permuted among themselves, then NaN
    for j in np.flatnonzero(permuted):
        seen = np.flatnonzero(rng.random(40) > 0.1)
        X_miss[j, seen] = X_true[j, rng.permutation(seen)]
        X_miss[j, np.setdiff1d(np.arange(40), seen)] = np.nan
    X_hat = upca.set_params(restore_samples="all").restore(X_miss)
    assert _restored_fraction(X_hat, X_true, permuted, tol=1e-6) >= 0.99
    # centred samples in a centred subspace: sum(A x) = sum(y) = 0 says nothing
    P = np.eye(40) - 1 / 40
    Q, _ = np.linalg.qr((components @ P).T)
    Xc = X_true @ P @ Q @ Q.T
    rng = np.random.default_rng(1)
    Xc_perm = np.array([rng.permutation(x) for x in Xc])
    upca.components_ = Q.T
    Xc_hat = upca.restore(Xc_perm)
    assert _restored_fraction(Xc_hat, Xc, np.ones(80, bool), tol=1e-6) >= 0.99


def test_hard_em_memory_is_bounded_per_sample():
    import tracemalloc

    X, X_true, components, _ = make_permuted_subspace(
        8, 1200, 3, outlier_ratio=1.0, shuffled_ratio=1.0, random_state=0
    )
    upca = UnlabeledPCA(3, stage2="hard_em", restore_samples="all", random_state=0).fit(X)
    upca.components_ = components
    upca.threshold_ = 0.05  # noise 0.01: a restored sample fits well below this
    tracemalloc.start()
    X_hat = upca.restore(X)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 150e6  # blocks of at most 2e6 entries (the whole search would need 3.5e6)
    assert _restored_fraction(X_hat, X_true, np.ones(8, dtype=bool)) == 1.0


# --- flagging ------------------------------------------------------------------------


@given(
    st.integers(1, 5),
    st.integers(0, 5),
    st.lists(st.floats(1e-6, 1.0), min_size=16, max_size=60),
    st.floats(1.5, 5.0),
)
@settings(max_examples=30, deadline=None)
def test_threshold_cannot_collapse(r, n_exact, rest, k):
    """Exact fits never pull the threshold below the (r + 1)-th smallest distance."""
    n_exact = min(n_exact, r)
    d = np.r_[np.full(n_exact, 1e-10), rest]
    threshold, _ = _flag_threshold(d, r, 50, k)
    assert threshold >= np.sort(d)[r] * (1 - 1e-12)
    assert threshold <= 1.0 or threshold >= k * np.min(rest)


@pytest.mark.parametrize("inliers, seed", [(10, 201), (15, 202), (25, 203)])
def test_flags_on_dense_data_with_few_inliers(inliers, seed):
    X, X_true, _, permuted = make_permuted_subspace(
        100, 50, 3, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0, random_state=seed
    )
    upca = UnlabeledPCA(3).fit(X)
    flagged = upca.permuted_mask_
    assert flagged[~permuted].mean() < 0.10
    assert flagged[permuted].mean() > 0.95


@pytest.mark.parametrize("alpha, seed", [(0.1, 11), (0.3, 12), (1.0, 13)])
def test_flags_on_records_leave_clean_attributes_alone(alpha, seed, records):
    for _, Z, r, columns in records:
        A = permute_records(Z, columns, alpha, random_state=seed).T
        # clean attributes are far from rank r: the distance threshold reaches its
        # cap and the leave-one-out rule flags (no FlaggingWarning)
        with warnings.catch_warnings():
            warnings.simplefilter("error", FlaggingWarning)
            upca = UnlabeledPCA(r, max_iter=10000).fit(A)
        assert upca.flagging_rule_ == "unexplained"
        truly = np.zeros(len(A), dtype=bool)
        truly[columns] = True
        flagged, d = upca.permuted_mask_, upca.distances_
        assert flagged[~truly].sum() <= 2  # of 7 (exam) or 15 (breast cancer) clean ones
        far = truly & (d > np.sqrt(1 - r / A.shape[1]) - 0.01)  # as far as a random direction
        if far.any():
            assert flagged[far].mean() > 0.95
        if alpha == 1.0:  # every fully shuffled attribute is flagged
            assert flagged[truly].mean() > 0.95


@pytest.mark.parametrize(
    "alpha, seed", [(0.1, 21), (0.1, 24), (0.1, 25), (0.2, 26), (0.3, 22), (1.0, 23)]
)
@pytest.mark.parametrize("restore_samples", ["flagged", "checked"])
def test_flagged_restoration_never_worse_than_doing_nothing_on_scores(alpha, seed, restore_samples):
    try:
        D = load_exam_scores()
    except FileNotFoundError:
        pytest.skip("the exam scores file is not available (set SKPAPERS_DATA)")
    Z, norms, means = normalize_records(D)
    columns = list(range(7, 14))
    A = permute_records(Z, columns, alpha, random_state=seed).T
    upca = UnlabeledPCA(3, max_iter=10000, restore_samples=restore_samples)
    with warnings.catch_warnings():  # "checked" may keep none of the restorations
        warnings.simplefilter("ignore", FlaggingWarning)
        A_hat = upca.fit_restore(A)

    def err(B):
        return relative_restoration_error(Z * norms + means, B.T * norms + means)

    np.testing.assert_array_equal(upca.permuted_mask_, np.isin(np.arange(14), columns))
    # with 10% shuffled, the Stage-I subspace (fitted on the first exam) restores the
    # second exam worse than leaving it (0.065 against 0.061); the subspace refitted
    # with the entries of the partly shuffled attributes restores it better; "checked"
    # keeps part of those restorations (within 2% of doing nothing on these seeds)
    assert err(A_hat) <= err(A) * (1.0 if restore_samples == "flagged" else 1.02)


# --- LSRF for many entries -------------------------------------------------------------


def test_lsrf_deletes_several_rows_per_step_only_for_long_samples(monkeypatch):
    from skpapers.decomposition._unlabeled_pca import unlabeled_sensing

    X, X_true, components, _ = make_permuted_subspace(
        4, 1500, 3, outlier_ratio=1.0, shuffled_ratio=0.3, random_state=0
    )
    A = components.T
    C_true = X_true @ A
    err = np.linalg.norm(_lsrf(A, X) - C_true)
    with monkeypatch.context() as patch:  # one row per step all the way (the paper)
        patch.setattr(unlabeled_sensing, "_LSRF_SINGLE", 10**9)
        err_single = np.linalg.norm(_lsrf(A, X) - C_true)
    assert err <= 1.5 * err_single + 1e-3
    X0, X0_true, _, _ = make_permuted_subspace(
        4, 1500, 3, outlier_ratio=1.0, shuffled_ratio=0.3, noise=0.0, random_state=0
    )
    C0 = _lsrf(A, X0, tol=1e-9)  # noise free with an early stop: exact
    np.testing.assert_allclose(C0, X0_true @ A, atol=1e-8)
    # short samples: one row per step, the paper's algorithm (equal to a loop per sample)
    X, _, components, _ = make_permuted_subspace(20, 150, 3, shuffled_ratio=0.3, random_state=1)
    C = _lsrf(components.T, X)
    C_loop = np.concatenate([_lsrf(components.T, x[None]) for x in X])
    np.testing.assert_allclose(C, C_loop, rtol=0, atol=1e-12)


# --- units of X -----------------------------------------------------------------------


def test_lsrf_is_equivariant_under_scaling():
    X, _, components, _ = make_permuted_subspace(40, 30, 3, shuffled_ratio=0.2, random_state=3)
    A = components.T
    C = _lsrf(A, X)
    for c in (2.0, 300.0, 1e-3):  # residuals above 1 once deleted rows must stay deleted
        np.testing.assert_allclose(_lsrf(A, c * X), c * C, rtol=1e-9, atol=1e-12 * c)


@pytest.fixture(scope="module")
def scale_reference():
    X, _, _, _ = make_permuted_subspace(200, 30, 3, shuffled_ratio=0.1, random_state=4)
    upca = UnlabeledPCA(3, lsrf_tol="auto").fit(X)
    return X, upca, upca.restore(X)


@given(st.floats(-150, 150))
@settings(max_examples=25, deadline=None)
def test_results_do_not_depend_on_the_units_of_X(scale_reference, log_c):
    """Invariance under X -> c X for c in [1e-150, 1e150], to 1e-9 relative."""
    X, ref, X_ref = scale_reference
    c = 10.0**log_c
    upca = UnlabeledPCA(3, lsrf_tol="auto").fit(c * X)
    assert principal_angle(upca.components_, ref.components_) < 1e-9
    np.testing.assert_array_equal(upca.permuted_mask_, ref.permuted_mask_)
    np.testing.assert_allclose(upca.threshold_, ref.threshold_, rtol=1e-9)
    np.testing.assert_allclose(upca.lsrf_tol_ / c, ref.lsrf_tol_, rtol=1e-9)
    np.testing.assert_allclose(upca.restore(c * X) / c, X_ref, rtol=0, atol=1e-9)


# --- progress ---------------------------------------------------------------------------


@pytest.mark.parametrize("verbose, n_min", [(0, 0), (1, 3), (2, 5)])
def test_verbose_logs_the_stages(caplog, verbose, n_min):
    import logging

    from skpapers.decomposition import unlabeled_pca

    X, _, _, _ = make_permuted_subspace(200, 20, 2, shuffled_ratio=0.2, random_state=6)
    with caplog.at_level(logging.INFO, logger="skpapers"):
        UnlabeledPCA(2, verbose=verbose).fit_restore(X)
    lines = [r.getMessage() for r in caplog.records if r.name == "skpapers.unlabeled_pca"]
    if verbose == 0:
        assert lines == []
        return
    assert len(lines) >= n_min
    text = "\n".join(lines)
    assert "Stage I (dpcp)" in text and "flagging:" in text and "Stage II (lsrf)" in text
    if verbose == 2:
        assert "objective" in text and ("converged" in text or "max_iter" in text)
        assert "chunk" in text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="skpapers"):
        unlabeled_pca(X, 2, verbose=verbose)
    assert any("Stage II" in r.getMessage() for r in caplog.records)


def test_warns_on_a_feature_missing_everywhere():
    X, X_true, components, _ = make_permuted_subspace(
        200, 20, 2, shuffled_ratio=0.2, missing_ratio=0.1, random_state=0
    )
    X[:, [3, 7]] = np.nan
    with pytest.warns(UserWarning, match=r"column\(s\) 3, 7 are missing .* fills them with 0"):
        upca = UnlabeledPCA(2).fit(X)
    assert np.abs(upca.components_[:, [3, 7]]).max() < 1e-12
    with warnings.catch_warnings():  # the fit warned; restore does not repeat it
        warnings.simplefilter("error")
        X_hat = upca.restore(X)
    assert np.abs(X_hat[:, [3, 7]]).max() < 1e-12
    assert not np.isnan(X_hat).any()


def test_restore_honours_set_output_pandas():
    pd = pytest.importorskip("pandas")
    X, _, _, _ = make_permuted_subspace(100, 10, 2, shuffled_ratio=0.3, random_state=0)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(10)], index=np.arange(100) + 1000)
    upca = UnlabeledPCA(2).set_output(transform="pandas")
    out = upca.fit_restore(frame)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(frame.columns)
    assert list(out.index) == list(frame.index)
    np.testing.assert_allclose(out.to_numpy(), UnlabeledPCA(2).fit_restore(X), atol=1e-12)
    assert isinstance(upca.restore(frame.iloc[:5]), pd.DataFrame)
    assert isinstance(UnlabeledPCA(2).fit(frame).restore(frame), np.ndarray)
