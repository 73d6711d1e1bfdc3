# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Unlabeled PCA on arrays: Stage I (subspace, flagging), Stage II (restoration).

:func:`unlabeled_pca` is the function :class:`~skpapers.decomposition.UnlabeledPCA`
calls in ``fit``; :func:`coefficients` is what ``transform`` and ``restore`` call.
"""

import functools
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from scipy.special import ndtri
from sklearn.utils import check_array, gen_even_slices
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_random_state

from skpapers.decomposition._unlabeled_pca.subspace import (
    _EXACT_FIT,
    _MOVE_TOL,
    _UNEXPLAINED_FLAG,
    _UNEXPLAINED_MAX,
    _flag_threshold,
    _held_out_distances,
    _least_squares,
    _one_blas_thread,
    _sin_largest_angle,
    _stage1,
    _unexplained,
    _unexplained_after,
)
from skpapers.decomposition._unlabeled_pca.unlabeled_sensing import (
    _lad,
    _lsrf,
    _moment_search,
    _pseudo_likelihood,
    moment_directions,
)
from skpapers.exceptions import FlaggingWarning
from skpapers.utils._links import _user_stacklevel
from skpapers.utils._progress import Progress
from skpapers.utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["UnlabeledPCAResult", "unlabeled_pca"]

_MAD_ENTRIES = 2**17  # residual entries behind lsrf_tol="auto" (unflagged samples)
_MOMENT_ROUNDS = 8  # search rounds of "hard_em" for a sample not fitted to the noise level
_HELPS = 1.5  # a restoration is kept when its residual exceeds this times its own error
_MISPLACED = 0.5  # moved entries, sorted, match the restored ones within this share
_SPREAD = 0.55  # entries a restoration fits keep at least this share of the sample's spread
_SHAPE_FROM = 0.1  # clean distance from which clean tails can pass for moved entries
_HALVES = 0.5  # restorations from two halves of the entries differ by at most this x the move
_HALVES_FROM = 0.05  # clean distance from which restorations are checked on halves
_PARTLY_SHUFFLED = 0.2  # flagged samples with at most this share beyond tolerance join a refit
_REFIT_ROUNDS = 10  # rounds of the refit from restored samples with missing entries
_FEW_IN_PLACE = 0.2  # an incomplete sample's restoration fitting fewer entries beyond r: dropped
_DROPPED_WARN = 0.1  # warn when more than this share of the incomplete ones is dropped


def _moment_schedule(r):
    """Search schedule of ``"hard_em"`` by ``r``.

    Points per round on the moment sphere, hard-EM starts per round, and how
    many of those starts run first (the others only for the samples that the
    first ones leave above the noise level). At ``r = 3`` the best-scored
    local minimum of the circle first: 2-3x less CPU, the same samples
    restored on the dense benchmark; from ``r = 4`` the best-scored start too
    often reaches the noise level in a wrong basin (98-99% restored instead of
    100%), so all starts run at once.
    """
    if r == 3:
        return 360, 10, 1
    if r < 3:
        return 360, 10, 10
    return min(500 * 4 ** (r - 3), 20_000), 20, 20

PARAMETER_CONSTRAINTS = {
    "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
    "stage1": [StrOptions({"dpcp", "cop", "pca"})],
    "stage2": [StrOptions({"auto", "lsrf", "l1", "pl", "hard_em"})],
    "p": [Interval(numbers.Real, 0, 2, closed="right")],
    "restore_samples": [StrOptions({"checked", "flagged", "all"})],
    "fit_mean": ["boolean"],
    "outlier_threshold": [Interval(numbers.Real, 0, None, closed="neither")],
    "lsrf_tol": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"}), None],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    # joblib's convention; 0 has no meaning (refused at fit, not at restore)
    "n_jobs": [
        Interval(numbers.Integral, None, -1, closed="right"),
        Interval(numbers.Integral, 1, None, closed="left"),
        None,
    ],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


@dataclass(frozen=True)
class UnlabeledPCAResult:
    """What :func:`unlabeled_pca` found besides the subspace.

    Parameters
    ----------
    distances : ndarray of shape (n_samples,)
        Sine of the angle between each sample and the subspace (observed
        entries only when some are missing).
    threshold : float
        Flagging threshold on the distances.
    permuted_mask : ndarray of shape (n_samples,) of bool
        Samples flagged as permuted (``distances > threshold`` with the
        ``"distance"`` rule, ``unexplained > sqrt(1/2)`` with ``"unexplained"``).
    n_iter : int
        Number of Stage-I iterations.
    lsrf_tol : float or None
        The LSRF tolerance in use (``"auto"`` resolved).
    flagging_rule : {"distance", "unexplained"}, default="distance"
        The rule behind ``permuted_mask``: ``"unexplained"`` where the distance
        rule reached the distance of a random direction or most residuals are
        explained by other samples, and the leave-one-out rule applies
        (:func:`unlabeled_pca`, Notes of
        :class:`~skpapers.decomposition.UnlabeledPCA`).
    unexplained : ndarray of shape (n_samples,) or None, default=None
        The statistic of the ``"unexplained"`` rule (None with ``"distance"``).
    flagging_warning : str or None, default=None
        The message of the :class:`~skpapers.exceptions.FlaggingWarning` the
        fit emitted (no rule can tell partly permuted samples apart), or None.
    clean_distance : float or None, default=None
        Root mean square distance (sine) of the unflagged samples to the
        subspace, samples it passes through left out: the error a restoration
        is expected to have (None when no such sample is left).
    mean : ndarray of shape (n_features,) or None, default=None
        Point of the affine subspace (``fit_mean=True``; zeros otherwise).
    """

    distances: np.ndarray
    threshold: float
    permuted_mask: np.ndarray
    n_iter: int
    lsrf_tol: float | None
    flagging_rule: str = "distance"
    unexplained: np.ndarray | None = None
    flagging_warning: str | None = None
    clean_distance: float | None = None
    mean: np.ndarray | None = None


def _describe(rows, count=None):
    """Name the samples of a boolean mask, or of its first indices and their ``count``."""
    rows = np.flatnonzero(rows) if count is None else np.asarray(rows)
    count = rows.size if count is None else count
    return f"{count} sample(s) (indices {_first_indices(rows, count)})"


def _first_indices(indices, count=None):
    """Join the first 10 of ``indices`` with commas, with "..." if ``count`` is more."""
    count = len(indices) if count is None else count
    return ", ".join(str(i) for i in indices[:10]) + (", ..." if count > 10 else "")


def observed(X, n_components, who="UnlabeledPCA", fitting=False):
    """Zero-filled float64 copy of ``X`` and its mask (``None`` if complete).

    ``fitting``: ``X`` is the training set, and a feature missing in all of it
    leaves the subspace without information there (a warning). On samples to
    restore, a feature missing in all of them is filled from the fitted
    subspace like any missing entry: no warning.
    """
    missing = np.isnan(X)
    if not missing.any():
        return np.asarray(X, dtype=np.float64), None
    mask = ~missing
    empty = np.flatnonzero(~mask.any(axis=0))
    if fitting and empty.size:
        warnings.warn(
            f"{who}: feature column(s) {_first_indices(empty)} are missing (NaN) in every "
            "sample. The subspace has no information there: components_ is 0 along them, and "
            "restore fills them with 0.",
            UserWarning,
            stacklevel=3,
        )
    n_obs = mask.sum(axis=1)
    if np.any(n_obs == 0):
        raise ValueError(
            f"{who} got {_describe(n_obs == 0)} with every entry missing (NaN); drop them first."
        )
    few = n_obs < n_components + 1
    if np.any(few):
        raise ValueError(
            f"{who} needs at least n_components + 1 = {n_components + 1} observed entries "
            f"per sample; {_describe(few)} have fewer. Lower n_components or drop those "
            "samples."
        )
    return np.where(mask, X, 0.0), mask


def distances(Y, M, C, U):
    """Sine of the angle between every sample and its projection (observed entries).

    ``C`` holds the least-squares coefficients of the samples on the columns of
    ``U``. Complete samples on an orthonormal ``U`` take one pass over ``Y``:
    ``|y|**2 - |c|**2``, with the residual formed explicitly where that cancels.
    """
    sq = np.einsum("ij,ij->i", Y, Y)
    norms = np.sqrt(sq)
    r = U.shape[1]
    if M is None and np.allclose(U.T @ U, np.eye(r), rtol=0, atol=1e-12):
        d2 = sq - np.einsum("ij,ij->i", C, C)
        close = d2 < 1e-6 * sq
        d = np.sqrt(np.maximum(d2, 0.0))
        if close.any():
            d[close] = np.linalg.norm(Y[close] - C[close] @ U.T, axis=1)
        return d / np.where(norms > 0, norms, 1.0)
    res = Y - C @ U.T
    if M is not None:
        res = res * M
    return np.linalg.norm(res, axis=1) / np.where(norms > 0, norms, 1.0)


def _warn_too_far(median, n_flagged, n, threshold, r, m):
    """Warn that no flagging rule can find partly permuted samples here; return the text.

    ``median``: the median distance, ``n_flagged`` of ``n`` samples flagged.
    """
    message = (
        f"UnlabeledPCA: most samples are far from the fitted {r}-dimensional "
        f"subspace (median distance {median:.2f}, sine of the angle): the "
        f"data are far from rank {r}, or too few samples are clean. The flagging "
        f"threshold ({threshold:.2f}) is at or above the distance of a random "
        "direction (distances are sines, at most 1), so only samples that far, if "
        f"any, are flagged ({n_flagged} of {n}); "
        "samples with part of their entries permuted are not told apart from "
        "clean ones, and restore_samples='checked' leaves them unchanged. The "
        "fallback rule (flagging_rule_='unexplained') needs complete samples "
        f"and {r + 2} <= n_samples <= {_UNEXPLAINED_MAX} with n_samples < "
        f"n_features; here n_samples = {n}, n_features = {m}. "
        "Consider a larger n_components if the data are close to a larger "
        "subspace, or restore_samples='all', which restores every sample (clean "
        "ones are then replaced by their fit, which can raise their error)."
    )
    warnings.warn(message, FlaggingWarning, stacklevel=3)
    return message


def _clean_distance(d, flagged):
    """Root mean square distance of the unflagged samples the fit does not pass through.

    0 when every unflagged sample lies on the subspace (exactly low-rank data),
    None when every sample is flagged.
    """
    if flagged.all():
        return None
    clean = d[~flagged & (d > _EXACT_FIT)]
    return float(np.sqrt(np.mean(clean**2))) if clean.size else 0.0


def _warn_no_clean_part(n, k, median, median_clean, threshold, rule, r):
    """Warn that too few samples look clean to restore any; return the text.

    ``n`` samples, ``k`` flagged; ``median`` the median distance of all samples,
    ``median_clean`` that of the unflagged ones (None when there are none).
    """
    by = (
        f"by the distance to the subspace (threshold {threshold:.3g})"
        if rule == "distance"
        else "by the share of their distance no other sample explains"
    )
    message = (
        f"UnlabeledPCA: {k} of {n} samples are flagged as permuted {by}, leaving "
        f"{n - k} that look clean, fewer than n_components + 2 = {r + 2}: the "
        f"{r}-dimensional subspace does not explain the clean part of the data well "
        "enough to tell permuted entries from clean ones (median distance of the samples "
        f"{median:.2f}, sine of the angle"
        + (f"; of the unflagged ones {median_clean:.2f}" if median_clean is not None else "")
        + "). No sample is flagged or restored: restore returns the data as given. "
        "Restoring would replace samples by points of a subspace far from them, which "
        "can make them worse than leaving them. Consider a larger n_components if the "
        "data are close to a larger subspace; restore_samples='all' restores every "
        "sample regardless."
    )
    warnings.warn(message, FlaggingWarning, stacklevel=3)
    return message


def _warn_undetermined(M, flagged, r):
    """Warn when features are observed in fewer than ``r`` unflagged samples.

    Row ``i`` of the subspace's basis has ``r`` unknowns, fitted on the samples
    that observe feature ``i``; the samples left unflagged are the ones the
    subspace is fitted to (permuted samples only join through their own
    restorations). Fewer than ``r`` of them leave that row free: the permuted
    samples, or chance, set it (fully shuffled samples with half the entries
    missing, m = 200, r = 5, 30 clean samples of 300, seed 1854 of the
    benchmark: a feature observed in 4 clean samples put the fit 8.6 degrees
    off, and 179 of the 270 shuffled samples were restored). Features missing
    in every sample are warned about by :func:`observed`.
    """
    counts = M[~flagged].sum(axis=0)
    few = np.flatnonzero((counts < r) & M.any(axis=0))
    if not few.size:
        return
    warnings.warn(
        f"UnlabeledPCA: feature column(s) {_first_indices(few)} are observed in fewer than "
        f"n_components = {r} of the {int((~flagged).sum())} samples left unflagged "
        f"(as few as {int(counts[few].min())}): the samples that fit the subspace do "
        "not determine it along those features, and restorations can be wrong there. "
        "More samples with those features observed, or a smaller n_components, "
        "fix it.",
        FlaggingWarning,
        stacklevel=_user_stacklevel(),
    )


def _held_out_threshold(Y, d, flagged, threshold, r):
    """Raise the flagging threshold to the unflagged samples' leave-one-out distances.

    A flagged sample is held out of the fit it is measured against; an
    unflagged one is in it, so its distance understates how far a clean sample
    lies from a subspace fitted without it, and on few samples by far: the
    3-dimensional fit through 5 clean attributes of statsmodels' copper passes
    through 2 of them (distance 0), which lie at 0.65 and 0.96 from the fit
    without them, and a clean attribute at 0.71 was flagged and restored. With
    at most ``_UNEXPLAINED_MAX`` unflagged samples (complete), a sample stays
    flagged only when it is farther than every unflagged sample is from the
    subspace of the others
    (:func:`~skpapers.decomposition._unlabeled_pca.subspace._held_out_distances`):
    the threshold is raised to that distance (new samples passed to restore
    are flagged against it too), and a FlaggingWarning names the samples this
    unflags. Returns the threshold and the warning's text (None when no
    sample is unflagged).
    """
    clean = ~flagged
    if clean.sum() > _UNEXPLAINED_MAX:
        return threshold, None
    held = _held_out_distances(Y[clean], r)
    farthest = float(held.max())
    dropped = flagged & (d <= farthest)
    if not dropped.any():
        return max(threshold, farthest), None
    message = _held_out_message(
        _describe(dropped), int(flagged.sum()), d[dropped].max(), held, d[clean], r
    )
    warnings.warn(message, FlaggingWarning, stacklevel=3)
    return max(threshold, farthest), message


def _held_out_message(described, n_flagged, largest, held, clean, r):
    """Word the FlaggingWarning of :func:`_held_out_threshold` (shared with the Dask fit)."""
    return (
        f"UnlabeledPCA: {described} of the {n_flagged} flagged "
        f"(distance at most {largest:.2f}, sine) are no farther from the "
        f"{r}-dimensional subspace than an unflagged sample is from the subspace "
        f"fitted without it (leave-one-out: up to {held.max():.2f}, median "
        f"{np.median(held):.2f}; fitted with them: median {np.median(clean):.2f}): "
        "the subspace does not explain the clean samples well enough to tell permuted "
        "entries from clean ones, so these samples are not flagged and restore returns "
        "them as given. Consider a larger n_components if the data are close to a "
        "larger subspace; restore_samples='all' restores every sample regardless."
    )


def loo_settings(stage1, p, max_iter, tol):
    """Collect the leave-one-out rule's Stage-I settings, as :func:`coefficients` takes them."""
    return {"stage1": stage1, "p": p, "max_iter": max_iter, "tol": tol}


def unexplained_flags(X, n_components, *, stage1, p, max_iter, tol):
    """Flag the samples of ``X`` by the ``"unexplained"`` rule (None where it does not apply).

    The rule compares each sample with the other samples of ``X``: ``restore``
    of a fitted :class:`~skpapers.decomposition.UnlabeledPCA` whose
    ``flagging_rule_`` is ``"unexplained"`` applies it to the samples it is given.
    """
    if np.isnan(X).any():
        return None
    Y = np.asarray(X, dtype=np.float64)
    Y = Y / _power_of_two_scale(Y)
    with _one_blas_thread(min(Y.shape)):  # n x n fits, as in the fit
        ratio = _unexplained(Y, None, n_components, stage1, p, max_iter, tol)
    return None if ratio is None else ratio > _UNEXPLAINED_FLAG


def _resolve_lsrf_tol(lsrf_tol, Y, M, C, U, flagged):
    if lsrf_tol != "auto":
        return lsrf_tol
    rows = np.flatnonzero(~flagged) if np.any(~flagged) else np.arange(len(Y))
    cap = max(1, _MAD_ENTRIES // Y.shape[1])
    if rows.size > cap:  # 2**17 entries give the quartile to about 1%
        rows = np.sort(np.random.default_rng(0).choice(rows, cap, replace=False))
    res = Y[rows] - C[rows] @ U.T
    if M is not None:
        res = np.where(M[rows], res, np.nan)
    return _lsrf_tol_from(res, np.max(np.abs(Y)))


def _lsrf_tol_from(res, top):
    """``lsrf_tol="auto"`` from residual rows (NaN: missing) and the largest ``|Y|``."""
    # per-sample median absolute deviations, and their lower quartile: the noise
    # level of the cleanest samples, even when shuffled samples went unflagged
    mads = np.nanmedian(np.abs(res - np.nanmedian(res, axis=1, keepdims=True)), axis=1)
    mad = np.percentile(mads, 25)
    floor = np.sqrt(np.finfo(np.float64).eps) * top
    return float(max(3.0 * 1.4826 * mad, floor))


def _refit_partly_shuffled(Y, U, flagged, tol, max_iter):
    """Refit the subspace with the entries of the partly shuffled samples it fits.

    Stage I treats every flagged sample as an outlier, so a sample with a few
    entries shuffled (and most of them in place) does not inform the subspace.
    LSRF (tolerance ``tol``) fits each flagged sample; those with at most
    ``_PARTLY_SHUFFLED`` of their entries beyond the tolerance join the
    unflagged samples in a PCA (of the samples scaled to unit norm, as
    ``stage1="pca"``) with those entries missing. Densely shuffled samples stay out.
    The missing entries start at their LSRF fit and are refilled with their
    projection on the current subspace (EM for PCA with missing entries), until
    the subspace moves by at most ``_MOVE_TOL`` or after ``max_iter`` rounds.
    ``Y`` is complete.

    Returns
    -------
    U : ndarray of shape (n_features, r)
        The refitted basis, or ``U`` when no sample joins.
    joined : int
        Number of flagged samples that joined the refit.
    """
    rows = np.flatnonzero(flagged)
    if rows.size == 0:
        return U, 0
    joined, beyond = _partly_shuffled(U, Y[rows], tol)
    if not len(joined) or np.sum(~flagged) + len(joined) <= U.shape[1]:  # r + 1 samples
        return U, 0
    Yu = np.concatenate([Y[~flagged], joined])
    joined = Yu[len(Yu) - len(beyond) :]  # a view: refilled in place
    for _ in range(max_iter):
        U_new, _ = _stage1(Yu, None, U.shape[1], "pca", 2.0, 1, 0.0)
        moved = _sin_largest_angle(U, U_new)
        U = U_new
        if moved <= _MOVE_TOL:
            break
        joined[beyond] = ((joined @ U) @ U.T)[beyond]
    return U, len(beyond)


def _partly_shuffled(U, Y, tol):
    """Select the flagged samples ``Y`` that join the refit; refill their entries beyond ``tol``.

    Returns the joining rows (entries beyond the tolerance replaced by their
    LSRF fit) and the mask of those entries.
    """
    fit = _lsrf(U, Y, None, tol) @ U.T
    beyond = np.abs(Y - fit) > tol
    part = beyond.mean(axis=1) <= _PARTLY_SHUFFLED
    return np.where(beyond, fit, Y)[part], beyond[part]


def _refit_restored(X, Y, M, U, flagged, solve, clean_distance, max_iter, tol):
    """Refit the subspace with the flagged samples with missing entries that it restores.

    Stage I leaves every flagged sample out, and with missing entries the
    unflagged ones alone can leave it a few degrees off (300 samples of a
    5-dimensional subspace of ``R^50``, half of the entries missing, the
    observed entries of 270 samples shuffled, seeds 1720-1727: up to 3.2
    degrees, 62.6% of the shuffled samples restored; 0.54 and 99.6% with the
    refit, Notes of :class:`~skpapers.decomposition.UnlabeledPCA`). Each round
    restores the flagged samples that have not joined yet on the current
    subspace (Stage II, ``solve``), puts
    each sample's observed values in the order of its restoration
    (:func:`_reordered`: the permutation a restoration implies), and the
    samples whose reordered values match the restoration to the noise level
    of the clean samples (sorted error at most 3 times ``clean_distance``, the
    test of :func:`_dense_helps`) join the unflagged samples in a PCA with
    missing entries (``stage1="pca"``). It stops when no sample joins or the
    subspace moves by at most ``_MOVE_TOL``, after at most ``_REFIT_ROUNDS``
    rounds. ``X``: the samples with NaN, in the units of ``Y``. Returns the
    basis (``U`` itself when no sample joins) and the number of restored
    samples in the last PCA.
    """
    rows = np.flatnonzero(flagged)
    if rows.size == 0 or clean_distance is None or clean_distance > _SHAPE_FROM:
        return U, 0
    Z, M_z = np.empty((0, Y.shape[1])), np.empty((0, Y.shape[1]), dtype=bool)
    for _ in range(_REFIT_ROUNDS):
        C = solve(X[rows], U.T, flags=np.ones(rows.size, dtype=bool))[0]
        joins = _dense_helps(U, Y[rows], M[rows], C, clean_distance)
        if not joins.any():
            break
        Z = np.concatenate([Z, _reordered(Y[rows[joins]], M[rows[joins]], C[joins] @ U.T)])
        M_z = np.concatenate([M_z, M[rows[joins]]])
        rows = rows[~joins]
        U_new, _ = _stage1(
            np.concatenate([Y[~flagged], Z]), np.concatenate([M[~flagged], M_z]),
            U.shape[1], "pca", 2.0, max_iter, tol,
        )  # fmt: skip
        moved = _sin_largest_angle(U, U_new)
        U = U_new
        if moved <= _MOVE_TOL or not rows.size:
            break
    return U, len(Z)


def _refitted(U, joined, Y, M, C, d, flagged, threshold, rule):
    """Coefficients, distances and flags on a refitted subspace (unchanged if none joined).

    The distances are measured against the Stage-I threshold; the flags follow
    them under the distance rule only.
    """
    if not joined:
        return C, d, flagged
    C = _least_squares(U, Y, M)
    d = distances(Y, M, C, U)
    return C, d, d > threshold if rule == "distance" else flagged


def _reordered(Y, M, fit):
    """Each sample's observed values in the order of ``fit`` on its observed entries.

    The ``k``-th smallest observed value goes to the observed entry where
    ``fit`` is ``k``-th smallest: the permutation among the observed entries
    that brings the values closest to ``fit``. Missing entries are 0.
    """
    # missing entries sort last (inf) on both sides and receive 0
    order = np.argsort(np.where(M, fit, np.inf), axis=1, kind="stable")
    values = np.sort(np.where(M, Y, np.inf), axis=1)
    first = np.arange(Y.shape[1])[None, :] < M.sum(axis=1)[:, None]
    out = np.zeros_like(Y)
    np.put_along_axis(out, order, np.where(first, values, 0.0), axis=1)
    return out


def _stage2_chunk(A, Y, M, method, tol, search):
    """Stage-II coefficients of one chunk of samples (the unit of ``n_jobs``)."""
    if method == "lsrf":
        return _lsrf(A, Y, M, tol)
    if method == "l1":
        return _lad(A, Y, M)
    if method == "pl":
        return _pseudo_likelihood(A, Y, M)
    threshold, dirs, full, shift, n_best, n_first, noise = search
    norms = np.linalg.norm(Y if M is None else np.where(M, Y, 0.0), axis=1)
    return _moment_search(
        A, Y, M, threshold * norms, dirs, full, n_best, n_first, shift=shift,
        noise=None if noise is None else noise * norms,
    )[0]  # fmt: skip


def _stage2(
    U, Y, M, stage2, *, lsrf_tol, n_jobs, random_state, threshold, progress=None,
    clean_distance=None,
):  # fmt: skip
    search = None
    if stage2 == "hard_em":
        rng = check_random_state(random_state)
        n_points, n_best, n_first = _moment_schedule(U.shape[1])
        dirs, full, shift = moment_directions(U.shape[1], n_points, _MOMENT_ROUNDS, rng)
        # the noise of a sample, relative: the distance of the clean samples
        noise = None if clean_distance is None else max(clean_distance, _EXACT_FIT)
        search = (threshold, dirs, full, shift, n_best, n_first, noise)
    n_chunks = min(effective_n_jobs(n_jobs), len(Y))
    if progress is not None and progress.verbose >= 2:
        n_chunks = max(n_chunks, min(len(Y), 8))  # chunks to report on
    results = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(_stage2_chunk)(U, Y[s], None if M is None else M[s], stage2, lsrf_tol, search)
        for s in gen_even_slices(len(Y), n_chunks)
    )
    chunks = []
    for i, chunk in enumerate(results, 1):
        chunks.append(chunk)
        if progress is not None:
            progress.iteration(f"Stage II ({stage2}): chunk {i}/{n_chunks} done", force=True)
    return np.concatenate(chunks)


def _power_of_two_scale(X):
    """Return a power of two near the largest absolute entry (1 for a zero array).

    Dividing by it is exact in floating point, and puts the data where squares
    and sums neither overflow (``X * 1e160``) nor underflow (``X * 1e-200``).
    """
    with np.errstate(all="ignore"):
        top = np.nanmax(np.abs(X)) if X.size else 0.0
    if not np.isfinite(top) or top == 0:
        return 1.0
    return float(2.0 ** np.round(np.log2(top)))


def coefficients(
    X, components, threshold, *, stage2, restore_samples, lsrf_tol, n_jobs, random_state,
    verbose=0, progress=None, flags=None, clean_distance=None, loo=None,
):
    """Coefficients of every sample, the entries their restoration replaces, the mask.

    Samples whose distance exceeds ``threshold`` (the samples in ``flags`` when
    it is given; every sample with ``restore_samples="all"``) go through
    Stage II; the others are projected. The second value is a boolean array of
    the shape of ``X``: the entries that :func:`restored` replaces by the
    restoration (every entry of a restored sample, or with
    ``restore_samples="checked"`` on data not close to rank ``r`` only the
    entries it finds moved, :func:`_moved_entries`).
    ``loo``: the Stage-I settings (:func:`loo_settings`) when ``flags`` come from
    the leave-one-out rule; with ``restore_samples="checked"`` each kept
    restoration is then re-checked against that rule with the other samples
    restored, and dropped when the sample is explained by them
    (:func:`~skpapers.decomposition._unlabeled_pca.subspace._unexplained_after`).
    The work is done on ``X`` divided by a power of two (:func:`_power_of_two_scale`)
    and scaled back, so the result does not depend on the units of ``X``.
    """
    scale = _power_of_two_scale(X)
    X = X / scale
    if lsrf_tol is not None:
        lsrf_tol = lsrf_tol / scale
    progress = Progress("unlabeled_pca", verbose) if progress is None else progress
    with _one_blas_thread(components.shape[0]):  # Stage II: products of width r
        C, replaced, M = _coefficients(
            X, components, threshold, stage2=stage2, restore_samples=restore_samples,
            lsrf_tol=lsrf_tol, n_jobs=n_jobs, random_state=random_state, progress=progress,
            flags=flags, clean_distance=clean_distance, loo=loo,
        )
    return C * scale, replaced, M


def _coefficients(
    X, components, threshold, *, stage2, restore_samples, lsrf_tol, n_jobs, random_state,
    progress, flags, clean_distance, loo,
):
    Y, M = observed(X, components.shape[0])
    U = components.T.astype(np.float64)
    C = _least_squares(U, Y, M)
    if restore_samples == "all":
        selected = np.ones(len(Y), dtype=bool)
    elif flags is not None:
        selected = np.asarray(flags, dtype=bool)
    else:
        selected = distances(Y, M, C, U) > threshold
    n_dense = n_dropped = 0
    flagged = selected.copy()
    if selected.any():
        rows = np.flatnonzero(selected)
        Y_sel, M_sel = Y[rows], None if M is None else M[rows]
        solve = functools.partial(
            _stage2, lsrf_tol=lsrf_tol, n_jobs=n_jobs, random_state=random_state,
            threshold=threshold, progress=progress, clean_distance=clean_distance,
        )  # fmt: skip
        C_sel = solve(U, Y_sel, M_sel, "lsrf" if stage2 == "auto" else stage2)
        dense = np.full(rows.size, stage2 == "hard_em")
        # samples about as far from the subspace as a random direction (0.9 x its
        # floor): densely permuted ones; closer ones are partly permuted or poorly
        # explained
        far = distances(Y_sel, M_sel, C[rows], U) >= 0.9 * _random_direction(
            U.shape[1], Y.shape[1] if M_sel is None else M_sel.sum(axis=1)
        )
        if stage2 == "auto":  # hard EM for the far samples whose LSRF restoration
            # misses the noise level in its sorted values
            dense = far & ~_dense_helps(U, Y_sel, M_sel, C_sel, clean_distance)
            dense &= clean_distance is not None and clean_distance <= _SHAPE_FROM
            if dense.any():
                M_d = None if M_sel is None else M_sel[dense]
                C_d = solve(U, Y_sel[dense], M_d, "hard_em")
                # hard EM's restoration replaces LSRF's where it fits the sorted values
                # to the noise level of the clean samples
                fits = _dense_helps(U, Y_sel[dense], M_d, C_d, clean_distance)
                C_sel[np.flatnonzero(dense)[fits]] = C_d[fits]
                dense[np.flatnonzero(dense)[~fits]] = False
        n_dense = int(dense.sum()) if stage2 == "auto" else 0
        if restore_samples == "checked":  # keep clear improvements
            helps = _restoration_helps(U, Y_sel, M_sel, C_sel)
            if stage2 == "hard_em":
                helps = _dense_helps(U, Y_sel, M_sel, C_sel, clean_distance)
            elif clean_distance is None or clean_distance > _HALVES_FROM:
                # data not close to rank r: reproducible from either half of the entries
                held = np.flatnonzero(helps & ~dense)
                method = "lsrf" if stage2 == "auto" else stage2
                helps[held] = _halves_agree(
                    U, Y_sel[held], None if M_sel is None else M_sel[held], C_sel[held],
                    functools.partial(solve, stage2=method),
                )  # fmt: skip
            helps[dense] = True  # hard EM under "auto": kept only at the noise level
            if not helps.any():
                _warn_left_unchanged(rows.size, loo=loo is not None)
            elif M_sel is not None:
                helps, n_dropped = _drop_unverified(
                    U, Y_sel, M_sel, C_sel, helps, lsrf_tol, clean_distance
                )
            rows, C_sel, dense, far = rows[helps], C_sel[helps], dense[helps], far[helps]
            selected = np.zeros(len(Y), dtype=bool)
            selected[rows] = True
        C[rows] = C_sel
    replaced = np.zeros(Y.shape, dtype=bool)
    replaced[selected] = True
    entries = ""
    if selected.any() and restore_samples == "checked" and (
        clean_distance is None or clean_distance > _HALVES_FROM
    ):  # not close to rank r: the entries the restoration finds moved, not the sample
        res = _abs_residuals(U, Y[rows], None if M is None else M[rows], C[rows])
        moved = _moved_entries(res, _noise_scale(res))
        moved[dense | far] = True  # a dense permutation: every entry may have moved
        replaced[rows] = moved
        entries = f" ({int(replaced.sum())} entries)"
    if loo is not None and restore_samples == "checked" and selected.any():
        again = functools.partial(
            _coefficients, threshold=threshold, stage2=stage2, restore_samples="checked",
            lsrf_tol=lsrf_tol, n_jobs=1, random_state=random_state,
            progress=Progress("unlabeled_pca", 0), flags=np.ones(1, dtype=bool),
            clean_distance=clean_distance, loo=None,
        )  # fmt: skip
        entries += _loo_rechecks(Y, U, C, replaced, selected, again, loo)
        if not selected.any():
            _warn_left_unchanged(int(flagged.sum()), loo=True)
    label = stage2
    if stage2 == "auto":
        label = f"lsrf, hard_em on {n_dense}" if n_dense else "lsrf"
    if n_dropped:
        entries += f"; {n_dropped} restoration(s) of incomplete samples fit no permutation model"
    progress.stage(
        f"Stage II ({label}): restored {int(selected.sum())} of {len(Y)} samples{entries}"
    )
    return C, replaced, M


def _loo_rechecks(Y, U, C, replaced, selected, again, loo):
    """Run checks (6) and (5) of ``restore_samples="checked"`` (leave-one-out rule).

    A kept restoration must also be kept on the subspace fitted without its
    sample (:func:`_held_out_kept`, with ``again``), and then its sample, as
    given, must stay unexplained beside the other samples as returned
    (:func:`_unexplained_after`). A sample that fails either is returned as
    given (its coefficients become its projection): ``C``, ``replaced`` and
    ``selected`` are updated in place. Returns the words for the progress line.
    """

    def give_back(rows):
        C[rows] = _least_squares(U, Y[rows], None)
        replaced[rows] = selected[rows] = False

    rows = np.flatnonzero(selected)
    held = rows[~_held_out_kept(Y, rows, U.shape[1], again, loo)]
    give_back(held)
    kept = np.flatnonzero(selected)
    B = restored(Y, C, replaced, None, U.T)  # the table as returned
    explained = kept[_unexplained_after(Y, B, kept, U.shape[1], **loo) <= _UNEXPLAINED_FLAG]
    give_back(explained)
    return (
        (f"; {held.size} not kept on the subspace fitted without them" if held.size else "")
        + (f"; {explained.size} explained by the others' restorations, unchanged"
           if explained.size else "")
    )


def _held_out_kept(Y, rows, r, again, loo):
    """Whether each restoration of ``Y[rows]`` is kept on a subspace fitted without its sample.

    A held-out check of a restoration, for the leave-one-out rule's setting
    (complete samples, fewer than the features, at most 100): Stage I runs
    again without sample ``j`` (``loo``: its settings), and Stage II with
    every check of ``restore_samples="checked"`` on that subspace
    (``again``: :func:`_coefficients` for one flagged sample and a basis) must
    keep a restoration of sample ``j`` too. Robust fits give a shuffled sample
    little weight, so leaving it out changes little; a clean sample the
    subspace explains poorly can pull the fit towards itself (its weight is
    not small among so few samples), and its residual then looks like a few
    moved entries on a subspace that half-fits it. The fits run in the
    coordinates of the samples' span (the subspace lies in it), mapped back.
    """
    Q, R = np.linalg.qr(Y.T)  # Y = R.T @ Q.T: coordinates R.T in the basis Q
    coordinates = R.T
    kept = np.zeros(len(rows), dtype=bool)
    for i, j in enumerate(rows):
        U_j, _ = _stage1(np.delete(coordinates, j, axis=0), None, r, **loo)
        with warnings.catch_warnings():  # a re-check: the fit warns for itself
            warnings.simplefilter("ignore", FlaggingWarning)
            kept[i] = again(Y[j : j + 1], (Q @ U_j).T)[1].any()
    return kept


def _abs_residuals(U, Y, M, C):
    """``|Y - C @ U.T|``, NaN where an entry is missing."""
    res = np.abs(Y - C @ U.T)
    return res if M is None else np.where(M, res, np.nan)


def _moved_entries(res, scale):
    """Mark the entries of each sample that its restoration finds moved.

    ``res``: the absolute residuals (:func:`_abs_residuals`), ``scale``: their
    noise scale per sample (:func:`_noise_scale`). The entries beyond 3 times
    it (False where missing): the entries the
    misplaced-values test of :func:`_restoration_helps` reads as values put in
    the wrong places. ``restore_samples="checked"`` replaces only these on
    data not close to rank ``r`` (``clean_distance`` above ``_HALVES_FROM``).
    A restoration is a point of the subspace, and there the subspace explains
    even a clean sample only to a distance comparable to that of the clean
    samples: on an entry the permutation left in place the observed value is
    exact and the restoration's value is off by the subspace's misfit, so
    replacing it only adds error. On a sample whose true values lie farther
    from the subspace than the permutation moved them, replacing the whole
    sample is worse than leaving it, whatever the restoration (statsmodels'
    star98 at rank 3, seed 1104: an attribute 0.29 from the subspace, 13 of
    303 records shuffled, moved by 0.20 of its norm; restored whole, 0.29
    from its true values and the table 1.15 times worse than doing nothing);
    the 14 entries found moved held 8 of the 13 shuffled ones, and replacing
    only them left the table 1.02 times worse.
    """
    return res > 3.0 * scale[:, None]  # False where missing (NaN)


def _random_direction(r, m):
    """Distance (sine) below which a random direction of ``R^m`` rarely falls.

    ``d**2`` of a random direction to an ``r``-dimensional subspace is
    ``Beta((m - r) / 2, r / 2)``; its mean minus 3 standard deviations (the cap
    of :func:`~skpapers.decomposition._unlabeled_pca.subspace._flag_threshold`).
    """
    a, b = (np.asarray(m, dtype=float) - r) / 2.0, r / 2.0
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    return np.sqrt(np.maximum(a / (a + b) - 3.0 * sd, 0.0))


def _sorted_error(U, Y, M, C):
    """``|sort(y) - sort(restoration)|`` over the observed entries of each sample.

    Permutation-invariant: for a permuted sample ``y`` the sorted values are
    those of its true values, so a correct restoration has a sorted error at
    the noise level, however many entries the permutation moved.
    """
    fit = C @ U.T
    if M is None:
        return np.linalg.norm(np.sort(Y, axis=1) - np.sort(fit, axis=1), axis=1)
    first = np.arange(Y.shape[1])[None, :] < M.sum(axis=1)[:, None]
    a = np.sort(np.where(M, Y, np.inf), axis=1)
    b = np.sort(np.where(M, fit, np.inf), axis=1)
    return np.sqrt(np.sum((np.where(first, a, 0.0) - np.where(first, b, 0.0)) ** 2, axis=1))


def _dense_helps(U, Y, M, C, clean_distance):
    """Whether each dense restoration (hard EM) is kept by ``restore_samples="checked"``.

    Most entries of such a sample moved, so its own residual cannot tell the
    restoration's error (:func:`_restoration_helps`); its sorted values can:
    a restoration is kept when its sorted error is at most 3 times the typical
    distance of the clean samples (``clean_distance``, relative), on data close
    to rank ``r`` (``clean_distance <= _SHAPE_FROM = 0.1``, or 0: exactly of
    rank ``r``). Far from rank ``r`` a point of the subspace can match the
    sorted values of any sample roughly, clean or not.
    """
    if clean_distance is None or clean_distance > _SHAPE_FROM:
        return np.zeros(len(Y), dtype=bool)
    norms = np.linalg.norm(Y if M is None else np.where(M, Y, 0.0), axis=1)
    return _sorted_error(U, Y, M, C) <= 3.0 * max(clean_distance, _EXACT_FIT) * norms


def _noise_scale(res):
    """Per sample, the sd of its noise from absolute residuals ``res`` (NaN: missing).

    The lower quartile of ``|res|`` over that of ``|N(0, 1)|`` (0.3186): robust
    to half of a sample's entries moved by its permutation.
    """
    return np.nanpercentile(res, 25, axis=1) / ndtri(0.625)


def _restoration_helps(U, Y, M, C):
    """Whether each restoration ``C @ U.T`` of the samples ``Y`` clearly lowers their error.

    Write a sample as ``y = x + delta`` (its true values ``x``, moved by
    ``delta`` by the permutation) and its restoration as ``x + eps``. When the
    two errors are unrelated, ``|y - restoration|**2 = |delta|**2 + |eps|**2``,
    and the restoration helps when ``|delta| > |eps|``. Two tests, both needed
    (the second only where it is informative):

    1. Size: ``|eps|`` is estimated from the entries the restoration fits:
       ``eps_t ~ N(0, s**2)`` with ``s`` the lower quartile of the absolute
       residuals over 0.3186 (robust to half of the entries moved). The
       residual must exceed ``_HELPS = 1.5`` times the estimated ``|eps|``
       (``|delta| > 1.1 |eps|``). Clean samples of data only roughly of rank
       ``r`` have residuals spread over their entries (ratio near 1).
    2. Shape: the entries beyond ``3 s`` (the ones a permutation moved, or the
       heavy tail of a clean sample the subspace explains poorly) must look
       like values put in the wrong places: sorted, they must match the sorted
       restored values within ``_MISPLACED = 0.5`` of their unsorted distance
       (the sorted distance is a lower bound of ``|eps|`` there, the unsorted
       one is about ``sqrt(|delta|**2 + |eps|**2)``: ``|delta| > 1.7 |eps|``).
       Extreme values of a clean sample that the subspace cannot reach (a
       skewed attribute's largest records) have no misplaced partner: their
       sorted distance stays close to the unsorted one. Complete samples only
       (a moved entry's partner may be missing). It applies however close the
       clean samples are to the subspace: the samples of a real table differ
       in how well the subspace explains them, so a small typical distance of
       the clean samples does not vouch for a flagged one (star98 of
       statsmodels, rank 7: five clean attributes at 0.4-1.0 restored to 1.1-1.3
       times their norm while the typical clean attribute was at 0.1).
    3. Spread: the entries within ``3 s`` must span the sample's values
       (:func:`_fits_spread`).
    """
    fit = C @ U.T
    res = _abs_residuals(U, Y, M, C)
    n_obs = res.shape[1] if M is None else M.sum(axis=1)
    scale = _noise_scale(res)
    size = np.nansum(res**2, axis=1) > _HELPS**2 * n_obs * scale**2
    out = _moved_entries(res, scale)
    # sorted within each sample's outlying entries; the others sort last and drop
    first = np.arange(Y.shape[1])[None, :] < out.sum(axis=1)[:, None]
    a = np.sort(np.where(out, Y, np.inf), axis=1)
    b = np.sort(np.where(out, fit, np.inf), axis=1)
    sorted_sq = np.sum((np.where(first, a, 0.0) - np.where(first, b, 0.0)) ** 2, axis=1)
    unsorted_sq = np.sum(np.where(out, res, 0.0) ** 2, axis=1)
    misplaced = sorted_sq < _MISPLACED**2 * unsorted_sq
    if M is not None:
        misplaced |= ~M.all(axis=1)
    return size & misplaced & _fits_spread(Y, M, out)


def _fits_spread(Y, M, out):
    """Whether the entries a restoration fits (not ``out``) span the sample's values.

    A permutation moves entries chosen without regard to their values, so the
    entries it leaves in place are a random subset of the sample's values, of
    about its standard deviation. A clean sample that the subspace explains
    poorly can instead be fitted on the bulk of its values, its tail taken for
    moved entries: on the zero-inflated or heavily skewed attributes of
    statsmodels' star98 (PCTYRRND, 197 of 303 records at 0; PERASIAN), Stage
    II fits the mass of near-equal values, both halves of the entries agree on
    it, and the tail passes the misplaced-values test. A restoration is kept
    only when the standard deviation of the sample over the entries it fits
    (at most ``3 s`` from the fit) is at least ``_SPREAD = 0.55`` times that
    over all its entries (30% of the variance). On star98 at rank 3 (seeds
    300-303 and 400-407) the clean attributes that passed the other checks
    had 0.43-0.50; the restorations that helped, on the real tables of the
    benchmark and the paper's records, 0.53 and more (0.53-0.56: one small
    attribute of the benign breast-cancer records, above 0.6 otherwise).
    Complete samples only, as the misplaced-values test.
    """
    fitted = ~out
    count = np.maximum(fitted.sum(axis=1), 1)
    mean = np.sum(np.where(fitted, Y, 0.0), axis=1) / count
    var = np.sum(np.where(fitted, Y - mean[:, None], 0.0) ** 2, axis=1) / count
    spans = var >= _SPREAD**2 * np.var(Y, axis=1)
    if M is not None:  # complete samples only, as the misplaced-values test
        spans |= ~M.all(axis=1)
    return spans


def _halves_agree(U, Y, M, C, solve):
    """Whether each restoration ``C @ U.T`` is reproduced from either half of the entries.

    A held-out check of the restoration: Stage II (``solve``) runs again on
    each half of the observed entries (a fixed random split of the features,
    the same for every sample), and the two restorations must differ by at
    most ``_HALVES = 0.5`` times the distance the restoration moves the
    sample. A partly permuted sample whose true values the subspace explains
    keeps a majority of unmoved entries in each half, and both halves find
    them; a clean sample the subspace explains poorly has no such majority,
    and each half fits a different subset of its entries. On statsmodels'
    star98 (rank 3 and 7, seeds 100-101; with an LSRF tolerance that left out
    the samples the subspace passes through) the halves of the clean
    attributes that passed the other checks differed by 0.13-2.1 times the
    move (median 0.72), those of the shuffled attributes the restoration
    improved by at most 0.46.

    The same two restorations give a held-out size test: each entry is
    predicted by the restoration of the half it is not in, and the move must
    exceed ``_HELPS = 1.5`` times the error estimated from those predictions
    (:func:`_noise_scale`, as :func:`_restoration_helps` does from the
    residuals). Stage II chooses the entries it
    fits, so its residuals there understate its error when the subspace
    explains the sample poorly: on statsmodels' elnino at rank 3 (seed 604)
    the shuffled YEAR, a linear trend 0.92 from the subspace of the months,
    moved 1.64 times the in-sample estimate and 1.16 times the held-out
    one; its restoration was 1.31 times farther from the true values than
    the shuffled sample, and the table 1.31 times worse than doing nothing.
    A sample with fewer than ``n_components + 1`` observed entries in a half
    is not checked.
    """
    if not len(Y):
        return np.zeros(0, dtype=bool)
    n_features, r = U.shape
    first = np.zeros(n_features, dtype=bool)
    first[np.random.default_rng(0).permutation(n_features)[: n_features // 2]] = True
    observed = np.ones(Y.shape, dtype=bool) if M is None else M
    halves = [observed & first, observed & ~first]
    C1, C2 = (solve(U, np.where(h, Y, 0.0), h) for h in halves)
    moved = np.linalg.norm(np.where(observed, Y - C @ U.T, 0.0), axis=1)
    apart = np.linalg.norm((C1 - C2) @ U.T, axis=1)
    enough = np.minimum(*(h.sum(axis=1) for h in halves)) >= r + 1
    # every entry predicted by the restoration of the half it is not in
    held = np.where(observed, np.abs(Y - np.where(first, C2 @ U.T, C1 @ U.T)), np.nan)
    size = moved**2 > _HELPS**2 * observed.sum(axis=1) * _noise_scale(held) ** 2
    return ((apart <= _HALVES * moved) & size) | ~enough


def _fits_a_permutation(U, Y, M, C, lsrf_tol, clean_distance):
    """Whether the restoration of each incomplete sample fits one of Stage II's models.

    The checks of :func:`_restoration_helps` that tell moved entries from
    clean ones (misplaced values, spread) need complete samples, and the
    held-out check (:func:`_halves_agree`) runs only on data not close to
    rank ``r``, so a restoration of an incomplete sample is otherwise kept on
    its size alone. It must fit one of the two permutation models Stage II
    solves, on the sample's observed entries:

    * sparse (most entries in place): any restoration passes through ``r``
      of the ``q`` observed entries, so it is the others that tell; at least
      ``_FEW_IN_PLACE = 0.2`` of them must be fitted within ``lsrf_tol``
      (a correct restoration of a sparse permutation fits its unmoved
      entries, at least half of them at ``alpha <= 0.5``);
    * dense among the observed entries (the mask drawn before the
      permutation): the observed values, sorted, match the restored values
      at the observed positions within 3 times the clean samples' distance
      (:func:`_dense_helps`, on data close to rank ``r``), as a correct
      restoration of any permutation of the observed entries does.

    A wrong restoration fits its ``r`` entries and few more by chance. On
    ``benchmarks/upca_missing.py`` at m = 50, r = 5, half the entries
    missing and 30 clean samples (seed 1722, the subspace 3.2 degrees off),
    98 of 272 kept restorations fit neither model (median 5% of the entries
    beyond ``r``, sorted values at 66 times the clean samples' distance),
    among them all 29 that moved a shuffled sample farther from its true
    values; none of the 173 within 0.05 of the truth was dropped. Wrong
    restorations that happen to land closer than the shuffled sample are
    dropped too: the rule keeps what a permutation model verifies, not what
    helps on average. Complete samples are not tested (True).

    Returns
    -------
    fits : ndarray of shape (n_samples,) of bool
        The restoration fits a model (True for complete samples).
    share : ndarray of shape (n_samples,)
        Share of the ``q - r`` observed entries beyond ``r`` fitted within the
        tolerance (``r`` fitted ones are subtracted, so it can be negative).
    ratio : ndarray of shape (n_samples,)
        Sorted error over the sample's norm, in units of the clean samples'
        distance.
    """
    tol = lsrf_tol if lsrf_tol is not None else 3.0 * max(clean_distance or 0.0, _EXACT_FIT)
    r, n_obs = U.shape[1], M.sum(axis=1)
    fitted = np.sum((np.abs(Y - C @ U.T) <= tol) & M, axis=1)
    share = (fitted - r) / (n_obs - r)  # n_obs > r (observed)
    norms = np.linalg.norm(np.where(M, Y, 0.0), axis=1)
    ratio = _sorted_error(U, Y, M, C) / np.maximum(norms, np.finfo(np.float64).tiny)
    ratio = ratio / max(clean_distance or 0.0, _EXACT_FIT)
    fits = (share >= _FEW_IN_PLACE) | _dense_helps(U, Y, M, C, clean_distance)
    return fits | M.all(axis=1), share, ratio


def _drop_unverified(U, Y, M, C, helps, lsrf_tol, clean_distance):
    """Drop the kept restorations of incomplete samples that fit no permutation model.

    ``helps``: the restorations kept so far. Those of incomplete samples that
    :func:`_fits_a_permutation` rejects are dropped: the samples are returned
    as given, their missing entries filled from the subspace (their
    least-squares fit on the observed entries), as an unflagged sample's. A
    few such restorations are expected (a sample whose observed entries
    leave its coefficients ill-determined, a wrong basin of Stage II); a
    FlaggingWarning counts them when they are more than ``_DROPPED_WARN =
    0.1`` of the kept restorations of incomplete samples, the mark of data
    that no permutation model describes or of a subspace too far from the
    clean samples. Returns the restorations kept and the number dropped.
    """
    rows = np.flatnonzero(helps)
    fits, share, ratio = _fits_a_permutation(
        U, Y[rows], M[rows], C[rows], lsrf_tol, clean_distance
    )
    out = helps.copy()
    out[rows[~fits]] = False
    n_dropped, incomplete = int(np.sum(~fits)), int(np.sum(~M[rows].all(axis=1)))
    if not n_dropped > _DROPPED_WARN * incomplete:
        return out, n_dropped
    if clean_distance is not None and clean_distance <= _SHAPE_FROM:
        dense = (
            f"their sorted observed values (median {np.median(ratio[~fits]):.1f} times the "
            "clean samples' distance; a permutation of the observed entries is kept at 3 "
            "at most)"
        )
    else:
        dense = (
            "their sorted observed values (not tested: the clean samples are farther "
            f"than {_SHAPE_FROM} from the subspace)"
        )
    message = (
        f"UnlabeledPCA: {n_dropped} of the {incomplete} restorations of samples with "
        "missing entries are dropped, and those samples returned as given (missing "
        "entries filled from the subspace). Their restorations fit neither enough of "
        f"their observed entries (median {np.median(share[~fits]):.0%} of those beyond "
        "the n_components any restoration passes through within lsrf_tol_; a sparse "
        f"permutation is kept from {_FEW_IN_PLACE:.0%}) nor {dense}: no permutation "
        "model explains them, and they may be farther from the true samples than the "
        "samples as given. Entries that went missing after a dense permutation (a "
        "subset of a sample's values at unrelated positions), or a subspace too far "
        "from the clean samples, give this."
    )
    warnings.warn(message, FlaggingWarning, stacklevel=_user_stacklevel())
    return out, n_dropped


def _warn_left_unchanged(k, loo=False):
    few = (
        "; with few samples, also be kept on the subspace fitted without the sample "
        "and leave it unexplained beside the other restorations" if loo else ""
    )
    warnings.warn(
        f"UnlabeledPCA: {k} sample(s) are flagged as permuted, but none of their "
        "restorations passes the checks of restore_samples='checked' (a restoration "
        "must move the sample clearly farther than its own error on the entries it "
        "fits, put back values that look misplaced, fit entries that span the sample "
        "and, on data not close to rank n_components, be reproduced from either "
        f"half of the entries{few}): they are "
        "returned unchanged. The data may be far from rank n_components; "
        "restore_samples='all' restores every sample regardless.",
        FlaggingWarning,
        stacklevel=5,
    )


def stage2_basis(components, mean):
    """Orthonormal rows spanning the affine subspace ``mean + span(components)``.

    A permutation acts on a sample's raw entries, so Stage II fits a sample
    ``x = mean + c @ components`` as a point of this span: ``components`` with
    the part of ``mean`` orthogonal to them (``components`` alone when that part
    is 0, e.g. ``mean = 0``: a linear subspace).
    """
    components = np.asarray(components)
    mean = np.asarray(mean, dtype=np.float64)
    U = components.astype(np.float64)
    rest = mean - (mean @ U.T) @ U
    size = np.linalg.norm(rest)
    if not size > 1e-12 * max(np.linalg.norm(mean), np.finfo(np.float64).tiny):
        return components
    return np.vstack([U, rest / size]).astype(components.dtype)


def _affine_split(C, U, flagged, r):
    """Point ``mean`` and ``r`` directions of the affine subspace inside ``span(U)``.

    ``C``: the samples' least-squares coefficients on the ``r + 1`` orthonormal
    columns of ``U``. The mean of the unflagged samples' projections (of all
    samples when every one is flagged) is a point of the affine subspace; its
    directions are the top ``r`` principal axes of those projections about it
    (completed by the remaining axes when fewer than ``r + 1`` samples are left).
    """
    clean = C[~flagged] if np.any(~flagged) else C
    centre = clean.mean(axis=0)
    axes = np.linalg.svd(clean - centre, full_matrices=True)[2][:r]
    return centre @ U.T, axes @ U.T


def _check_unscaled(X):
    """Refuse X whose every feature has mean 0, warn when every one has variance 1.

    Either is the mark of a per-feature scaler in front (a StandardScaler):
    its means and scales are computed over values that the permutations moved
    between features, which does not commute with permuting a sample's
    entries. Exact zero means come only from centring after the shuffle (a
    table centred before it loses them), and no fit can undo that centring,
    whose means it never sees: refused. Unit variances alone are warned about.
    """
    if X.shape[0] < 3:
        return None
    finite = np.abs(X[np.isfinite(X)])
    scale = finite.max() if finite.size and finite.max() > 0 else 1.0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        mean = np.nanmean(X / scale, axis=0)  # in units of the largest entry, so
        std = np.nanstd(X / scale, axis=0)  # that neither underflows nor overflows
    return _scaler_verdict(mean, std, scale)


def _scaler_verdict(mean, std, scale):
    """Refuse or warn from the features' ``mean`` and ``std`` in units of ``scale``.

    The decision of :func:`_check_unscaled`, shared with the Dask fit, which
    reads the two statistics by reductions. Returns the warning's text or None.
    """
    known = np.isfinite(mean)
    if not known.any():
        return None
    mean, std = mean[known], std[known]
    centred = np.all(np.abs(mean) <= 1e-8 * std) and np.any(std > 0)
    unit_std = np.abs(std * scale - 1) <= 1e-8
    unit = np.all(unit_std | (std == 0)) and np.any(unit_std)
    if not (centred or unit):
        return None
    what = "mean 0" if centred else "variance 1"
    message = (
        f"UnlabeledPCA: every feature of X has {what} (to rounding): X looks centred or "
        "scaled per feature, e.g. by a StandardScaler in front. A feature's mean and "
        "scale are computed over values that the permutations moved between features, "
        "and subtracting or dividing by them per feature does not commute with "
        "permuting a sample's entries: a permuted sample of the scaled data is not a "
        "permutation of the scaled clean sample, so flags and restorations can be far "
        "off (on the paper's synthetic setting, 40-70 times the error without "
        "StandardScaler() and 30-40 times with StandardScaler(with_mean=False)). Pass "
        "the data unscaled (a common factor for all features is harmless), and use "
        "fit_mean=True if they lie on an affine rather than a linear subspace."
    )
    if centred:
        raise ValueError(
            message + " Centred data are refused: the centring cannot be undone here."
        )
    warnings.warn(message, FlaggingWarning, stacklevel=_user_stacklevel())
    return message


def restored(X, C, replaced, M, components):
    """``X`` with the ``replaced`` entries restored and NaN filled.

    ``replaced``: boolean, the shape of ``X`` (:func:`coefficients`). A sample
    whose observed entries are all replaced takes its restoration ``C @
    components``. A sample with only some of them replaced (the entries its
    restoration finds moved, on data not close to rank ``r``) keeps its own
    values: those of the replaced entries are reassigned among them in the
    order of the restoration (:func:`_reordered`). Among entries that hold
    every moved one, the true values are a permutation of the given ones, and
    the restoration only has to order them; a restoration off by the
    subspace's misfit on one entry no longer puts a value there that the
    sample never had. Missing entries are filled from the restoration.
    """
    components = components.astype(np.float64)
    out = np.array(X, dtype=np.float64)
    rows = np.flatnonzero(replaced.any(axis=1))
    fit = C[rows] @ components
    part = np.any(~replaced[rows] & ~np.isnan(out[rows]), axis=1)
    fit[part] = _reordered(out[rows[part]], replaced[rows[part]], fit[part])
    out[rows] = np.where(replaced[rows], fit, out[rows])
    if M is not None:
        gaps = np.flatnonzero(np.isnan(out).any(axis=1))
        out[gaps] = np.where(np.isnan(out[gaps]), C[gaps] @ components, out[gaps])
    return out


@validate_params(
    {"X": ["array-like"], "restore": ["boolean"], **PARAMETER_CONSTRAINTS},
    prefer_skip_nested_validation=True,
)
def unlabeled_pca(
    X,
    n_components,
    *,
    stage1="dpcp",
    stage2="auto",
    p=0.5,
    restore_samples="checked",
    fit_mean=False,
    outlier_threshold=3.0,
    lsrf_tol="auto",
    max_iter=1000,
    tol=1e-9,
    n_jobs=None,
    random_state=None,
    verbose=0,
    restore=True,
):
    """Subspace of samples whose entries may be permuted, and the restored samples.

    Stage I estimates the ``n_components``-dimensional linear subspace robustly
    (permuted samples act as outliers) and flags the samples far from it;
    Stage II undoes the permutation of each flagged sample by unlabeled sensing.
    NaN entries are missing (unlabeled matrix completion).
    :class:`~skpapers.decomposition.UnlabeledPCA` is the estimator around this
    function; its docstring describes every parameter in full.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Samples (rows) whose entries may be permuted; NaN marks a missing entry.
    n_components : int
        Dimension of the subspace, ``1 <= n_components < n_features``.
    stage1 : {"dpcp", "cop", "pca"}, default="dpcp"
        Stage-I subspace estimator.
    stage2 : {"auto", "lsrf", "l1", "pl", "hard_em"}, default="auto"
        Stage-II unlabeled-sensing solver (``"auto"``: LSRF, and hard EM for
        the samples LSRF leaves mostly unfitted).
    p : float in (0, 2], default=0.5
        Exponent of the DPCP objective ``sum_j dist(x_j, S)**p``.
    restore_samples : {"checked", "flagged", "all"}, default="checked"
        Which samples go through Stage II, and which restorations are kept.
    fit_mean : bool, default=False
        Fit an affine subspace ``mean + span(components)``, through its linear
        span of dimension ``n_components + 1`` (the mean is not permuted).
    outlier_threshold : float, default=3.0
        A sample is flagged when its distance exceeds ``outlier_threshold``
        times the typical distance of the clean samples (or as many robust
        standard deviations above it on a log scale).
    lsrf_tol : float, "auto" or None, default="auto"
        Early stop of ``"lsrf"`` (units of ``X``); ``"auto"`` is the noise level of
        the unflagged samples, None the paper's algorithm.
    max_iter : int, default=1000
        Maximum number of Stage-I iterations.
    tol : float, default=1e-9
        Relative decrease of the DPCP objective at which Stage I stops.
    n_jobs : int, default=None
        Number of joblib workers for Stage II.
    random_state : int, RandomState instance or None, default=None
        Seeds the search points of ``stage2="hard_em"``.
    verbose : int, default=0
        0 silent; 1 one line per stage (Stage I, flagging, Stage II) on the
        ``skpapers.unlabeled_pca`` logger; 2 also Stage-I iterations (objective,
        why it stopped) and Stage-II chunks.
    restore : bool, default=True
        Run Stage II on ``X``; False returns ``X_restored=None``.

    Returns
    -------
    components : ndarray of shape (n_components, n_features)
        Orthonormal basis (rows) of the subspace (its directions with
        ``fit_mean=True``; ``result.mean`` is its point).
    X_restored : ndarray of shape (n_samples, n_features) or None
        ``X`` with the flagged samples restored and missing entries filled
        (with ``restore_samples="checked"`` on data not close to rank
        ``n_components``, only the entries a restoration finds moved).
    result : UnlabeledPCAResult
        Distances, threshold, flagged samples and the rule that flagged them,
        iterations, LSRF tolerance.

    Warns
    -----
    FlaggingWarning
        With ``restore_samples`` other than ``"all"`` (the settings that run the
        leave-one-out rule), when the flagging threshold reaches
        the distance of a random direction (the samples are far from the
        fitted subspace) and the leave-one-out rule (``result.flagging_rule ==
        "unexplained"``: complete samples, fewer than the features and at most
        100) does not apply: partly permuted samples are then not flagged.
        With ``restore_samples="checked"``, when more than 10% of the
        restorations of samples with missing entries fit no permutation model
        and are dropped (those samples are returned as given); and when a
        feature is observed in fewer than ``n_components`` of the unflagged
        samples (the samples that fit the subspace do not determine it there).

    See Also
    --------
    skpapers.decomposition.UnlabeledPCA : The estimator (restores new samples,
        pipelines).

    Examples
    --------
    >>> from skpapers.datasets import make_permuted_subspace
    >>> from skpapers.decomposition import unlabeled_pca
    >>> from skpapers.metrics import relative_restoration_error
    >>> X, X_true, components_true, _ = make_permuted_subspace(
    ...     n_samples=200, n_features=30, n_components=2, outlier_ratio=0.5,
    ...     shuffled_ratio=0.1, noise=0.0, random_state=0)
    >>> components, X_restored, result = unlabeled_pca(X, 2)
    >>> bool(relative_restoration_error(X_true, X_restored) < 1e-8)
    True
    >>> components.shape
    (2, 30)
    """
    X = check_array(X, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")
    n_samples, n_features = X.shape
    r = n_components + int(fit_mean)  # the affine subspace's linear span
    plus = " + 1 (fit_mean=True)" if fit_mean else ""
    if r >= n_features:
        raise ValueError(
            f"n_components{plus} = {r} must be smaller than n_features = {n_features}."
        )
    if n_samples <= r:
        raise ValueError(
            "UnlabeledPCA needs more samples than components: "
            f"n_samples = {n_samples}, n_components{plus} = {r}."
        )
    _check_unscaled(X)
    progress = Progress("unlabeled_pca", verbose)
    progress.stage(
        f"fit started: {n_samples} samples x {n_features} features, rank {r}, "
        f"Stage I {stage1!r}"
    )
    scale = _power_of_two_scale(X)
    Y, M = observed(X / scale, r, fitting=True)
    if lsrf_tol is not None and lsrf_tol != "auto":
        lsrf_tol = lsrf_tol / scale
    with _one_blas_thread(min(n_samples, n_features)):
        U, n_iter = _stage1(Y, M, r, stage1, p, max_iter, tol, progress=progress)

        C = _least_squares(U, Y, M)
        d = distances(Y, M, C, U)
        m_obs = float(np.mean(M.sum(axis=1))) if M is not None else float(n_features)
        threshold, too_far = _flag_threshold(d, r, m_obs, outlier_threshold)
        flagged = d > threshold
        unexplained = None
        # the leave-one-out rule, where it applies: always when the distance cannot
        # flag, else when the screen finds residuals explained by other samples
        # (with restore_samples="all" it is not computed: the distance rule's flags
        # only choose the samples that join the subspace refit)
        if restore_samples != "all":
            unexplained = _unexplained(
                Y, M, r, stage1, p, max_iter, tol, distances=None if too_far else d
            )
    progress.stage(f"Stage I ({stage1}): {int(n_iter)} iteration(s)")
    rule = "distance" if unexplained is None else "unexplained"
    if rule == "unexplained":
        flagged = unexplained > _UNEXPLAINED_FLAG
    warned = None
    if restore_samples == "checked" and n_samples - flagged.sum() < r + 2:
        clean = d[~flagged]
        warned = _warn_no_clean_part(
            n_samples, int(flagged.sum()), float(np.median(d)),
            float(np.median(clean)) if clean.size else None, threshold, rule, r,
        )  # fmt: skip
        flagged = np.zeros(n_samples, dtype=bool)
        rule = "none"  # threshold kept (finite, reported) but not applied
    if lsrf_tol is not None and M is None:
        with _one_blas_thread(min(n_samples, n_features)):
            U, joined = _refit_partly_shuffled(
                Y, U, flagged, _resolve_lsrf_tol(lsrf_tol, Y, M, C, U, flagged), max_iter
            )
            C, d, flagged = _refitted(U, joined, Y, M, C, d, flagged, threshold, rule)
        progress.stage(f"subspace refitted with {joined} partly shuffled sample(s)")
    if M is not None and flagged.any():
        solve = functools.partial(
            _coefficients, threshold=threshold, stage2=stage2, restore_samples="flagged",
            lsrf_tol=None if lsrf_tol is None else _resolve_lsrf_tol(lsrf_tol, Y, M, C, U, flagged),
            n_jobs=n_jobs, random_state=random_state, progress=Progress("unlabeled_pca", 0),
            clean_distance=_clean_distance(d, flagged), loo=None,
        )  # fmt: skip
        with _one_blas_thread(min(n_samples, n_features)):
            U, joined = _refit_restored(
                X / scale, Y, M, U, flagged, solve, _clean_distance(d, flagged), max_iter, tol
            )
            C, d, flagged = _refitted(U, joined, Y, M, C, d, flagged, threshold, rule)
        progress.stage(f"subspace refitted with {joined} restored sample(s)")
    if M is not None and restore_samples != "all":
        _warn_undetermined(M, flagged, r)
    if restore_samples == "checked" and rule == "distance" and M is None:
        threshold, warned = _held_out_threshold(Y, d, flagged, threshold, r)
        flagged = d > threshold
    if rule == "distance":
        progress.stage(
            f"flagging: {int(flagged.sum())} of {n_samples} samples above {threshold:.4g}"
        )
        if too_far and restore_samples != "all":
            warned = _warn_too_far(
                np.median(d), int(flagged.sum()), d.size, threshold, r, n_features
            )
    elif rule == "unexplained":
        why = (
            "reached the distance of a random direction" if too_far
            else "leaves residuals that other samples explain"
        )
        progress.stage(
            f"flagging: the distance threshold ({threshold:.4g}) {why}; "
            f"{int(flagged.sum())} of {n_samples} samples flagged by the unexplained "
            f"rule (above {_UNEXPLAINED_FLAG:.4g})"
        )
    basis = U.T.astype(X.dtype)
    mean, components = np.zeros(n_features), basis
    if fit_mean:
        mean, components = _affine_split(C, U, flagged, n_components)
        mean, components = mean * scale, components.astype(X.dtype)
        basis = stage2_basis(components, mean)  # as the estimator restores
    result = UnlabeledPCAResult(
        distances=d,
        threshold=threshold,
        permuted_mask=flagged,
        n_iter=int(n_iter),
        lsrf_tol=None if lsrf_tol is None else _resolve_lsrf_tol(lsrf_tol, Y, M, C, U, flagged)
        * scale,
        flagging_rule=rule,
        unexplained=unexplained,
        flagging_warning=warned,
        clean_distance=_clean_distance(d, flagged),
        mean=mean,
    )
    X_restored = None
    if restore:
        C, replaced, M = coefficients(
            X, basis, threshold, stage2=stage2, restore_samples=restore_samples,
            lsrf_tol=result.lsrf_tol, n_jobs=n_jobs, random_state=random_state,
            progress=progress, flags=flagged if rule in ("unexplained", "none") else None,
            clean_distance=result.clean_distance,
            loo=loo_settings(stage1, p, max_iter, tol) if rule == "unexplained" else None,
        )
        X_restored = restored(X, C, replaced, M, basis).astype(X.dtype, copy=False)
    return components, X_restored, result
