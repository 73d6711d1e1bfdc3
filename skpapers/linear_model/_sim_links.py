# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Link functions of single-index models and their Gaussian constants.

A link is resolved once per fit into a :class:`Link` (``f``, ``df``, ``is_even``,
``name``). Gaussian expectations ``E g(rZ + b)``, ``Z ~ N(0, 1)``, are computed
by Gauss-Hermite quadrature (probabilists' nodes).
"""

import functools
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import expit, ndtr

_SQRT_2PI = np.sqrt(2.0 * np.pi)


def _phi(z):
    return np.exp(-0.5 * np.square(z)) / _SQRT_2PI


def _gelu(z):
    return z * ndtr(z)


def _gelu_d(z):
    return ndtr(z) + z * _phi(z)


def _swish(z):
    return z * expit(z)


def _swish_d(z):
    s = expit(z)
    return s + z * s * (1.0 - s)


def _tanh(z):
    return np.tanh(z)


def _tanh_d(z):
    return 1.0 - np.square(np.tanh(z))


def _sigmoid(z):
    return expit(z)


def _sigmoid_d(z):
    s = expit(z)
    return s * (1.0 - s)


def _probit(z):
    return ndtr(z)


def _relu(z):
    return np.maximum(z, 0.0)


def _relu_d(z):
    return np.greater(z, 0.0).astype(np.result_type(z, np.float32))


def _quadratic(z):
    return np.square(z)


def _quadratic_d(z):
    return 2.0 * z


def _identity(z):
    return 1.0 * np.asarray(z)


def _ones(z):
    return np.ones_like(np.asarray(z, dtype=float))


_BUILTIN_LINKS = {
    "gelu": (_gelu, _gelu_d),
    "swish": (_swish, _swish_d),
    "tanh": (_tanh, _tanh_d),
    "sigmoid": (_sigmoid, _sigmoid_d),
    "probit": (_probit, _phi),
    "relu": (_relu, _relu_d),
    "quadratic": (_quadratic, _quadratic_d),
    "identity": (_identity, _ones),
}
_ALIASES = {"silu": "swish", "logistic": "sigmoid"}
LINK_NAMES = frozenset(_BUILTIN_LINKS) | frozenset(_ALIASES)


@dataclass(frozen=True)
class Link:
    """A resolved link: the function, its derivative, its parity and a name."""

    f: object
    df: object
    is_even: bool
    name: str

    def __call__(self, t):
        """Evaluate the link."""
        return self.f(t)


class _CentralDifference:
    """Derivative of ``f`` by central differences, ``h = 1e-5 * (1 + |t|)``."""

    def __init__(self, f):
        self.f = f

    def __call__(self, t):
        t = np.asarray(t, dtype=float)
        h = 1e-5 * (1.0 + np.abs(t))
        return (np.asarray(self.f(t + h)) - np.asarray(self.f(t - h))) / (2.0 * h)


def _check_vectorised(g, what):
    t = np.linspace(-5.0, 5.0, 101)
    try:
        out = np.asarray(g(t), dtype=float)
    except Exception as exc:  # a user function may raise anything
        raise ValueError(
            f"The {what} failed on a float array t of shape (101,) in [-5, 5]: {exc!r}. "
            "A link must be a vectorised function of a numpy array."
        ) from exc
    if out.shape != t.shape:
        raise ValueError(
            f"The {what} returned an array of shape {out.shape} for an input of shape "
            f"{t.shape}; a link must be vectorised and return the shape of its input."
        )
    if not np.all(np.isfinite(out)):
        raise ValueError(f"The {what} returned non-finite values on t in [-5, 5].")


def _is_even(f):
    t = np.linspace(0.05, 5.0, 100)
    ft = np.asarray(f(t), dtype=float)
    fm = np.asarray(f(-t), dtype=float)
    return bool(np.max(np.abs(ft - fm)) <= 1e-10 * max(1.0, np.max(np.abs(ft))))


def resolve_link(link):
    """Resolve a link specification into a :class:`Link`.

    Parameters
    ----------
    link : str, callable or (callable, callable)
        A built-in name, a vectorised callable (derivative from its ``derivative``
        attribute, else central differences with a ``UserWarning``), or a pair
        ``(f, fprime)``.

    Returns
    -------
    link : Link
        The resolved link.
    """
    if isinstance(link, str):
        name = _ALIASES.get(link, link)
        if name not in _BUILTIN_LINKS:
            raise ValueError(f"Unknown link {link!r}; choose from {sorted(LINK_NAMES)}.")
        f, df = _BUILTIN_LINKS[name]
        return Link(f, df, _is_even(f), name)
    if isinstance(link, (list, tuple)):
        if len(link) != 2 or not all(callable(g) for g in link):
            raise ValueError(
                "A link given as a sequence must be a pair (f, fprime) of callables; "
                f"got {type(link).__name__} of length {len(link)}."
            )
        f, df = link
    elif callable(link):
        f = link
        df = getattr(link, "derivative", None)
        if df is None:
            warnings.warn(
                "The link has no derivative; using central differences. Pass "
                "(f, fprime) or give the callable a 'derivative' attribute.",
                UserWarning,
                stacklevel=3,
            )
            df = _CentralDifference(f)
        elif not callable(df):
            raise ValueError("The link's 'derivative' attribute must be callable.")
    else:
        raise ValueError(f"link must be a string, a callable or a pair; got {link!r}.")
    _check_vectorised(f, "link function")
    _check_vectorised(df, "link derivative")
    return Link(f, df, _is_even(f), getattr(f, "__name__", type(f).__name__))


@functools.lru_cache(maxsize=4)
def gauss_hermite(n_nodes=200):
    """Nodes and weights with ``sum(w * g(z)) ~ E g(Z)``, ``Z ~ N(0, 1)``.

    Nodes beyond |z| = 12 (weights below 1e-31) are dropped so that fast-growing
    user links cannot overflow.
    """
    z, w = hermegauss(n_nodes)
    keep = np.abs(z) <= 12.0
    return z[keep], w[keep] / _SQRT_2PI


@functools.lru_cache(maxsize=64)
def _trapezoid_nodes(n_nodes):
    z = np.linspace(-12.0, 12.0, n_nodes)
    return z, (z[1] - z[0]) * np.exp(-0.5 * z * z) / _SQRT_2PI


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


def link_constants(link, norm=1.0, offset=0.0):
    """Gaussian constants of ``link`` at index ``s = norm * Z + offset``.

    Parameters
    ----------
    link : Link
        The resolved link.
    norm : float, default=1.0
        Norm of the coefficient (in whitened coordinates).
    offset : float, default=0.0
        Intercept.

    Returns
    -------
    constants : dict
        ``esc`` = E[f(s)^2 (Z^2 - 1)] (the ESC constant), ``phd`` =
        E[f(s) (Z^2 - 1)] (= E f'' at unit norm), ``first`` = E f'(s),
        ``fp2`` = E f'(s)^2, ``fp2z2`` = E f'(s)^2 Z^2, ``fp2z`` = E f'(s)^2 Z.
    """
    z, w = _gaussian_nodes(norm)
    s = norm * z + offset
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


def smoothness(link, norm, offset, fit_intercept, offset_norm2=0.0):
    """Largest eigenvalue L of E[f'(s)^2 zbar zbar^T] (the step is 1/L).

    With an intercept ``zbar = [z; 1]``; without one, ``max(E f'^2, E f'^2 Z^2)``,
    doubled plus ``offset_norm2 * E f'^2`` when the uncentred covariates have a
    non-zero mean ``offset`` in whitened units (a safe bound).
    """
    c = link_constants(link, norm, offset)
    e, a, m = c["fp2"], c["fp2z2"], c["fp2z"]
    if fit_intercept:
        lam = 0.5 * (a + e) + np.sqrt(0.25 * (a - e) ** 2 + m * m)
        big = max(e, lam)
    else:
        big = max(e, a)
        if offset_norm2 > 0:
            big = 2.0 * (big + offset_norm2 * e)
    if not np.isfinite(big):
        return np.inf
    return max(big, 1e-12)
