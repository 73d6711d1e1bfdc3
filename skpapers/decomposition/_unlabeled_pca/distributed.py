# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""``UnlabeledPCA.fit`` on a Dask array: one pass over the blocks of rows per round.

The in-memory fit (:func:`~skpapers.decomposition._unlabeled_pca.solver.unlabeled_pca`)
step by step, with every statistic over the samples computed as per-block
sufficient statistics and a tree reduction on the workers:

- Stage I (DPCP-IRLS, or PCA): each round is one pass that returns the
  objective and the reweighted ``m x m`` scatter matrix; the small
  eigenproblem runs on the client. With many samples the warm start on a fixed
  subsample (``max(2000, 100 n_features)`` rows) runs in memory, as in the
  in-memory fit.
- Flagging: the distances stay on the workers; the weighted medians of the
  threshold are exact selections by weighted histograms
  (:func:`~skpapers.utils._dask.weighted_select`).
- ``lsrf_tol="auto"``: the same fixed random subset of the unflagged samples
  (at most 2**17 entries) is brought to the client.
- The refit from partly shuffled samples: the joining samples stay on the
  workers; each EM round adds their scatter matrix to that of the unflagged
  samples (computed once).

The result equals the in-memory fit up to the rounding of the sums (subspace
angle about 1e-13 degrees). What this path does not implement is refused by
:func:`check_supported`, by comparing the estimator's parameters with the
supported ones (a parameter it does not know is refused too).
"""

import functools
import warnings

import numpy as np

from skpapers.decomposition._unlabeled_pca.solver import (
    _MAD_ENTRIES,
    _describe,
    _held_out_message,
    _lsrf_tol_from,
    _partly_shuffled,
    _power_of_two_scale,
    _scaler_verdict,
    _warn_no_clean_part,
    _warn_too_far,
    distances,
)
from skpapers.decomposition._unlabeled_pca.subspace import (
    _DELTA,
    _EXACT_FIT,
    _MOVE_TOL,
    _UNEXPLAINED_MAX,
    _complement_distances,
    _held_out_distances,
    _irls_complete,
    _one_blas_thread,
    _sin_largest_angle,
    _subsample_size,
    _threshold_from,
    _top_eigenvectors,
    _unit_rows,
    _weighted_gram,
)
from skpapers.exceptions import FlaggingWarning
from skpapers.utils._dask import (
    block_sum,
    compute,
    import_dask,
    is_dask_dataframe,
    row_chunks,
    tree_sum,
    weighted_select,
)
from skpapers.utils._progress import Progress

# parameters of the fit and the values this path implements (None: any value)
SUPPORTED = {
    "n_components": None,
    "stage1": {"dpcp", "pca"},
    "p": None,
    "restore_samples": None,
    "fit_mean": {False},
    "outlier_threshold": None,
    "lsrf_tol": None,
    "max_iter": None,
    "tol": None,
    "verbose": None,
}
NOT_USED_BY_FIT = {"stage2", "n_jobs", "random_state"}  # restore's parameters


def check_supported(params):
    """Raise a ValueError naming the first parameter value the distributed fit lacks."""
    for name, value in params.items():
        if name in NOT_USED_BY_FIT:
            continue
        if name not in SUPPORTED:
            raise ValueError(
                f"UnlabeledPCA.fit on a Dask array does not implement the parameter "
                f"{name!r} (= {value!r}); fit in memory, e.g. on a sample "
                "(skpapers.utils.sample_rows), and restore the Dask array with that fit."
            )
        allowed = SUPPORTED[name]
        if allowed is not None and value not in allowed:
            raise ValueError(
                f"UnlabeledPCA.fit on a Dask array supports {name} in {sorted(allowed)}, "
                f"not {value!r}; fit in memory, e.g. on a sample (skpapers.utils.sample_rows)."
            )


def _one_thread(func):
    """Run a block function with one BLAS thread when its rows are narrow (as in memory)."""

    @functools.wraps(func)
    def wrapped(block, *args, **kwargs):
        width = np.shape(block[0] if isinstance(block, tuple) else block)[-1]
        with _one_blas_thread(width):
            return func(block, *args, **kwargs)

    return wrapped


def _scaled(Xb, scale):
    return np.asarray(Xb, dtype=np.float64) / scale


@_one_thread
def _gram_block(Xb, scale):
    """Scatter matrix of the unit rows of one block."""
    Xu = _unit_rows(_scaled(Xb, scale))
    return _weighted_gram(Xu, np.ones(len(Xu)))


@_one_thread
def _irls_block(Xb, U, p, scale):
    """One block's share of a DPCP-IRLS round: objective and reweighted scatter matrix."""
    Xu = _unit_rows(_scaled(Xb, scale))
    d = _complement_distances(Xu, np.einsum("ij,ij->i", Xu, Xu), U)
    w = 1.0 / np.maximum(d ** (2.0 - p), _DELTA)
    return np.sum(d**p), _weighted_gram(Xu, w)


def _irls(X, r, p, max_iter, tol, scale, U=None, move_tol=None, progress=None):
    """DPCP-IRLS over the blocks of ``X``: the loop of ``_irls_complete``, one pass a round."""
    n_iter, J_old = 0, np.inf
    if U is None:  # weights 1: the first round is PCA of the unit rows
        U = _top_eigenvectors(
            compute(block_sum(functools.partial(_gram_block, scale=scale), X))[0], r
        )
        n_iter = 1
    why = "max_iter reached"
    while n_iter < max_iter:
        step = functools.partial(_irls_block, U=U, p=p, scale=scale)
        J, G = compute(block_sum(step, X))[0]
        delta_J = 1.0 - J / (J_old + 1e-9)
        J_old = J
        progress.iteration(f"Stage I iteration {n_iter} (all samples): objective {J:.6g}")
        if delta_J <= tol:
            why = "converged"
            break
        U_new = _top_eigenvectors(G, r)
        moved = _sin_largest_angle(U, U_new)
        U, n_iter = U_new, n_iter + 1
        if move_tol is not None and moved <= move_tol:
            why = f"subspace moved by {moved:.2g} <= {move_tol:.2g}"
            break
    progress.iteration(f"Stage I stopped after {n_iter} iteration(s): {why}", force=True)
    return U, n_iter


def _subsample_rows(n, m, stage1, max_iter):
    """Rows of the in-memory fit's warm start on a subsample (None: no warm start)."""
    size = _subsample_size(n, m) if stage1 == "dpcp" and max_iter >= 3 else None
    if size is None:
        return None
    return np.sort(np.random.default_rng(0).choice(n, size, replace=False))


def _stage1(X, r, stage1, p, max_iter, tol, scale, progress, sample=None):
    """Stage-I basis ``(n_features, r)`` and iterations, as the in-memory ``_stage1``.

    ``sample``: the rows of the warm start (:func:`_subsample_rows`), in memory.
    """
    if stage1 == "pca":
        return _irls(X, r, 2.0, 1, tol, scale, progress=progress)
    if sample is None:
        return _irls(X, r, p, max_iter, tol, scale, progress=progress)
    size = len(sample)
    sample = _unit_rows(_scaled(sample, scale))
    U, n_sub = _irls_complete(
        sample, r, p, max_iter - 1, tol, progress=progress, what=f"Stage I ({size} samples)"
    )
    U, n_all = _irls(
        X, r, p, max_iter - n_sub, tol, scale, U=U, move_tol=_MOVE_TOL, progress=progress
    )
    return U, n_sub + n_all


@_one_thread
def _distances_block(Xb, U, scale):
    Y = _scaled(Xb, scale)
    return distances(Y, None, Y @ U, U)


def _distances(X, U, scale):
    d = X.map_blocks(
        _distances_block, U=U, scale=scale, drop_axis=1, dtype=np.float64,
        meta=np.empty((0,), np.float64),
    )  # fmt: skip
    return d.persist()  # n floats on the workers, read by every flagging pass


def _threshold(d, r, m, k):
    """``_flag_threshold`` of the distances ``d`` (a Dask array): exact weighted medians."""
    da = import_dask()
    d_f = da.maximum(d, 1e-12)
    small = np.empty(0)
    if d.shape[0] >= 3 * r + 1:  # the r smallest are left out
        small = np.sort(compute(da.topk(d_f, -r))[0])
    log_d, w = da.log(d_f), 1.0 / d_f
    half = 0.5 * (compute(w.sum())[0] - np.sum(1.0 / small))
    loc = weighted_select(log_d, w, half, removed=(np.log(small), 1.0 / small))
    spread = 1.4826 * weighted_select(
        abs(log_d - loc), w, half, removed=(np.abs(np.log(small) - loc), 1.0 / small)
    )
    return _threshold_from(loc, spread, r, m, k)


def _clean_distance(d, flagged):
    """``solver._clean_distance`` of the distances ``d`` (a Dask array), or None."""
    clean = (~flagged) & (d > _EXACT_FIT)
    unflagged, count, total = compute((~flagged).sum(), clean.sum(), (d**2 * clean).sum())
    if not unflagged:
        return None
    return float(np.sqrt(total / count)) if count else 0.0


@_one_thread
def _rows_block(Xb, flagged, picks, U, scale, unflagged):
    """Residuals of the picked samples (positions among the block's unflagged ones)."""
    Y = _scaled(Xb, scale)
    rows = np.flatnonzero(~flagged) if unflagged else np.arange(len(Y))
    Y = Y[rows[picks]]
    return Y - (Y @ U) @ U.T


def _auto_lsrf_tol(X, flagged, U, scale, top):
    """``lsrf_tol="auto"`` from the same samples as the in-memory fit picks."""
    delayed = import_dask("dask").delayed
    blocks = list(zip(X.to_delayed().ravel(), flagged.to_delayed().ravel(), strict=True))
    counts = np.array(compute(*[delayed(np.count_nonzero)(~f) for _, f in blocks]))
    unflagged = counts.sum() > 0
    if not unflagged:
        counts = np.array(X.chunks[0])
    total, cap = int(counts.sum()), max(1, _MAD_ENTRIES // X.shape[1])
    picks = np.arange(total)
    if total > cap:
        picks = np.sort(np.random.default_rng(0).choice(total, cap, replace=False))
    starts = np.concatenate([[0], np.cumsum(counts)])
    parts = []
    for b, (Xb, fb) in enumerate(blocks):
        local = picks[(picks >= starts[b]) & (picks < starts[b + 1])] - starts[b]
        if local.size:
            parts.append(delayed(_rows_block)(Xb, fb, local, U, scale, unflagged))
    return _lsrf_tol_from(np.concatenate(compute(*parts)), top)


@_one_thread
def _join_block(Xb, flagged, U, tol, scale):
    return _partly_shuffled(U, _scaled(Xb, scale)[flagged], tol)


@_one_thread
def _unflagged_gram_block(Xb, flagged, scale):
    Xu = _unit_rows(_scaled(Xb, scale)[~flagged])
    return _weighted_gram(Xu, np.ones(len(Xu)))


@_one_thread
def _joined_gram(part):
    Xu = _unit_rows(part[0])
    return _weighted_gram(Xu, np.ones(len(Xu)))


@_one_thread
def _refill(part, U):
    joined, beyond = part
    joined = joined.copy()
    joined[beyond] = ((joined @ U) @ U.T)[beyond]
    return joined, beyond


def _refit(X, U, flagged, tol, max_iter, scale):
    """``_refit_partly_shuffled`` with the joining samples kept on the workers."""
    dask = import_dask("dask")
    delayed = dask.delayed
    blocks = list(zip(X.to_delayed().ravel(), flagged.to_delayed().ravel(), strict=True))
    n_unflagged = int(compute((~flagged).sum())[0])
    parts = dask.persist(*[delayed(_join_block)(Xb, fb, U, tol, scale) for Xb, fb in blocks])
    n_joined = int(sum(compute(*[delayed(len)(part[1]) for part in parts])))
    if n_joined == 0 or n_unflagged + n_joined <= U.shape[1]:
        return U, 0
    gram = functools.partial(_unflagged_gram_block, scale=scale)
    G0 = compute(block_sum(gram, X, flagged))[0]
    for _ in range(max_iter):
        G = G0 + compute(tree_sum([delayed(_joined_gram)(part) for part in parts]))[0]
        U_new = _top_eigenvectors(G, U.shape[1])
        moved = _sin_largest_angle(U, U_new)
        U = U_new
        if moved <= _MOVE_TOL:
            break
        parts = dask.persist(*[delayed(_refill)(part, U) for part in parts])
    return U, n_joined


def _held_out_threshold(X, d, flagged, n_flagged, threshold, r, scale):
    """Check the flags by leave-one-out fits, as the in-memory fit does.

    With at most ``_UNEXPLAINED_MAX`` unflagged samples, those samples are
    gathered (their leave-one-out fits are small) and the threshold is raised
    to the farthest of their distances to the subspace fitted without them;
    the samples this unflags are counted by reductions. Returns the threshold,
    the flags and the FlaggingWarning's text (None if nothing is unflagged).
    """
    da = import_dask()
    clean_rows, clean = compute(X[~flagged], d[~flagged])
    held = _held_out_distances(np.asarray(clean_rows, dtype=np.float64) / scale, r)
    threshold = max(threshold, float(held.max()))
    dropped = flagged & (d <= held.max())
    n = d.shape[0]
    index = da.where(dropped, da.arange(n, chunks=d.chunks), n)
    count, largest, first = compute(
        dropped.sum(), da.where(dropped, d, -np.inf).max(), da.topk(index, -10)
    )
    flagged = (d > threshold).persist()
    if not count:
        return threshold, flagged, None
    first = np.sort(first[first < n])
    message = _held_out_message(_describe(first, int(count)), n_flagged, largest, held, clean, r)
    warnings.warn(message, FlaggingWarning, stacklevel=4)
    return threshold, flagged, message


def distributed_unlabeled_pca(X, params):
    """Fit of :class:`~skpapers.decomposition.UnlabeledPCA` on a Dask array.

    Returns
    -------
    components : ndarray of shape (n_components, n_features)
    result : UnlabeledPCAResult
        Its ``distances`` and ``permuted_mask`` are Dask arrays (persisted).
    """
    from skpapers.decomposition._unlabeled_pca.solver import UnlabeledPCAResult

    check_supported(params)
    da = import_dask()
    r, k = params["n_components"], params["outlier_threshold"]
    max_iter, tol, lsrf_tol = params["max_iter"], params["tol"], params["lsrf_tol"]
    if is_dask_dataframe(X):
        raise ValueError(
            "UnlabeledPCA.fit takes a Dask array, not a Dask DataFrame: pass "
            "X.to_dask_array(lengths=True)."
        )
    X = row_chunks(X, "UnlabeledPCA.fit")
    n, m = X.shape
    if np.isnan(n):
        raise ValueError("UnlabeledPCA.fit needs the number of rows: call X.compute_chunk_sizes().")
    if r >= m:
        raise ValueError(f"n_components = {r} must be smaller than n_features = {m}.")
    if m > n:
        raise ValueError(
            f"UnlabeledPCA.fit on a Dask array needs at least as many samples as features "
            f"(got {n} x {m}); fit such data in memory."
        )
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    rows = _subsample_rows(n, m, params["stage1"], max_iter)
    # one pass: the scale, the check for NaN, the features' moments (a scaler in
    # front, as in memory; in X's units: dividing by the largest entry first made
    # every block wait for it, and a cluster hold all of X) and the warm start's rows
    top, missing, mean, std, sample = compute(
        da.nanmax(abs(X)), da.isnan(X).any(), X.mean(axis=0), X.std(axis=0),
        None if rows is None else X[rows],
    )  # fmt: skip
    if missing:
        raise ValueError(
            "UnlabeledPCA.fit on a Dask array does not handle missing (NaN) entries; fit "
            "in memory, e.g. on a sample of complete rows."
        )
    if not np.isfinite(top):
        raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
    if n >= 3 and np.all(np.isfinite(std)):  # squares that overflow: no scaler's output
        _scaler_verdict(mean, std, 1.0)
    scale = _power_of_two_scale(np.array([top]))
    progress = Progress("unlabeled_pca", params["verbose"])
    progress.stage(
        f"distributed fit started: {n} samples x {m} features in {X.numblocks[0]} blocks"
    )
    U, n_iter = _stage1(X, r, params["stage1"], params["p"], max_iter, tol, scale, progress, sample)
    progress.stage(f"Stage I ({params['stage1']}): {n_iter} iteration(s)")
    d = _distances(X, U, scale)
    threshold, too_far = _threshold(d, r, float(m), k)
    flagged = (d > threshold).persist()
    warned, rule = None, "distance"
    n_flagged = int(compute(flagged.sum())[0])
    if params["restore_samples"] == "checked" and n - n_flagged < r + 2:
        median = weighted_select(d, da.ones_like(d), 0.5 * n)
        clean = d[~flagged] if n_flagged < n else None
        median_clean = None if clean is None else float(compute(da.median(clean, axis=0))[0])
        warned = _warn_no_clean_part(n, n_flagged, median, median_clean, threshold, "distance", r)
        flagged = da.zeros_like(flagged).persist()
        rule, too_far = "none", False  # threshold kept (reported) but not applied
    if lsrf_tol is not None:
        tol_scaled = lsrf_tol / scale if lsrf_tol != "auto" else None
        if tol_scaled is None:
            tol_scaled = _auto_lsrf_tol(X, flagged, U, scale, top / scale)
        U, joined = _refit(X, U, flagged, tol_scaled, max_iter, scale)
        if joined:  # distances on the refitted subspace, against the Stage-I threshold
            d = _distances(X, U, scale)
            flagged = (d > threshold).persist()
        progress.stage(f"subspace refitted with {joined} partly shuffled sample(s)")
    n_flagged = int(compute(flagged.sum())[0])
    checked = params["restore_samples"] == "checked" and rule == "distance"
    if checked and n - n_flagged <= _UNEXPLAINED_MAX:  # as the in-memory fit
        threshold, flagged, warned = _held_out_threshold(
            X, d, flagged, n_flagged, threshold, r, scale
        )
        n_flagged = int(compute(flagged.sum())[0])
    if lsrf_tol is not None:  # on the final flags
        if lsrf_tol == "auto":
            tol_scaled = _auto_lsrf_tol(X, flagged, U, scale, top / scale)
        lsrf_tol = tol_scaled * scale
    progress.stage(f"flagging: {n_flagged} of {n} samples above {threshold:.4g}")
    if too_far and params["restore_samples"] != "all":
        median = weighted_select(d, da.ones_like(d), 0.5 * n)
        warned = _warn_too_far(median, n_flagged, n, threshold, r, m)
    result = UnlabeledPCAResult(
        distances=d, threshold=threshold, permuted_mask=flagged, n_iter=int(n_iter),
        lsrf_tol=lsrf_tol, flagging_rule=rule, flagging_warning=warned,
        clean_distance=_clean_distance(d, flagged),
    )  # fmt: skip
    return U.T.astype(X.dtype), result
