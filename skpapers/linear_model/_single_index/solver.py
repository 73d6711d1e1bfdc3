# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Robust single-index regression on arrays, stage by stage.

:func:`robust_single_index` is the function
:class:`~skpapers.linear_model.RobustSingleIndexRegressor` calls; the stages are
the spectral and first-order starts, the trimmed 1-D fit (public as
:func:`fit_link_scale`) and robust gradient descent.
"""

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr
from scipy.special import ndtr, ndtri
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_consistent_length, check_X_y
from sklearn.utils.validation import check_random_state

from skpapers.linear_model._single_index.link_moments import link_constants, smoothness
from skpapers.linear_model._single_index.robust_statistics import (
    _EXACT_START_MAX_DIM,
    _median,
    _median_mad,
    _top_eigenvector,
    compress_rows,
    covariate_filter,
    duplicate_mask,
    extreme_eigenpairs,
    heavy_tail_direction,
    huber_clip,
    lattice_loadings,
    peak_rows,
    point_mass_mask,
    residual_design,
    residual_mass_mask,
    residual_masses_searched,
    robust_mean,
    robust_whitening,
    squeeze_mask,
    trimmed_mse,
)
from skpapers.utils._links import LINK_NAMES, Link, _phi, _user_stacklevel, resolve_link
from skpapers.utils._numerics import unit_exponent
from skpapers.utils._progress import Progress
from skpapers.utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["RobustSingleIndexResult", "fit_link_scale", "robust_single_index"]

_ESC_WARN = 1e-3
# Trimmed fraction of contamination="auto": the robust stages run at this level
# and the residual refit then keeps the rows that fit (section "Notes").
_AUTO_EPS = 0.25


def _grid_losses(p, y, f, grid, eps):
    """TrimMSE of y - f(t p) for every t of ``grid`` (column blocks, O(n) memory)."""
    n = p.shape[0]
    block = max(1, min(grid.shape[0], (1 << 21) // max(n, 1)))
    out = np.empty(grid.shape[0])
    for j in range(0, grid.shape[0], block):
        t = grid[j : j + block]
        arg = np.multiply.outer(p, t)
        fitted = np.asarray(f(arg.ravel()), dtype=float).reshape(arg.shape)
        out[j : j + block] = trimmed_mse(y[:, None] - fitted, eps)
    return out


def _search_1d(
    p, y, f, eps, even, t_max=3.0, n_coarse=31, n_fine=21, n_doubling=4, coarse_rows=20_000
):
    """Trimmed 1-D fit of the scale t in y ~ f(t p): coarse grid, then a fine one.

    The grid excludes 0 and, for even links, negative t. It doubles t_max (at most
    ``n_doubling`` times) while the minimum sits on its edge. The coarse grid only
    brackets the minimum: above ``2 coarse_rows`` rows it is scored on a systematic
    subsample of about ``coarse_rows`` rows. The fine grid, centred on the coarse
    minimum, is scored on all rows and gives the returned scale and loss.
    """
    step_rows = max(1, p.shape[0] // coarse_rows) if p.shape[0] > 2 * coarse_rows else 1
    p_c, y_c = p[::step_rows], y[::step_rows]
    for i in range(n_doubling + 1):
        lo = 0.0 if even else -t_max
        grid = np.linspace(lo, t_max, n_coarse)
        grid = grid[grid != 0]
        losses = _grid_losses(p_c, y_c, f, grid, eps)
        j = int(np.nanargmin(losses)) if np.any(np.isfinite(losses)) else 0
        if abs(grid[j]) < t_max or i == n_doubling:
            break
        t_max *= 2.0
    step = (t_max - lo) / (n_coarse - 1)
    fine = np.linspace(grid[j] - step, grid[j] + step, n_fine)  # centre: grid[j]
    fine = fine[(fine > 0) if even else (fine != 0)]
    fine_losses = _grid_losses(p, y, f, fine, eps)
    i = int(np.nanargmin(fine_losses)) if np.any(np.isfinite(fine_losses)) else 0
    return float(fine[i]), float(fine_losses[i])


def fit_link_scale(index, y, link="gelu", *, contamination=0.1):
    """Trimmed least-squares fit of the scale ``t`` in ``y ~ f(t * index)``.

    The 1-D stage of :func:`robust_single_index`, public so that any linear
    direction (from :class:`~sklearn.linear_model.HuberRegressor`, say) can be
    turned into a single-index fit ``coef = t * w`` with ``index = X @ w``: a
    31-point coarse grid of ``t`` (doubled while the minimum sits on its edge),
    then a 21-point fine grid around the coarse minimum, each scored by the mean
    of the ``(1 - contamination)`` smallest squared residuals. For an even link
    only ``t > 0`` is searched.

    Parameters
    ----------
    index : array-like of shape (n_samples,)
        The index of every sample along a direction, e.g. ``X @ w``.
    y : array-like of shape (n_samples,)
        Responses.
    link : str, callable or (callable, callable), default="gelu"
        The link f, as for :class:`RobustSingleIndexRegressor`.
    contamination : float in [0, 0.5), default=0.1
        Fraction of the largest squared residuals left out of the loss.

    Returns
    -------
    scale : float
        The fitted ``t`` (non-zero).
    trimmed_loss : float
        The trimmed mean squared residual at ``scale``.

    See Also
    --------
    robust_single_index : The full robust fit, direction included.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.linear_model import fit_link_scale
    >>> index = np.linspace(-2, 2, 200)
    >>> scale, loss = fit_link_scale(index, np.tanh(1.5 * index), "tanh")
    >>> round(scale, 2), bool(loss < 1e-4)
    (1.5, True)
    """
    index = check_array(index, ensure_2d=False, dtype=np.float64, input_name="index").ravel()
    y = check_array(y, ensure_2d=False, dtype=np.float64, input_name="y").ravel()
    check_consistent_length(index, y)
    if not 0 <= contamination < 0.5:
        raise ValueError(f"contamination must be in [0, 0.5); got {contamination!r}.")
    resolved = resolve_link(link)
    return _search_1d(index, y, resolved.f, float(contamination), resolved.is_even)


def _spectral_candidates(Z, y, clip, init, eps, rng, verbose):
    """Candidate unit directions of the spectral and first-order starts (5.2, 5.3)."""
    m, d = Z.shape
    absy = np.abs(y)
    tau = np.quantile(absy, clip) if clip is not None and clip < 1.0 else absy.max()
    if not tau > 0:
        tau = absy.max()
    candidates = []
    if init in ("spectral", "auto") and tau > 0:
        h = np.minimum(np.square(y), tau * tau)

        def matvec(v):
            v = np.ravel(v)
            return Z.T @ (h * (Z @ v.astype(Z.dtype, copy=False))) / m

        top, bottom = extreme_eigenpairs(
            matvec, d, Z.dtype, rng, k=2 if init == "auto" else 1
        )
        (lam_max, u_max), (lam_min, u_min) = top[0], bottom[0]
        bulk = float(h.mean())
        top_side = lam_max - bulk >= bulk - lam_min
        verbose.stage(
            f"spectral start: lambda_max={lam_max:.4g}, lambda_min={lam_min:.4g}, "
            f"bulk={bulk:.4g}, ESC side: {'top' if top_side else 'bottom'} eigenvector"
        )
        if init == "spectral":
            candidates.append(u_max if top_side else u_min)
        else:
            candidates.extend(u for _, u in top + bottom)
    if init in ("first_order", "auto"):
        c = np.clip(y, -tau, tau)
        u = robust_mean(Z, c, eps, "filter", rng, with_one=False)
        nu = np.linalg.norm(u)
        if nu > 0 and np.isfinite(nu):
            candidates.append(u / nu)
    if not candidates:  # y identically zero: no direction carries information
        u = rng.standard_normal(d)
        candidates.append(u / np.linalg.norm(u))
    return candidates


def _huber_trim_ratio(eps, k=1.345):
    """Trimmed over plain mean of psi^2 for Gaussian residuals clipped at k sigma.

    The ``(1 - eps)`` smallest ``psi^2`` (Huber clip at k) of N(0, 1) residuals
    have mean ``ratio * E[psi^2]``; dividing the trimmed mean by it makes a
    consistent estimate of ``E[psi^2]`` (0.83 at eps = 0.1; Student t(2.5)
    residuals give 0.84).
    """
    if eps <= 0:
        return 1.0
    full = (2 * ndtr(k) - 1) - 2 * k * _phi(k) + 2 * k * k * ndtr(-k)
    t = -ndtri(0.5 * eps)  # P(|Z| > t) = eps
    if t >= k:  # the top eps are all clipped at k^2
        return (full - eps * k * k) / ((1 - eps) * full)
    return ((2 * ndtr(t) - 1) - 2 * t * _phi(t)) / ((1 - eps) * full)


def _gradient_whitener(link, theta, b, psi2):
    """Inverse square root of the inlier gradient second moment, as ``v -> A v``.

    At the truth the gradient rows ``c_i [z_i; 1]``, ``c = -psi(r) f'(s)``, of
    Gaussian z have second moment ``E[psi^2] E[f'(s)^2 zbar zbar^T]``: ``E[psi^2]
    E f'^2`` on every direction orthogonal to ``[theta; 0]`` and ``e_{d+1}``, and
    ``E[psi^2]`` times the 2 x 2 block ``[[E f'^2 Z^2, E f'^2 Z], [E f'^2 Z, E
    f'^2]]`` on their span (s = ||theta|| Z + b; the matrix whose top eigenvalue
    is L). Whitening by it makes the inlier rows isotropic, so the filter looks
    for outliers instead of trimming the inliers' own high-variance direction
    (which flattens the loss along it). ``psi2`` estimates ``E[psi^2]`` of the
    clean rows; the caller passes the mean of the ``(1 - eps)`` smallest
    ``psi^2`` over its Gaussian consistency factor (``_huber_trim_ratio``):
    clipped outliers inflate it by about 20 % with 10 % shifted labels, the
    plain mean by about 40 % (a more lenient filter). Returns None when
    ``psi2`` is 0 or not finite.
    """
    norm = float(np.linalg.norm(theta))
    cst = link_constants(link, norm, float(b))
    perp = psi2 * cst["fp2"]
    if not (perp > 0 and np.isfinite(perp)):
        return None
    scale = 1.0 / np.sqrt(perp)
    if not norm > 0:
        return lambda v: scale * v
    q = theta / norm
    block = np.array([[cst["fp2z2"], cst["fp2z"]], [cst["fp2z"], cst["fp2"]]])
    evals, evecs = np.linalg.eigh(block / cst["fp2"])
    evals = np.maximum(evals, 1e-12 * evals.max())
    correction = (evecs / np.sqrt(evals)) @ evecs.T - np.eye(2)

    def apply(v):
        delta = correction @ np.array([q @ v[:-1], v[-1]])
        out = v.copy()
        out[:-1] += delta[0] * q
        out[-1] += delta[1]
        return scale * out

    return apply


def _robust_gd(
    Z, y, theta, b, link, *, eps, aggregator, learning_rate, max_iter, tol, fit_intercept,
    location_z, rng, verbose, patience=10, warn=True, clip=None, label="gradient descent",
    skip=None, newton=False, start=None,
):
    """Robust gradient descent on the trimmed squared loss (section 5.4).

    With ``clip``, the Huber loss at that clip instead (the residual refit);
    with ``skip`` too, rows whose residual at the current iterate exceeds
    ``skip`` count as constant in the loss and get no gradient (a skipped
    Huber loss, redescending at ``skip``). With ``newton`` (Huber loss, an
    intercept and ``learning_rate="auto"`` only), each step is the gradient
    times the inverse of the loss's Gauss-Newton Hessian for Gaussian z (the
    rows inside the clip times ``E[f'(s)^2 zbar zbar^T]``, see
    :func:`_gradient_whitener`): plain steps of ``1/L`` contracted the error
    by only about 0.93 per step along the norm-intercept plane (GeLU,
    Hessian eigenvalues 0.07 to 0.73), so that 20 steps stopped well before
    the minimum.

    ``start``, when given, is ``(Z @ theta + b, y - f(Z @ theta + b))`` (not
    computed again).

    Returns the iterate with the lowest trimmed loss, the number of iterations
    and, at that iterate, the index ``Z @ theta + b`` and the residuals.
    """
    d = Z.shape[1]
    f, df = link.f, link.df
    location_norm2 = float(location_z @ location_z)
    if clip is None or not _REFIT["huber_objective"]:
        def objective(r):
            return trimmed_mse(r, eps)
    else:  # the Huber loss the clipped gradient descends (2 rho, in squared units)
        def objective(r):
            loss = np.square(r)
            a = np.abs(r)
            large = a > clip
            loss[large] = 2.0 * clip * a[large] - clip * clip
            if skip is not None:
                loss[a > skip] = 2.0 * clip * skip - clip * clip
            return np.mean(loss)
    if start is None:
        s = Z @ theta + b
        residual = y - f(s)  # at the current iterate, reused by the next gradient
    else:
        s, residual = start
    loss = float(objective(residual))
    best = (loss, theta, b)
    best_fit = (s, residual)  # never written to: kept by reference
    since_best, shrink, base, n_iter = 0, 1.0, None, 0
    newton_steps = (newton and clip is not None and fit_intercept
                    and isinstance(learning_rate, str) and learning_rate == "auto")
    state = {}
    improving = False
    reason = "max_iter reached"
    for it in range(max_iter):
        if base is None or (learning_rate == "auto" and it % 10 == 0):
            if learning_rate == "auto":
                base = 1.0 / smoothness(
                    link, float(np.linalg.norm(theta)), float(b), fit_intercept, location_norm2
                )
            else:
                base = float(learning_rate)
        r = residual
        if clip is not None:
            r = np.clip(r, -clip, clip)
            if skip is not None:
                r[np.abs(residual) > skip] = 0.0
        elif aggregator in ("filter", "huber"):
            r = huber_clip(r)
        c = -r * df(s)
        whitener = None
        if aggregator == "filter":
            psi2 = float(trimmed_mse(r, eps)) / _huber_trim_ratio(eps)
            whitener = _gradient_whitener(link, theta, b, psi2)
        g = robust_mean(
            Z, c, eps, aggregator, rng, with_one=True, state=state, whitener=whitener
        )
        if newton_steps:
            inside = float(np.mean(np.abs(residual) < clip))
            inverse = _gradient_whitener(link, theta, b, 1.0) if inside > 0 else None
            if inverse is not None:
                g = inverse(inverse(g)) / inside
                base = 1.0
        g_theta = g[:d] + location_z * g[d] if not fit_intercept else g[:d]
        g_b = g[d] if fit_intercept else 0.0
        g_norm = float(np.sqrt(g_theta @ g_theta + g_b * g_b))
        if not (np.isfinite(g_norm) and g_norm > 0):
            reason = "converged (zero gradient)"
            break
        accepted = False
        for _ in range(11):
            eta = base * shrink
            theta_new = theta - eta * g_theta
            b_new = b - eta * g_b if fit_intercept else float(theta_new @ location_z)
            s_new = Z @ theta_new + b_new
            with np.errstate(over="ignore", invalid="ignore"):
                residual_new = y - f(s_new)
                loss_new = float(objective(residual_new))
            if np.isfinite(loss_new) and loss_new <= 1.5 * loss:
                accepted = True
                break
            shrink *= 0.5
        if not accepted:
            reason = "stopped (no step decreased the loss)"
            break
        step = eta * g_norm
        theta, b, s, residual, n_iter = theta_new, b_new, s_new, residual_new, it + 1
        improving = loss_new < best[0] * (1.0 - tol)
        if loss_new < best[0]:
            best, best_fit = (loss_new, theta, b), (s, residual)
        since_best = 0 if improving else since_best + 1
        loss = loss_new
        verbose.iteration(f"iteration {n_iter}: trimmed MSE {loss:.6g}, step {step:.3g}")
        if step <= tol * max(1.0, float(np.linalg.norm(theta))):
            improving, reason = False, "converged (step below tol)"
            break
        if since_best >= patience:
            improving, reason = False, f"plateau (no new best loss in {patience} iterations)"
            break
    verbose.iteration(
        f"{label}: {n_iter} iterations, {reason}; best trimmed MSE {best[0]:.6g}", force=True
    )
    if warn and improving and n_iter == max_iter and max_iter > 0:
        warnings.warn(
            f"RobustSingleIndexRegressor reached max_iter={max_iter} while the trimmed "
            "loss was still improving; increase max_iter.",
            ConvergenceWarning,
            stacklevel=4,
        )
    return best[1], float(best[2]), n_iter, best_fit


_SQUEEZE_ROUNDS = 2
_REFIT = {"rounds": 2, "cut": 2.0, "iters": 20, "guard_tol": 1.02, "huber_objective": True}


def _residual_refit(Z, y, theta, b, link, *, fit_intercept, location_z, learning_rate, tol,
                    rng, verbose, rounds=None, guard_eps=None, skipped=False, start=None):
    """Reweighting step: keep the rows whose residual is within ``cut`` robust sd, refit.

    With ``skipped``, the rows are not chosen once per round at the start: each
    gradient step leaves out the rows beyond the cut at the current iterate
    (a skipped Huber loss on all rows, the scale fixed at the start of the
    round), so that the round ends near a stationary point of one loss instead
    of a fit of the rows its start chose. With a cut fixed by the start, a
    round kept about a quarter of the distance between two starts (the rows
    near the cut decide), which after a subsample fit made the result depend
    on the subsample drawn.

    With ``guard_eps``, a round is kept only if it does not raise the trimmed
    loss at that level (the robust stages' criterion) over all rows of ``Z``:
    outliers whose residuals look like noise (bounded links) could otherwise
    pull the plain refit away from the robust fit.

    ``start``, when given, is ``(Z @ theta + b, y - f(Z @ theta + b))`` (not
    computed again).

    Returns the refitted ``(theta, b)``, the iterations run, the kept-row mask
    and the residuals of all rows of ``Z`` at the returned fit.
    """
    keep = np.ones(y.shape[0], dtype=bool)
    n_iter = 0
    f = link.f
    if start is None:
        s = Z @ theta + b
        start = (s, y - f(s))
    r = start[1]
    loss, tolerance = None, _REFIT["guard_tol"]
    if guard_eps is not None:
        loss, se = _trimmed_mse_and_se(r, guard_eps)
        tolerance = max(tolerance, 1.0 + 2.0 * se)
    rounds = _REFIT["rounds"] if rounds is None else rounds
    for _ in range(rounds):
        scale = 1.4826 * _median(np.abs(r))
        if not scale > 0:
            break
        new_keep = np.abs(r) <= _REFIT["cut"] * scale
        if new_keep.sum() < max(2, Z.shape[1]):
            break
        if skipped:
            Z_fit, y_fit = Z, y
        else:
            Z_fit, y_fit = Z[new_keep], y[new_keep]
        theta_new, b_new, it, fit_new = _robust_gd(
            Z_fit, y_fit, theta, b, link, eps=0.0, aggregator="huber",
            clip=1.345 * scale, learning_rate=learning_rate, max_iter=_REFIT["iters"], tol=tol,
            fit_intercept=fit_intercept, location_z=location_z, rng=rng, verbose=verbose,
            warn=False, label=f"residual refit on {y_fit.shape[0]} rows",
            skip=_REFIT["cut"] * scale if skipped else None, newton=skipped,
            start=start if skipped else None,  # all rows: the fit's own index and residuals
        )
        n_iter += it
        if skipped:
            r_new = fit_new[1]  # y - f(Z @ theta_new + b_new)
            new_keep = np.abs(r_new) <= _REFIT["cut"] * scale
        else:
            r_new = y - f(Z @ theta_new + b_new)
        if loss is not None:
            loss_new = float(trimmed_mse(r_new, guard_eps))
            if not loss_new <= tolerance * loss:
                verbose.iteration(
                    f"residual refit rejected: trimmed MSE {loss_new:.6g} > {loss:.6g}",
                    force=True,
                )
                keep = new_keep  # the rows within the cut at the kept fit
                break
            loss = loss_new
        theta, b, keep, r = theta_new, b_new, new_keep, r_new
        start = fit_new if skipped else None
    return theta, b, n_iter, keep, r


_RESIDUAL_MASS_ROUNDS = 3


def _drop_residual_masses(Z, y, theta, b, link, residual, *, eps, verbose, **refit):
    """Rows on point masses of the residuals, dropped in rounds, each followed by a refit.

    Responses shifted by a fixed amount without noise (under the Huber clip,
    where no residual cut sees them) sit on point masses of the residuals at
    the true coefficients; at the refitted ``(theta, b)`` they are tight
    clusters, which :func:`residual_mass_mask` corrects to first order and
    tests. The first search runs at a pilot fit: the refit of the rows away
    from the residuals' two largest peaks (:func:`peak_rows`), which undoes
    most of the tilt (the refinement alone did not always reach a mass of a
    twentieth of the rows from the tilted fit). The rows found are dropped (at
    most ``2 eps`` of the rows of ``Z`` in all) and the rest refitted
    (:func:`_residual_refit` with the other keywords, guarded at ``eps``);
    each next round searches all rows at the new fit, where the masses are
    sharper, and drops the rows it adds. At most ``_RESIDUAL_MASS_ROUNDS``
    rounds, none once a round adds nothing; when none finds a mass, the fit
    is returned unchanged (the pilot is not kept).

    ``residual`` is ``y - f(Z @ theta + b)``.

    Returns
    -------
    theta, b : the fit
    n_iter : int
        Refit iterations, the pilot's included.
    kept : ndarray of shape (n_rows,), dtype=bool
        Rows of Z not on a mass.
    residual : ndarray
        The kept rows' residuals at the fit.
    screens : list of (ndarray, float, ndarray, float, float)
        ``(theta, b, v, c, h)`` per mass: rows with ``|a . v - c| < h``, ``a``
        the :func:`residual_design` row at the fit ``(theta, b)``.
    """
    n = y.shape[0]
    kept = np.ones(n, dtype=bool)
    screens = []
    budget = int(2.0 * eps * n)
    near = peak_rows(residual)
    if not residual_masses_searched(n - int(near.sum()), Z.shape[1], budget):
        return theta, b, 0, kept, residual, screens  # too few rows for the search
    *fit, n_iter, _, _ = _residual_refit(  # the pilot: the fit without the rows near the peaks
        Z[~near], y[~near], theta, b, link, verbose=verbose, guard_eps=eps, **refit
    )
    for _ in range(_RESIDUAL_MASS_ROUNDS):
        s = Z @ fit[0] + fit[1]
        on, masses = residual_mass_mask(Z, y - link.f(s), link.df(s), y, budget)
        new = on & kept
        if not new.any() or np.count_nonzero(on | ~kept) > budget:
            break
        screens += [(*fit, v, c, h) for v, c, h in masses]
        kept &= ~on
        verbose.stage(f"residual point masses: {len(masses)} found, {int(new.sum())} more "
                      "rows dropped")
        theta, b, it, _, residual = _residual_refit(
            Z[kept], y[kept], *fit, link, verbose=verbose, guard_eps=eps, **refit
        )
        fit = theta, b
        n_iter += it
    return theta, b, n_iter, kept, residual, screens


def _on_residual_masses(Z, y, link, screens, block=65_536):
    """Rows of ``(Z, y)`` on any screen ``(theta, b, v, c, h)`` of :func:`_drop_residual_masses`."""
    on = np.zeros(y.shape[0], dtype=bool)
    for theta, b, v, c, h in screens:
        for start in range(0, y.shape[0], block):
            rows = slice(start, start + block)
            s = Z[rows] @ theta + b
            p = residual_design(Z[rows], y[rows] - link.f(s), link.df(s)) @ v
            on[rows] |= np.abs(p - c) < h
    return on


def _screens_to_whitening(screens, old, new, directions, at):
    """Carry the screens of :func:`_drop_residual_masses` into another whitening.

    As :func:`_change_whitening` carries a fit: the fit ``(theta, b)`` and the
    correction ``v`` (its ``[z, 1]`` part) are linear in ``[z, 1]``, and each
    keeps its value on every row.
    """
    moved = []
    for theta, b, v, c, h in screens:
        theta, b = _change_whitening(theta, b, old, new, directions, at)[:2]
        v_z, v_b = _change_whitening(v[1:-1], v[-1], old, new, directions, at)[:2]
        moved.append((theta, b, np.concatenate([[v[0]], v_z, [v_b]]), c, h))
    return moved


def _trimmed_mse_and_se(r, eps):
    """Trimmed MSE and its relative standard error (sd of the kept squares / sqrt(k) / mean).

    The refit guard tolerates a rise of the trimmed loss within twice this
    sampling error (at least 2 %): below it the two fits are not told apart by
    the loss, and which side of a fixed 2 % a fit lands on decided between a
    tilted and a good fit on heavy-tailed data (tanh, 20 % shifts below the
    Huber clip, one seed: 0.168 or 0.082 by the start of the power iterations).
    """
    sq = np.square(r)
    m = sq.shape[0]
    k = min(max(int(np.ceil((1.0 - eps) * m)), 1), m)
    kept = np.partition(sq, k - 1)[:k] if k < m else sq
    mean = float(kept.mean())
    if not mean > 0 or k < 2:
        return mean, 0.0
    return mean, float(kept.std(ddof=1) / np.sqrt(k) / mean)


def _rows_explained(Z, y, theta, b, link, cut=3.0):
    """Rows whose residual is within ``cut`` robust sd of the fit (for ``contamination_``).

    The refit keeps a tighter band (``_REFIT["cut"]``) for its own fit; the
    estimate of the corrupted fraction counts the rows the fit leaves well
    outside the noise (3 robust sd: 0.3 % of Gaussian noise).
    """
    return _count_explained(y - link.f(Z @ theta + b), cut)


def _count_explained(r, cut=3.0):
    """Residuals ``r`` within ``cut`` robust sd (all of them when the MAD is 0)."""
    scale = 1.4826 * _median(np.abs(r))
    if not scale > 0:
        return int(r.shape[0])
    return int(np.count_nonzero(np.abs(r) <= cut * scale))


def _contradicted(eps):
    """Measured corrupted fraction above which a given ``eps`` is refuted by the data.

    The measure (``contamination_``) counts the rows the filters removed and
    those whose residual exceeds 3 robust sd; heavy-tailed noise inflates it (t(2.5)
    noise: about 0.055 on clean data, 0.09-0.10 with 5 % corrupted rows and
    ``contamination=0.05``, up to 0.23 with 10 % and 0.1, where the filters' tail
    cut removes clean rows far along one direction). It is only read from 100
    rows and 5 rows per feature on: with fewer, the fit nearly interpolates and
    the robust scale of its residuals means little.
    """
    return 2.0 * eps + 0.05


def _on_point_masses(X, planes):
    """Fraction of the rows of X on the point masses found: ``|x . a - b| < h`` for a plane.

    The point-mass filter drops at most ``2 contamination`` of the rows; a
    mass that holds more refutes a float ``contamination`` (0.05 given, a fifth
    of the rows on one value of ``x . u``: the filter dropped half of them,
    the fit explained the rest, and ``contamination_`` stayed at 0.14).
    """
    return float(_on_planes(X, planes).mean()) if planes else 0.0


def _on_planes(X, planes):
    """Rows of X on any of the point masses' planes ``(a, b, h)``: ``|x . a - b| < h``."""
    on = np.zeros(X.shape[0], dtype=bool)
    for a, b, h in planes:
        on |= np.abs(X @ a - b) < h
    return on


_UNSEEN_TOL = 1e-3  # kept rows' variance, relative to the median, of a direction left out


def _unseen_directions(Z):
    """Whitened directions along which the kept rows (almost) do not vary.

    When the filters remove every row off the mode of a zero-inflated column,
    or every row of one category of one-hot columns, the kept rows no longer
    vary along a direction that all rows span: the fit cannot identify its
    coefficient, and gradient descent gave it whatever fitted the noise
    (held-out predictions off by 1e4 on statsmodels' star98). Returns the
    eigenvectors of the kept rows' covariance whose eigenvalue is below
    ``_UNSEEN_TOL`` times the median one (Gaussian rows: above 0.08 from n = 2 d
    on, above 0.5 along the tail cut's direction), as columns; none below 2 d
    rows, whose covariance is singular anyway.
    """
    m, d = Z.shape
    if m < 2 * d or d < 2:
        return np.zeros((d, 0))
    evals, evecs = np.linalg.eigh(np.atleast_2d(np.cov(Z, rowvar=False)))
    return evecs[:, evals < _UNSEEN_TOL * max(float(np.median(evals)), np.finfo(float).tiny)]


def _neutral_extension(theta, b, W, directions, at):
    """Return the fit off the kept rows' hyperplanes ``z . u = at`` with no weight on them.

    Fitted on rows with their components along ``directions`` (U) removed,
    ``(theta, b)`` says nothing off the hyperplanes. Among the equivalent fits
    on them, the one whose coefficient in X, ``W theta``, is orthogonal to
    the hyperplanes' normals ``W U`` (a zero-inflated column gets coefficient
    0; a one-hot category left out gets the mean effect of the others), with
    the intercept moved so that the kept rows' predictions are unchanged.
    """
    theta = theta - directions @ (directions.T @ theta)
    normals = W @ directions
    step = -np.linalg.lstsq(normals, W @ theta, rcond=None)[0]
    return theta + directions @ step, b - float(at @ step)


def _change_whitening(theta, b, old, new, directions, at):
    """Carry the fit ``(theta, b)`` and the hyperplanes ``z . u = at`` into another whitening.

    ``old`` and ``new`` are ``(location, W)`` pairs, z = (x - location) @ W.
    Every row keeps its index ``z . theta + b``. The orthonormal columns
    ``directions`` become orthonormal columns spanning the hyperplanes'
    normals in the new coordinates, with their constants ``at``, and
    ``theta`` loses its component along them to ``b`` (the kept rows lie on
    the hyperplanes, and the fit only sees the rows projected on them).
    """
    (location_0, W_0), (location_1, W_1) = old, new
    location_0, location_1 = (np.asarray(v, dtype=np.float64) for v in (location_0, location_1))
    W_0, W_1 = np.asarray(W_0, dtype=np.float64), np.asarray(W_1, dtype=np.float64)
    coef = W_0 @ theta
    theta = np.linalg.solve(W_1, coef)
    b = b + float(coef @ (location_1 - location_0))
    if directions.shape[1]:
        normals = W_0 @ directions  # z . u = at as (x - location_0) . normals = at
        directions, R = np.linalg.qr(np.linalg.solve(W_1, normals))
        at = np.linalg.solve(R.T, at + (location_0 - location_1) @ normals)
        along = directions.T @ theta
        theta = theta - directions @ along
        b += float(at @ along)
    return theta, b, directions, at


def _project_out(Z, directions):
    """Rows of Z with their component along the orthonormal ``directions`` removed."""
    if not directions.shape[1]:
        return Z
    return Z - (Z @ directions.astype(Z.dtype)) @ directions.T.astype(Z.dtype)


# Removed fraction above which "auto" reads the covariates as off the model: an
# attack on a quarter of the rows (the most "auto" trims) makes the filters remove
# at most 0.265 (12 attacks, d = 20 and 50, n = 4000, fresh seeds 7700-7707; worst:
# point_mass, d = 20, seed 7704; hijack, cluster, leverage, gradient 0.25-0.26), heavy-tailed
# or skewed covariates of real tables 0.35-0.55 (statsmodels' grunfeld). Counted
# besides the Gaussian share of the filter's tail cuts: at 2e5 rows the tail test also
# fires on the few hijacked rows the screens leave (condition number 1e3, d = 20, data
# seed 11602), and its cut made 31.1 %; the plain refit had 54 times the error.
_UNSAFE_REMOVAL = 0.3


def _unsafe_reasons(removed, residuals, y, auto, unseen_features=(), gaussian_cut=0.0):
    """Why the robust stages likely fit a different model than the data's (may be none).

    Two signs, measured on the fit: under ``contamination="auto"`` the filters
    removed more than ``_UNSAFE_REMOVAL`` of the rows besides ``gaussian_cut``
    (the share of the rows a Gaussian law loses to the covariate filter's tail
    cuts: by design, not outliers), clearly more than the
    fraction it trims (``_AUTO_EPS``: the benchmark's attacks at a corrupted
    fraction of 0.2 lose at most 0.22 of the rows, d = 20 and 50; heavy-tailed,
    skewed or discrete covariates of real tables 0.1-0.7, and held-out R^2 drops
    below least squares'); or more
    than half of the kept rows share one response (then the median of y),
    which the fit reproduces exactly while the other rows keep large residuals
    (it follows the mode of a zero-inflated y and trims the rest).
    A third: the kept rows do not vary along a direction (``unseen_features``:
    the feature carrying most of each, see :func:`_unseen_directions`).
    ``residuals`` and ``y`` are those of the kept rows. Read, like
    :func:`_contradicted`, from 100 rows and 5 rows per feature on.
    """
    reasons = []
    if auto and removed - gaussian_cut > _UNSAFE_REMOVAL:
        besides = (f" ({removed - gaussian_cut:.1%} besides the {gaussian_cut:.1%} a "
                   "Gaussian law loses to their tail cuts)" if gaussian_cut else "")
        reasons.append(
            f"the filters removed {removed:.1%} of the rows{besides}, more than the "
            f"{_AUTO_EPS:.0%} that contamination='auto' trims: heavy-tailed, skewed or "
            "discrete covariates are read as outliers"
        )
    mode = _median(y)
    on_mode = y == mode
    spread = np.mean(np.abs(y - mode))
    if (on_mode.mean() > 0.5 and not on_mode.all()
            and _median(np.abs(residuals[on_mode])) <= 1e-3 * spread
            and _median(np.abs(residuals[~on_mode])) > 0.1 * spread):
        reasons.append(
            f"{on_mode.mean():.1%} of the kept rows share the response {mode:.6g} "
            "and the fit reproduces it exactly, leaving the other rows with large "
            "residuals: it follows the mode of y and trims the rest as outliers"
        )
    if len(unseen_features):
        reasons.append(
            f"the kept rows do not vary along {len(unseen_features)} direction(s) that "
            "all rows span (mostly feature(s) "
            f"{', '.join(map(str, sorted(set(unseen_features))))}: a zero-inflated or "
            "discrete column whose other values were removed); their coefficient is set "
            "to 0"
        )
    return reasons


def _warn_unsafe(reasons, auto):
    """Warn that the robust fit may be worse than a plain one: why, and what is done."""
    action = (
        "contamination='auto' refits with contamination=0 (Huber-clipped gradients on "
        "all rows); pass a float contamination to keep the robust fit"
        if auto else
        "compare held-out scores with contamination=0 (no trimming) or a smaller float "
        "contamination"
    )
    warnings.warn(
        "The robust fit may be worse than a plain one on these data: "
        + "; ".join(reasons) + f". {action[0].upper()}{action[1:]}.",
        UserWarning,
        stacklevel=_user_stacklevel(),
    )


def _refit_with(X, keep, residual, y_k, result, planes, *, auto, eps, unseen_features,
                gaussian_cut=0.0):
    """Return the ``contamination`` to fit again with, after warning why, or None.

    A float the data contradict (the fit leaves out or explains poorly more
    than :func:`_contradicted` of the rows, or that many lie on the point
    masses found): ``"auto"``. Under ``"auto"``, signs that the robust stages
    fit another model than the data's (:func:`_unsafe_reasons`): 0, the plain
    fit; with a float they are only warned about.
    """
    if not auto:
        massed = _on_point_masses(X, planes)
        if max(result.contamination, massed) > _contradicted(eps):
            warnings.warn(
                f"contamination={eps:g} is contradicted by the data: the fit leaves out "
                f"or explains poorly {result.contamination:.1%} of the rows (filters "
                f"{1.0 - keep.mean():.1%}), and {massed:.1%} lie on point masses found "
                f"(more than 2 * {eps:g} + 0.05). Refitting with contamination='auto', "
                "whose estimate contamination_ then holds the measured fraction; pass a "
                "larger contamination or 'auto' to avoid the refit.",
                UserWarning,
                stacklevel=_user_stacklevel(),
            )
            return "auto"
    reasons = _unsafe_reasons(1.0 - keep.mean(), residual, y_k, auto, unseen_features,
                              gaussian_cut / keep.shape[0])
    if not reasons:
        return None
    _warn_unsafe(reasons, auto)
    return 0.0 if auto else None  # the safe fit: no trimming (no attack gives these signs)


# the point-mass filter of a subsample fit looks for its directions on this many
# times the subsample's rows of the whole data, spread evenly: a tenth of the rows
# on a point mass at d = 50 was found from 20 000 rows in 2 of 8 designs, from
# 40 000 in 8 of 8 (n = 1e5, seeds 8400-8407), for 0.15 s more
_PROBE_ROWS = 2


def _subsample_size(n, d, floor=20_000, per_feature=400):
    """Rows of the subsample the robust stages run on, or None to use all rows.

    Above twice ``max(floor, per_feature * d)`` rows, whitening, filters, the
    start and robust gradient descent run on a uniform subsample of that size;
    the clusters, the covariate filter (with the subsample's whitening) and the
    residual refit then use every row, so that the statistical error still
    shrinks with n while the cost per row is a fixed number of passes.
    """
    m = max(floor, per_feature * d)
    return m if n > 2 * m else None


def _prepare(X, y, eps, whiten, rng, verbose, location=None, W=None, screens=((), ()),
             probe=None, whitening_rows=None):
    """Clusters, squeezed rows, point masses, robust whitening (or the given one), covariate filter.

    Returns the kept-row mask over X, the location and whitening, the
    whitened kept rows with their responses, the screens found, and the rows
    a Gaussian law would lose to the filter's tail cuts. The screens are the
    lines of the squeeze test ``(p, e)`` (rows near ``x = p + t e``) and the
    point masses' planes ``(a, b, h)`` (rows with ``|x . a - b| < h``), both in
    the coordinates of X, reused on all rows.
    ``probe`` (rows of the whole data, for a subsample X) is where the
    point-mass filter looks for its directions.

    With a given ``location`` and ``W`` (the pass over all rows after a
    subsample fit), the whitening is estimated again, on ``whitening_rows``
    rows of X spread evenly (those the screens drop left out; the given
    whitening only tests them for the lines), and the covariate filter starts
    from the top eigenvector of those rows (up to 200 features): the
    filter's decisions then no longer depend on the subsample drawn. In the
    subsample's whitening, whose error (about 4 % at 20 000 rows, d = 20)
    differs from one subsample to the next, the filter's last direction
    turned by 10 to 20 degrees between random states, and its tail cut
    removed a tenth of the rows, thousands of them different.

    A line is kept in X's coordinates because the whitening it was found in is
    replaced once the squeezed rows are left out: tested along its old
    direction in the new coordinates, the squeeze test on all rows caught
    about half of a hijack's rows, and which half, and how many rows the
    covariate filter removed after it, depended on the subsample.
    """
    n = X.shape[0]
    full = location is None
    lines, planes = screens
    clustered = duplicate_mask(X, rng) if eps > 0 else np.zeros(n, dtype=bool)
    X_w = X[~clustered] if clustered.any() else X
    if location is None:
        # the median and MAD of the columns of X_w: the start of the whitening, and the
        # scales of lattice_loadings (None once X_w has changed without a new whitening)
        scales = None if whiten is None else _median_mad(X_w)
        location, W, Z = robust_whitening(X_w, whiten, eps, rng, med_mad=scales)
        if whiten in ("trimmed", "mcd"):
            lines = []
            for _ in range(_SQUEEZE_ROUNDS):
                squeezed, direction = squeeze_mask(Z, eps, rng)
                if not squeezed.any():
                    break
                clustered[np.flatnonzero(~clustered)[squeezed]] = True
                X_w = X[~clustered]
                if squeezed.sum() <= 0.005 * n:  # the clean tail only: no second whitening
                    Z, scales = Z[~squeezed], None
                    break
                # the line z = t v as x = location + t e (Z = (X - location) @ W)
                e = np.linalg.solve(np.asarray(W, dtype=np.float64).T, direction)
                lines.append((np.asarray(location, dtype=np.float64), e))
                scales = _median_mad(X_w)
                location, W, Z = robust_whitening(X_w, whiten, eps, rng, med_mad=scales)
            probe_z = None if probe is None else (probe - location) @ W
            massed, planes = point_mass_mask(
                Z, eps, lattice_loadings(X_w, W, med_mad=scales), probe=probe_z
            )
            if massed.any():
                clustered[np.flatnonzero(~clustered)[massed]] = True
                X_w = X[~clustered]
                # each plane z . v = c as x . a = b, to be applied to any rows of X
                planes = [(W @ v, c + location @ (W @ v), h) for v, c, h in planes]
                location, W, Z = robust_whitening(X_w, whiten, eps, rng)
    else:
        spread = np.linspace(0, X_w.shape[0] - 1, min(X_w.shape[0], whitening_rows))
        Z_s = X_w[np.unique(spread.astype(np.intp))]  # X's rows spread evenly
        if whiten is None:
            Z = X_w
        else:
            on_planes = _on_planes(X_w, planes)
            left_out = _on_planes(Z_s, planes)
            if lines:  # tested in the given whitening
                left_out |= _squeezed((Z_s - location) @ W, lines, location, W, eps, rng)
            given = location, W
            location, W, Z_s = robust_whitening(Z_s[~left_out], whiten, eps, rng)
            if _whitenings_differ(given, (location, W), whitening_rows):
                verbose.stage("whitening of the evenly spread rows far from the subsample's: "
                              "the subsample's kept")
                location, W, Z_s = *given, None
            Z = X_w @ W
            Z -= location @ W
            screened = _squeezed(Z, lines, location, W, eps, rng) | on_planes
            if screened.any():
                clustered[np.flatnonzero(~clustered)[screened]] = True
                Z = compress_rows(Z, ~screened)  # Z = X_w @ W is ours: no copy
        start = {}  # the filter's own start on all rows (random above 200 features)
        if Z_s is not None and Z_s.shape[1] <= _EXACT_START_MAX_DIM:
            start["v"] = _top_eigenvector(Z_s, centre=Z_s.mean(axis=0))
        if Z_s is not None:  # and its heavy-tail direction, from the same rows (at
            # 2e5 rows about a twentieth of the odd rows of Z that test it chose it)
            start["heavy"] = heavy_tail_direction(Z_s)
    verbose.stage(f"whitening ({whiten}) of {n} rows; {int(clustered.sum())} rows dropped "
                  "as copies in tight clusters, squeezed towards a line or on a point mass")
    keep = np.zeros(n, dtype=bool)
    if full:
        start = {}
        keep[~clustered] = covariate_filter(Z, eps, rng, state=start)
    else:  # all rows after a subsample fit: a cheaper filter
        keep[~clustered] = covariate_filter(
            Z, eps, rng, max_rounds=4, n_power=(6, 2), centred=whiten is not None,
            state=start,
        )
    # rows of Z in place when Z is not (a view of) the caller's X
    take = (lambda A, rows: A[rows]) if np.may_share_memory(Z, X) else compress_rows
    if clustered.any():
        Z, y_k = take(Z, keep[~clustered]), y[keep]
    elif not keep.all():
        Z, y_k = take(Z, keep), y[keep]
    else:
        y_k = y
    verbose.stage(f"covariate filter kept {int(keep.sum())} of {n} rows")
    return keep, location, W, Z, y_k, (lines, planes), start.get("gaussian_cut", 0.0)


# Whitenings of two samples of m rows differ by more than this many sqrt(d / m): one
# of them is off. Between the subsample's and the evenly spread rows' (n = 6e4 and 2e5,
# d = 20 and 50, six attacks at eps 0.1, data seeds 9812-9813, random_state 0-2) the
# singular values of W_0^-1 W_1 were within 1.52 sqrt(d / m) of 1 and the locations at
# most 2.31 sqrt(d / m) apart; with the corrupted rows moved onto the evenly spread
# ones (seed 9815), 6.4-66 (at n = 6e4, d = 50, spread hijack, 3.96: not caught, and
# the error 1.07-1.21 times that of the same rows in their own order).
_WHITENING_AGREEMENT = 4.0


def _whitenings_differ(first, second, m):
    """Whether two whitenings ``(location, W)``, each estimated on about m rows, disagree.

    Compared in the first one's coordinates: the singular values of
    ``W_0^-1 W_1`` (log scale) and the distance between the locations, both
    against ``_WHITENING_AGREEMENT sqrt(d / m)``.
    """
    (location_0, W_0), (location_1, W_1) = first, second
    W_0 = np.asarray(W_0, dtype=np.float64)
    ratio = np.linalg.svd(np.linalg.solve(W_0, np.asarray(W_1, dtype=np.float64)),
                          compute_uv=False)
    shift = np.linalg.norm(np.asarray(location_1 - location_0, dtype=np.float64) @ W_0)
    limit = _WHITENING_AGREEMENT * np.sqrt(W_0.shape[0] / m)
    return not (np.max(np.abs(np.log(ratio))) <= limit and shift <= limit)


def _squeezed(Z, lines, location, W, eps, rng):
    """Rows of Z, whitened by ``location`` and ``W``, that a squeeze test's line flags."""
    screened = np.zeros(Z.shape[0], dtype=bool)
    W64 = np.asarray(W, dtype=np.float64)
    for p, e in lines:  # each line in these coordinates
        v = e @ W64
        squeezed, _ = squeeze_mask(Z, eps, rng, direction=v / np.linalg.norm(v),
                                   offset=(p - location) @ W64)
        screened |= squeezed
    return screened


def _independent_columns(X, tol=1e-7, sample_rows=20_000):
    """Columns of X that are not constant nor (nearly) a combination of earlier ones.

    Rank deficiency is read, as in scikit-learn's linear models, on all rows:
    every column in units of its largest entry, centred, unit norm, then a QR
    factorisation in column order; column j is dropped when the part of it
    that the earlier columns do not explain is below ``tol`` of its norm.
    Above ``2 sample_rows`` rows (and 20 rows per feature) the QR runs first on
    a systematic sample of about ``sample_rows`` rows: a combination on all rows
    is one on any rows, so when the sample shows none (the usual case) the QR
    on all rows, an O(n d^2) pass over a scaled copy of X, is skipped; else it
    decides. Returns the kept column indices and, per dropped column, the
    reason.
    """
    n, d = X.shape
    if n > 2 * max(sample_rows, 20 * d):
        columns, reasons = _independent_columns(X[:: n // sample_rows], tol, sample_rows)
        if not reasons:
            return columns, reasons
    moving = np.ptp(X, axis=0) > 0
    Xs = np.ldexp(X.astype(np.float64), -unit_exponent(X, axis=0))
    Xs -= Xs.mean(axis=0)
    Xs[:, ~moving] = 0.0  # not the rounding error of their mean
    Xs[:, moving] /= np.linalg.norm(Xs[:, moving], axis=0)
    residual = np.abs(np.diag(qr(Xs, mode="r")[0])) if X.shape[0] >= X.shape[1] else None
    reasons = {}
    for j in range(X.shape[1]):
        if not moving[j]:
            reasons[j] = "constant"
        elif residual is not None and residual[j] < tol:
            reasons[j] = "a combination of earlier columns"
    return np.array([j for j in range(X.shape[1]) if j not in reasons], dtype=np.intp), reasons


_DISCRETE_LEVELS = 10  # at most this many distinct values: a discrete column (codes)
_MODE_SHARE = 0.3  # or one value on more than this fraction of the rows


def _discrete_columns(X, sample_rows=20_000):
    """Columns of X that are discrete: few distinct values, or one value on many rows.

    The robust stages model the clean covariates as continuous and roughly
    Gaussian; a binary, ordinal or category-code column (at most 10 levels) or a
    zero-inflated one is read as outlying rows and point masses. Rounded
    measurements keep more levels (scikit-learn's iris: 22-43) and are left to
    the robust stages. On nine real tables (scikit-learn's
    diabetes; statsmodels' randhie, fair, star98, anes96; UCI adult and bank;
    70/30 splits, seeds 0-7) the filters removed 9-65 % of the training rows
    and the held-out trimmed R^2 fell 0.07-0.20 below the best plain fit on
    average (up to 0.64 on one split). Corrupting at most a quarter of the rows
    of a continuous column leaves three quarters of distinct values and no
    value on more than a quarter of the rows: an attack cannot make a column
    discrete by these rules. Read on a systematic sample of about
    ``sample_rows`` rows. Returns the column indices.
    """
    # one column per row: each column contiguous (a column of X is strided)
    sample = np.array(X[:: max(1, X.shape[0] // sample_rows)].T, order="C")
    m = sample.shape[1]
    # A value on more than 0.3 m rows fills more than 0.3 m consecutive places of the
    # sorted column, so it is one of the order statistics at m/4, m/2 and 3m/4: a
    # column with more levels than the limit among its first rows, and none of these
    # three values on more than 0.3 m rows, is continuous by both rules without a sort
    places = [m // 4, m // 2, (3 * m) // 4]
    found = []
    for j, column in enumerate(sample):
        if m >= 100 and np.unique(column[:64]).size > _DISCRETE_LEVELS:
            quartiles = np.partition(column, places)[places]
            if all(np.count_nonzero(column == q) <= _MODE_SHARE * m for q in quartiles):
                continue
        _, counts = np.unique(column, return_counts=True)
        if counts.size <= _DISCRETE_LEVELS or counts.max() > _MODE_SHARE * m:
            found.append(j)
    return np.array(found, dtype=np.intp)


def _warn_discrete(features):
    warnings.warn(
        f"feature(s) {', '.join(map(str, features))} of X are discrete (at most "
        f"{_DISCRETE_LEVELS} distinct values, or one value on more than {_MODE_SHARE:.0%} "
        "of the rows). The robust stages assume continuous covariates and read such "
        "columns as outliers (on real tables they removed 9-65 % of the rows, and "
        "held-out scores fell below least squares'): contamination='auto' fits "
        "without them, with Huber-clipped gradients on all rows (as contamination=0). "
        "Pass a float contamination to run the robust stages anyway.",
        UserWarning,
        stacklevel=_user_stacklevel(),
    )


def _warn_dropped(reasons, d):
    listed = "; ".join(f"column {j}: {why}" for j, why in reasons.items())
    warnings.warn(
        f"{len(reasons)} of the {d} features of X are left out of the index, with "
        f"coefficient 0 ({listed}): their directions cannot be estimated (whitening "
        "would divide by a zero variance). Drop them, or fit on the other features.",
        UserWarning,
        stacklevel=5,
    )


def _embed(columns, d, vector, matrix=None):
    """Put the kept columns' estimates back among all ``d`` features (0 elsewhere)."""
    full = np.zeros(d)
    full[columns] = vector
    if matrix is None:
        return full
    square = np.zeros((d, d))
    square[np.ix_(columns, columns)] = matrix
    return full, square


def _canonical_sign(coef, intercept):
    j = int(np.argmax(np.abs(coef))) if coef.size else 0
    if coef.size and coef[j] < 0:
        return -coef, -intercept
    return coef, intercept


PARAMETER_CONSTRAINTS = {
    "link": [StrOptions(set(LINK_NAMES)), callable, list, tuple],
    "contamination": [StrOptions({"auto"}), Interval(numbers.Real, 0, 0.5, closed="left")],
    "fit_intercept": ["boolean"],
    "whiten": [StrOptions({"auto", "trimmed", "mcd", "diag"}), None],
    "init": [StrOptions({"auto", "spectral", "first_order"}), "array-like"],
    "aggregator": [
        StrOptions({"filter", "huber", "trimmed_mean", "median_of_means", "mean"})
    ],
    "spectral_clip": [Interval(numbers.Real, 0, 1, closed="right"), None],
    "learning_rate": [
        StrOptions({"auto"}),
        Interval(numbers.Real, 0, None, closed="neither"),
    ],
    "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "random_state": ["random_state"],
    "verbose": ["verbose"],
}


def _resolve_whiten(whiten, n, d):
        if whiten == "auto":
            whiten = "trimmed" if n >= 5 * d and d <= 200 else "diag"
        if whiten in ("trimmed", "mcd") and n < 2 * d:
            raise ValueError(
                f"whiten={whiten!r} needs n_samples >= 2 * n_features; got "
                f"n_samples={n}, n_features={d}. Use whiten='diag' or None."
            )
        return whiten

def _start_coef(init, d):
        start = check_array(
            init, ensure_2d=False, dtype=np.float64, input_name="init"
        ).ravel()
        if start.shape != (d,):
            raise ValueError(
                f"init as an array must have shape (n_features,) = ({d},); got "
                f"{np.shape(init)}."
            )
        return start


@dataclass(frozen=True)
class RobustSingleIndexResult:
    """What :func:`robust_single_index` found besides the coefficients.

    Parameters
    ----------
    init_coef : ndarray of shape (n_features,)
        The coefficient after initialisation (before gradient descent).
    n_iter : int
        Gradient iterations run.
    covariate_mask : ndarray of shape (n_samples,) of bool
        Rows kept by the covariate filter (not an outlier detector: the filter
        only bounds the spectral mass of the outliers, many may remain).
    residual_mask : ndarray of shape (n_samples,) of bool
        Rows not dropped as lying on a point mass of the residuals (all True
        when none was found).
    location : ndarray of shape (n_features,)
        Robust location mu of X.
    whitening : ndarray of shape (n_features, n_features)
        Whitening matrix W, with z = (x - mu) @ W.
    esc_constant : float
        Expected Squared Convexity constant of the link.
    link : Link
        The resolved link (``f``, ``df``, ``is_even``, ``name``).
    contamination : float
        Fraction of the rows the final fit leaves out or explains poorly
        (clusters, squeezed rows, point masses, the covariate filter, point
        masses of the residuals, residuals beyond 3 robust standard
        deviations): an estimate of the corrupted fraction,
        inflated by heavy-tailed noise.
    """

    init_coef: np.ndarray
    n_iter: int
    covariate_mask: np.ndarray
    residual_mask: np.ndarray
    location: np.ndarray
    whitening: np.ndarray
    esc_constant: float
    link: Link
    contamination: float


@validate_params(
    {"X": ["array-like"], "y": ["array-like"], **PARAMETER_CONSTRAINTS},
    prefer_skip_nested_validation=True,
)
def robust_single_index(
    X,
    y,
    *,
    link="gelu",
    contamination="auto",
    fit_intercept=True,
    whiten="auto",
    init="auto",
    aggregator="filter",
    spectral_clip=0.9,
    learning_rate="auto",
    max_iter=100,
    tol=1e-6,
    random_state=None,
    verbose=0,
):
    """Robust single-index regression ``y = f(<coef, x> + intercept) + noise``.

    A fraction ``contamination`` of the rows (covariates and responses) may be
    adversarially corrupted. Robust whitening, a covariate filter, a clipped
    spectral (or first-order) start, a trimmed 1-D fit of sign and norm, then
    robust gradient descent on the squared loss.
    :class:`~skpapers.linear_model.RobustSingleIndexRegressor` is the estimator
    around this function; its docstring describes every parameter in full.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Covariates (dense).
    y : array-like of shape (n_samples,)
        Responses.
    link : str, callable or (callable, callable), default="gelu"
        The known link f.
    contamination : "auto" or float in [0, 0.5), default="auto"
        Upper bound on the corrupted fraction, or "auto" when it is unknown.
    fit_intercept : bool, default=True
        Whether to fit an intercept.
    whiten : {"auto", "trimmed", "mcd", "diag"} or None, default="auto"
        Robust whitening of X.
    init : {"auto", "spectral", "first_order"} or array-like of shape (n_features,), \
            default="auto"
        Initialisation.
    aggregator : {"filter", "huber", "trimmed_mean", "median_of_means", "mean"}, \
            default="filter"
        Robust mean of the per-sample gradients.
    spectral_clip : float in (0, 1] or None, default=0.9
        Quantile of ``|y|`` at which y is clipped in the starts.
    learning_rate : "auto" or float > 0, default="auto"
        Step size.
    max_iter : int >= 0, default=100
        Maximum number of gradient iterations.
    tol : float >= 0, default=1e-6
        Stopping tolerance.
    random_state : int, RandomState instance or None, default=None
        Seeds the randomised stages.
    verbose : int, default=0
        0 silent, 1 one line per stage, 2 also the loss per iteration and
        why each descent stopped (logger ``skpapers.single_index``).

    Returns
    -------
    coef : ndarray of shape (n_features,)
        Index coefficients in the original X coordinates.
    intercept : float
        Intercept (0.0 if ``fit_intercept=False``).
    result : RobustSingleIndexResult
        Start, iterations, covariate mask, whitening and link.

    See Also
    --------
    skpapers.linear_model.RobustSingleIndexRegressor : The estimator.
    fit_link_scale : The 1-D stage alone, for any direction.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.datasets import make_contaminated_sim
    >>> from skpapers.linear_model import robust_single_index
    >>> X, y, coef, outliers = make_contaminated_sim(
    ...     n_samples=2000, n_features=10, contamination=0.1, random_state=0)
    >>> coef_hat, intercept, result = robust_single_index(X, y, random_state=0)
    >>> bool(np.linalg.norm(coef_hat - coef) < 0.3)
    True
    """
    X, y = check_X_y(X, y, y_numeric=True, dtype=[np.float64, np.float32], ensure_min_samples=2)
    y = np.asarray(y, dtype=np.float64)
    X_given, link_given, whiten_given, verbose_given = X, link, whiten, verbose
    n, d = X.shape
    # a feature that varies on a systematic sample varies on all rows: the pass over
    # all rows (two reductions of X, 0.08 s at 1e6 x 50) only when the sample shows none
    if not (np.any(np.ptp(X[:: max(1, n // 1000)], axis=0) > 0)
            or np.any(np.ptp(X, axis=0) > 0)):
        raise ValueError(
            "every feature of X is constant (in its dtype): no direction can be fitted."
        )
    d_all = d
    columns, dropped = _independent_columns(X)
    if dropped:
        _warn_dropped(dropped, d)
        X, d = X[:, columns], columns.size
    auto = isinstance(contamination, str)
    eps = _AUTO_EPS if auto else float(contamination)
    discrete = _discrete_columns(X) if auto and n >= max(100, 5 * d) else ()
    if len(discrete):
        _warn_discrete(columns[discrete])
        eps = 0.0
    progress = Progress("single_index", verbose)
    progress.stage(
        f"fit started: {n} rows x {d} features, link {link!r}, contamination "
        f"{contamination!r} (trimmed fraction {eps:g})"
    )
    verbose = progress
    rng = check_random_state(random_state)
    if not auto and eps > 0.25:
        warnings.warn(
            f"contamination={eps} is above 0.25; the method is reliable for "
            "contamination <= 0.1 and breaks down near 0.2-0.3.",
            UserWarning,
            stacklevel=4,
        )
    link = resolve_link(link)
    esc = link_constants(link)["esc"]
    start_init = init
    init = init if isinstance(init, str) else None
    if init == "spectral" and abs(esc) < _ESC_WARN:
        warnings.warn(
            f"The ESC constant of link {link.name!r} is {esc:.2g}: the spectral "
            "start carries almost no signal; use init='first_order' or 'auto'.",
            UserWarning,
            stacklevel=4,
        )
    start = _start_coef(start_init, d_all)[columns] if init is None else None
    whiten = _resolve_whiten(whiten, n, d)
    if whiten is None:
        # X is used as given (standardised covariates assumed): its squares must exist
        largest = float(np.max(np.abs(X), initial=0.0))
        if not np.isfinite(largest * largest * n * d):
            raise ValueError(
                f"whiten=None uses X as given (standardised covariates are assumed), but X "
                f"has entries up to {largest:.3g}, whose squares overflow; use "
                "whiten='auto' (results then do not depend on the units of X) or rescale X."
            )
    if n < 2 * d:
        warnings.warn(
            f"n_samples={n} is below 2 * n_features={2 * d}: too few rows for the "
            "recovery guarantee (it needs n of order n_features * log(n_features)); "
            "the fit is a heuristic and may be far from the truth.",
            UserWarning,
            stacklevel=4,
        )

    sub = _subsample_size(n, d) if eps > 0 and max_iter > 0 else None
    probe = None
    if sub is not None:  # robust stages on a subsample, the refit on all rows
        rows = np.sort(rng.choice(n, size=sub, replace=False))
        Xs, ys = X[rows], y[rows]
        probe = X[np.linspace(0, n - 1, min(n, _PROBE_ROWS * sub)).astype(np.intp)]
        progress.stage(f"robust stages on a subsample of {sub} rows, the refit on all rows")
    else:
        Xs, ys = X, y
    keep, location, W, Z, y_k, screens, gaussian_cut = _prepare(
        Xs, ys, eps, whiten, rng, verbose, probe=probe
    )
    unseen = _unseen_directions(Z) if eps > 0 and fit_intercept else np.zeros((d, 0))
    unseen_at = np.mean(Z @ unseen.astype(Z.dtype), axis=0)  # the kept rows' constant z . u
    unseen_features = [int(columns[j]) for j in np.argmax(  # the feature carrying each
        np.abs(W.astype(np.float64) @ unseen) * np.std(X, axis=0)[:, None], axis=0)
    ] if unseen.shape[1] else []
    Z = _project_out(Z, unseen)
    location_z = np.zeros(d) if fit_intercept else np.asarray(location @ W, float)

    if start is not None:
        theta = np.linalg.solve(W.astype(np.float64), start)
        b = float(start @ location)
    else:
        candidates = _spectral_candidates(Z, y_k, spectral_clip, init, eps, rng, verbose)
        best = None
        for u in candidates:
            p = Z @ u.astype(Z.dtype) + float(u @ location_z)
            t, loss = _search_1d(p, y_k, link.f, eps, link.is_even)
            if best is None or loss < best[0]:
                best = (loss, t * u)
        theta = best[1]
        b = 0.0 if fit_intercept else float(theta @ location_z)
        verbose.stage(f"1-D fit of sign and norm: norm {np.linalg.norm(theta):.4g}, "
                      f"trimmed MSE {best[0]:.6g}")
    init_coef = W.astype(np.float64) @ theta
    theta, b, n_iter, fit = _robust_gd(
        Z, y_k, theta, b, link, eps=eps, aggregator=aggregator,
        learning_rate=learning_rate, max_iter=max_iter, tol=tol,
        fit_intercept=fit_intercept, location_z=location_z, rng=rng, verbose=verbose,
    )
    verbose.stage(f"robust gradient descent: {int(n_iter)} iteration(s)")
    fitted = int(keep.sum())
    refit = _REFIT["rounds"] and max_iter > 0 and eps > 0
    residual_mask, mass_screens = np.ones(keep.shape[0], dtype=bool), []
    if refit:
        descent = dict(fit_intercept=fit_intercept, location_z=location_z,
                       learning_rate=learning_rate, tol=tol, rng=rng)
        theta, b, it, _, residual = _residual_refit(
            Z, y_k, theta, b, link, verbose=verbose, guard_eps=eps, start=fit, **descent
        )
        n_iter += it
        theta, b, it, kept, residual, mass_screens = _drop_residual_masses(
            Z, y_k, theta, b, link, residual, eps=eps, verbose=verbose, **descent
        )
        n_iter += it
        residual_mask[np.flatnonzero(keep)[~kept]] = False
        y_k = y_k[kept]
        fitted = _count_explained(residual)
        verbose.stage(f"residual refit: {fitted} of {len(y_k)} rows explained")
    if sub is not None:  # one more refit round on all rows
        del Z, y_k
        keep, location_all, W_all, Z, y_k, _, gaussian_cut = _prepare(
            X, y, eps, whiten, rng, verbose, location, W, screens, whitening_rows=sub
        )
        mass_screens = _screens_to_whitening(
            mass_screens, (location, W), (location_all, W_all), unseen, unseen_at
        )
        theta, b, unseen, unseen_at = _change_whitening(
            theta, b, (location, W), (location_all, W_all), unseen, unseen_at
        )
        location, W = location_all, W_all
        location_z = np.zeros(d) if fit_intercept else np.asarray(location @ W, float)
        Z = _project_out(Z, unseen)
        massed = _on_residual_masses(Z, y_k, link, mass_screens)
        residual_mask = np.ones(n, dtype=bool)
        if massed.any():
            residual_mask[np.flatnonzero(keep)[massed]] = False
            Z, y_k = Z[~massed], y_k[~massed]
        theta, b, it, _, residual = _residual_refit(
            Z, y_k, theta, b, link, fit_intercept=fit_intercept, location_z=location_z,
            learning_rate=learning_rate, tol=tol, rng=rng, verbose=verbose, rounds=1,
            guard_eps=eps, skipped=True,
        )
        n_iter += it
        fitted = _count_explained(residual)
        verbose.stage(f"residual refit on all rows: {fitted} of {n} rows explained")
    if unseen.shape[1]:  # the kept rows never varied along these: no weight along them
        theta, b = _neutral_extension(theta, b, W.astype(np.float64), unseen, unseen_at)
    coef = W.astype(np.float64) @ theta
    intercept = float(b - coef @ location) if fit_intercept else 0.0
    if link.is_even:
        coef, intercept = _canonical_sign(coef, intercept)
        init_coef, _ = _canonical_sign(init_coef, 0.0)
    coef, init_coef = _embed(columns, d_all, coef), _embed(columns, d_all, init_coef)
    location, W = _embed(columns, d_all, location, np.asarray(W, dtype=np.float64))
    result = RobustSingleIndexResult(
        init_coef=init_coef,
        n_iter=int(n_iter),
        covariate_mask=keep,
        residual_mask=residual_mask,
        location=np.asarray(location, dtype=np.float64),
        whitening=np.asarray(W, dtype=np.float64),
        esc_constant=float(esc),
        link=link,
        contamination=1.0 - fitted / n,
    )
    again = None  # the checks read the refit's residuals, from 100 rows and 5 per feature
    if eps > 0 and max_iter > 0 and n >= max(100, 5 * d):
        again = _refit_with(X, keep, residual, y_k, result, screens[1], auto=auto, eps=eps,
                            unseen_features=unseen_features, gaussian_cut=gaussian_cut)
    if again is not None:  # the whole fit again, on the caller's data
        return robust_single_index(
            X_given, y, link=link_given, contamination=again, fit_intercept=fit_intercept,
            whiten=whiten_given, init=start_init, aggregator=aggregator,
            spectral_clip=spectral_clip, learning_rate=learning_rate, max_iter=max_iter,
            tol=tol, random_state=random_state, verbose=verbose_given,
        )
    if not (np.all(np.isfinite(coef)) and np.isfinite(intercept)):
        raise ValueError(
            "the fit diverged (non-finite coefficients); the covariates may be nearly "
            "degenerate: check X for constant or duplicated features, or use the default "
            "whiten='auto'."
        )
    return coef, float(intercept), result
