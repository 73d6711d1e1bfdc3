# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA's leave-one-out ("unexplained") flagging rule, where the distance cannot flag."""

import numpy as np
import pytest

from skpapers.datasets import (
    make_permuted_subspace,
    permute_records,
)
from skpapers.decomposition import UnlabeledPCA, unlabeled_pca
from skpapers.exceptions import FlaggingWarning
from skpapers.metrics import principal_angle, relative_restoration_error


@pytest.mark.parametrize("seed", [401, 402])
def test_unexplained_rule_flags_partly_shuffled_samples_far_from_rank_r(seed, fit_no_warning):
    # rank-6 data fitted with rank 3, fewer samples than features: the distance
    # rule reaches the random-direction cap; the leave-one-out rule takes over
    # (half of the entries of a permuted sample shuffled: the shuffle, which no
    # other sample explains, is most of its distance to the fitted subspace)
    X, _, _, permuted = make_permuted_subspace(
        40, 200, 6, outlier_ratio=0.2, shuffled_ratio=0.5, random_state=seed
    )
    # "flagged": every flagged sample is restored ("checked" keeps 0-1 of these 8
    # restorations: their residual is spread over the entries, as a poorly
    # explained clean sample's)
    upca = fit_no_warning(UnlabeledPCA(3, restore_samples="flagged"), X)
    assert upca.flagging_rule_ == "unexplained"
    assert upca.unexplained_.shape == (40,)
    flagged = upca.permuted_mask_
    np.testing.assert_array_equal(flagged, upca.unexplained_ > np.sqrt(0.5))
    assert flagged[~permuted].mean() < 0.10
    assert flagged[permuted].mean() > 0.95
    # the distance rule alone flags almost none of them (the reason for the rule)
    assert np.mean(upca.distances_[permuted] > upca.threshold_) < 0.5
    # the estimator, the function and fit(X).restore(X) agree
    X_hat = upca.restore(X)
    _, X_fun, result = unlabeled_pca(X, 3, restore_samples="flagged")
    np.testing.assert_array_equal(X_hat, X_fun)
    np.testing.assert_array_equal(result.permuted_mask, flagged)
    assert result.flagging_rule == "unexplained"
    changed = np.any(X_hat != X, axis=1)
    np.testing.assert_array_equal(changed, flagged)


@pytest.mark.parametrize("seed", [403, 404])
def test_the_distance_rule_is_kept_where_it_flags(seed, fit_no_warning):
    # exactly low-rank data (fewer samples than features, sparse and dense
    # permutations): the distance rule works and nothing changes
    for kwargs in ({}, {"outlier_ratio": 0.8, "shuffled_ratio": 1.0}):
        X, _, _, permuted = make_permuted_subspace(60, 200, 3, random_state=seed, **kwargs)
        upca = fit_no_warning(UnlabeledPCA(3), X)
        assert upca.flagging_rule_ == "distance"
        assert upca.unexplained_ is None
        np.testing.assert_array_equal(upca.permuted_mask_, upca.distances_ > upca.threshold_)
        assert upca.permuted_mask_[permuted].mean() > 0.95
        assert upca.permuted_mask_[~permuted].mean() < 0.10


def test_restore_applies_the_rule_to_the_samples_it_is_given(fit_no_warning):
    X, _, _, _ = make_permuted_subspace(
        40, 200, 6, outlier_ratio=0.2, shuffled_ratio=0.5, random_state=405
    )
    upca = fit_no_warning(UnlabeledPCA(3, restore_samples="flagged"), X)
    assert upca.flagging_rule_ == "unexplained"
    batch = X[:20]  # the rule on a batch of its own
    from skpapers.decomposition._unlabeled_pca.solver import unexplained_flags

    flags = unexplained_flags(batch, 3, stage1="dpcp", p=0.5, max_iter=1000, tol=1e-9)
    np.testing.assert_array_equal(np.any(upca.restore(batch) != batch, axis=1), flags)
    # one sample: the rule does not apply, the distance threshold decides
    one = X[:1]
    kept = upca.distances_[0] <= upca.threshold_
    assert np.array_equal(upca.restore(one), one) == kept
    # fit_restore reuses the training flags: the same as fit(X).restore(X)
    np.testing.assert_array_equal(
        UnlabeledPCA(3, restore_samples="flagged").fit_restore(X), upca.restore(X)
    )
    # restore_samples="all": the flags decide nothing, the rule is not run
    every = fit_no_warning(UnlabeledPCA(3, restore_samples="all"), X)
    assert every.flagging_rule_ == "distance"
    np.testing.assert_array_equal(every.distances_, upca.distances_)
    assert np.all(np.any(every.restore(X) != X, axis=1))


def test_warning_names_the_fallback_where_it_does_not_apply():
    X, _, _, _ = make_permuted_subspace(
        300, 60, 6, outlier_ratio=0.1, shuffled_ratio=0.3, random_state=406
    )  # more samples than features
    with pytest.warns(FlaggingWarning, match=r"unexplained.*n_samples = 300, n_features = 60"):
        upca = UnlabeledPCA(3).fit(X)
    assert upca.flagging_rule_ == "distance"


def _restorable(Z, A, r):
    """Shuffled attributes moved farther than their true values lie from rank r.

    Restoring returns a point of the subspace, so it can improve an attribute only
    when its true values lie closer to the subspace of the other (clean)
    attributes than the shuffle moved them.
    """
    out = np.empty(len(A), dtype=bool)
    for j in range(len(A)):
        V = np.linalg.svd(np.delete(Z, j, axis=0), full_matrices=False)[2][:r]
        out[j] = np.linalg.norm(A[j] - Z[j]) > np.linalg.norm(Z[j] - (Z[j] @ V.T) @ V)
    return out


@pytest.mark.parametrize(
    "alpha, seeds", [(0.1, (415, 416, 417, 418)), (0.3, (411, 412, 413)), (1.0, (414,))]
)
def test_records_flag_shuffled_attributes(alpha, seeds, records, fit_no_warning):
    for name, Z, r, columns in records:
        truly = np.isin(np.arange(Z.shape[1]), columns)
        clean, restorable = [], []
        for seed in seeds:
            A = permute_records(Z, columns, alpha, random_state=seed).T
            upca = fit_no_warning(UnlabeledPCA(r, max_iter=10000), A)
            assert upca.flagging_rule_ == "unexplained"
            if alpha > 0.1:
                moved = truly & np.any(A != Z.T, axis=1)
                assert upca.permuted_mask_[moved].mean() > 0.95
            # a fit flags at most 2 of the 15 clean breast-cancer attributes
            assert upca.permuted_mask_[~truly].sum() <= 2
            clean.append(upca.permuted_mask_[~truly].mean())
            restorable.extend(upca.permuted_mask_[truly & _restorable(Z.T, A, r)])
        assert np.mean(clean) < 0.10, name
        # at alpha = 0.1 a third of the shuffled breast-cancer attributes moved less
        # than their distance to the subspace (0.9 for two of them): restoring
        # them cannot help, and most of those are not flagged
        assert np.mean(restorable) > 0.95, name


@pytest.mark.parametrize("seed", [421, 422])
def test_faces_flag_shuffled_images_by_what_the_others_do_not_explain(faces, seed, fit_no_warning):
    # no FlaggingWarning on the faces. They are only approximately of rank 4:
    # clean images lie 0.3-0.8 from the subspace, and the distance rule flagged
    # 0-75% of the shuffled images (and up to 15% of the clean ones); their
    # residuals are largely explained by other images: the leave-one-out rule flags
    rng = np.random.default_rng(seed)
    X = faces.copy()
    shuffled = np.zeros(len(X), dtype=bool)
    for j in rng.choice(len(X), 16, replace=False):  # 40% of the pixels of 16 images
        idx = rng.choice(X.shape[1], int(0.4 * X.shape[1]), replace=False)
        X[j, idx] = X[j, rng.permutation(idx)]
        shuffled[j] = True
    upca = fit_no_warning(UnlabeledPCA(4), X)
    assert upca.flagging_rule_ == "unexplained"
    assert upca.permuted_mask_[shuffled].mean() > 0.95
    # 2-6 of the 48 clean images over seeds 305-310
    assert upca.permuted_mask_[~shuffled].sum() <= 7


def test_subspace_refit_takes_partly_shuffled_samples_and_needs_enough_of_them():
    from skpapers.decomposition._unlabeled_pca.solver import _refit_partly_shuffled

    rng = np.random.default_rng(431)
    m, r = 60, 3
    truth = np.linalg.qr(rng.standard_normal((m, r)))[0]
    Y = rng.standard_normal((12, r)) @ truth.T
    for y in Y[6:9]:  # 10% of the entries shuffled: the 3 smallest with the 3 largest
        order = np.argsort(y)
        y[np.r_[order[:3], order[-3:]]] = y[np.r_[order[-3:], order[:3]]]
    Y[9:] = rng.permutation(Y[9:].T).T  # densely shuffled
    flagged = np.arange(12) >= 6
    tilted = np.linalg.qr(truth + 1e-3 * rng.standard_normal((m, r)))[0]
    U, joined = _refit_partly_shuffled(Y, tilted, flagged, 0.05, 1000)
    assert joined == 3  # the partly shuffled ones, not the dense ones
    # from the six clean samples and the entries kept: the true subspace (up to the
    # refit's stopping rule, a move below 1e-6 per round), where the start was tilted
    assert np.linalg.norm(tilted @ tilted.T - truth @ truth.T) > 1e-3
    assert np.linalg.norm(U @ U.T - truth @ truth.T) < 1e-5
    # fewer than r + 1 samples for the refit: the subspace is kept
    alone = np.arange(12) != 6
    alone[7:] = True
    kept, joined = _refit_partly_shuffled(Y[6:], tilted, alone[6:], 0.05, 1000)
    assert joined == 0 and kept is tilted
    # r + 1 = 4 samples (two unflagged, two partly shuffled): the refit runs
    kept, joined = _refit_partly_shuffled(Y[5:], tilted, np.arange(7) >= 2, 0.05, 1000)
    assert joined == 2 and kept is not tilted


@pytest.mark.parametrize("seed", [441, 442])
def test_subspace_refit_under_the_distance_rule(seed, fit_no_warning):
    # the paper's sparse setting (more samples than features, 90% permuted, 10% of
    # their entries shuffled): the partly shuffled samples join the refit; the flags
    # and restore follow the refitted distances, against the Stage-I threshold
    X, X_true, components, permuted = make_permuted_subspace(500, 50, 3, random_state=seed)
    upca = fit_no_warning(UnlabeledPCA(3), X)
    paper = fit_no_warning(UnlabeledPCA(3, lsrf_tol=None), X)  # Stage I, no refit
    assert upca.flagging_rule_ == "distance"
    assert upca.threshold_ == paper.threshold_  # not set anew on the refitted distances
    assert not np.array_equal(upca.distances_, paper.distances_)
    np.testing.assert_array_equal(upca.permuted_mask_, upca.distances_ > upca.threshold_)
    assert upca.permuted_mask_[permuted].mean() > 0.95
    assert upca.permuted_mask_[~permuted].mean() < 0.10
    np.testing.assert_array_equal(upca.restore(X), UnlabeledPCA(3).fit_restore(X))
    angle = principal_angle(upca.components_, components)
    assert angle < principal_angle(paper.components_, components) / 2
    # every sample restored at the same tolerance: the refitted subspace does better
    every = UnlabeledPCA(3, restore_samples="all").fit(X)
    refitted = relative_restoration_error(X_true, every.restore(X))
    every.components_ = paper.components_
    assert refitted < 0.95 * relative_restoration_error(X_true, every.restore(X))
