# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Gaussian moments of a link: step sizes, gradient whitening and the ESC constant.

Expectations ``E g(norm Z + intercept)``, ``Z ~ N(0, 1)``, are computed by
Gauss-Hermite quadrature (probabilists' nodes), or by a trapezoid rule for steep
indices (large ``norm``).
"""

import functools

import numpy as np
from numpy.polynomial.hermite_e import hermegauss

from skpapers.utils._links import SQRT_2PI


@functools.lru_cache(maxsize=4)
def gauss_hermite(n_nodes=200):
    """Nodes and weights with ``sum(w * g(z)) ~ E g(Z)``, ``Z ~ N(0, 1)``.

    Nodes beyond |z| = 12 (weights below 1e-31) are dropped so that fast-growing
    user links cannot overflow.
    """
    z, w = hermegauss(n_nodes)
    keep = np.abs(z) <= 12.0
    return z[keep], w[keep] / SQRT_2PI


@functools.lru_cache(maxsize=64)
def _trapezoid_nodes(n_nodes):
    z = np.linspace(-12.0, 12.0, n_nodes)
    return z, (z[1] - z[0]) * np.exp(-0.5 * z * z) / SQRT_2PI


def _gaussian_nodes(norm, gh_max_norm=2.0, points_per_unit=50, max_nodes=2**15):
    """Quadrature nodes in Z for integrands that vary on the scale ``1 / norm``.

    Gauss-Hermite up to ``norm = gh_max_norm``; beyond, the features of ``f(norm
    Z + b)`` (the bump of a sigmoid's derivative, a kink) are narrower than the
    spacing of its nodes, so a trapezoid rule on ``|Z| <= 12`` with
    ``points_per_unit`` nodes per unit of s (rounded up to a power of two, at
    most ``max_nodes``, plus one; cached) is used instead: it converges fast for
    Gaussian-weighted integrands.
    """
    if norm <= gh_max_norm:
        return gauss_hermite()
    wanted = min(24.0 * points_per_unit * norm, max_nodes)
    return _trapezoid_nodes(int(2 ** np.ceil(np.log2(wanted))) + 1)


def link_constants(link, norm=1.0, intercept=0.0):
    """Gaussian constants of ``link`` at index ``s = norm * Z + intercept``.

    Parameters
    ----------
    link : Link
        The resolved link.
    norm : float, default=1.0
        Norm of the coefficient (in whitened coordinates).
    intercept : float, default=0.0
        Intercept.

    Returns
    -------
    constants : dict
        ``esc`` = E[f(s)^2 (Z^2 - 1)] (the ESC constant), ``phd`` =
        E[f(s) (Z^2 - 1)] (= E f'' at unit norm), ``first`` = E f'(s),
        ``fp2`` = E f'(s)^2, ``fp2z2`` = E f'(s)^2 Z^2, ``fp2z`` = E f'(s)^2 Z.
    """
    z, w = _gaussian_nodes(norm)
    s = norm * z + intercept
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.asarray(link.f(s), dtype=float)
        fp = np.asarray(link.df(s), dtype=float)
        fp2 = fp * fp
        return {
            "esc": float(w @ (f * f * (z * z - 1.0))),
            "phd": float(w @ (f * (z * z - 1.0))),
            "first": float(w @ fp),
            "fp2": float(w @ fp2),
            "fp2z2": float(w @ (fp2 * z * z)),
            "fp2z": float(w @ (fp2 * z)),
        }


def smoothness(link, norm, intercept, fit_intercept, location_norm2=0.0):
    """Largest eigenvalue L of E[f'(s)^2 zbar zbar^T] (the step is 1/L).

    With an intercept ``zbar = [z; 1]``; without one, ``max(E f'^2, E f'^2 Z^2)``,
    doubled plus ``location_norm2 * E f'^2`` when the uncentred covariates have a
    non-zero mean (squared norm ``location_norm2``) in whitened units (a safe bound).
    """
    c = link_constants(link, norm, intercept)
    e, a, m = c["fp2"], c["fp2z2"], c["fp2z"]
    if fit_intercept:
        lam = 0.5 * (a + e) + np.sqrt(0.25 * (a - e) ** 2 + m * m)
        big = max(e, lam)
    else:
        big = max(e, a)
        if location_norm2 > 0:
            big = 2.0 * (big + location_norm2 * e)
    if not np.isfinite(big):
        return np.inf
    return max(big, 1e-12)
