# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Link functions of single-index models, shared by the estimator and the data generator.

A link is resolved once per fit into a :class:`Link` (``f``, ``df``, ``is_even``,
``name``).
"""

import inspect
import sys
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import expit, ndtr

SQRT_2PI = np.sqrt(2.0 * np.pi)


# links already warned about (a function, or the class of a callable object: clones
# of an estimator deep-copy such objects, one per cross-validation fold)
_WARNED = weakref.WeakSet()
_LIBRARIES = ("sklearn", "joblib", __name__.split(".")[0])


def _user_stacklevel():
    """``stacklevel`` of the innermost caller outside skpapers, scikit-learn and joblib."""
    dirs = tuple(
        str(Path(sys.modules[name].__file__).parent)
        for name in _LIBRARIES
        if getattr(sys.modules.get(name), "__file__", None)
    )
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(dirs):
        frame, level = frame.f_back, level + 1
    return level


def _warn_once_no_derivative(link):
    key = link if inspect.isroutine(link) or isinstance(link, np.ufunc) else type(link)
    try:
        if key in _WARNED:
            return
        _WARNED.add(key)
    except TypeError:  # not weakly referenceable: warn every time
        pass
    warnings.warn(
        "The link has no derivative; using central differences. Pass (f, fprime) or "
        "give the callable a 'derivative' attribute. (Warned once per link.)",
        UserWarning,
        stacklevel=_user_stacklevel(),
    )


def _phi(z):
    return np.exp(-0.5 * np.square(z)) / SQRT_2PI


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


class _Guarded:
    """A user function whose failures outside the checked range become clear errors.

    The fit may evaluate the link far outside [-5, 5]. An exception raised
    there, or NaN returned for a finite argument, becomes a ``ValueError``
    naming the range of the arguments; infinite values (overflow) pass, so
    that the step-size control can back off.
    """

    def __init__(self, g, what):
        self.g, self.what = g, what

    def __call__(self, t):
        t = np.asarray(t)
        try:
            out = self.g(t)
        except Exception as exc:  # a user function may raise anything
            raise ValueError(
                f"The {self.what} raised {exc!r} on arguments in [{np.min(t):.3g}, "
                f"{np.max(t):.3g}]; a link must accept every real argument."
            ) from exc
        arr = np.asarray(out, dtype=float)
        bad = np.isnan(arr) & np.isfinite(t)
        if bad.any():
            raise ValueError(
                f"The {self.what} returned NaN for {int(bad.sum())} finite arguments in "
                f"[{np.min(t[bad]):.3g}, {np.max(t[bad]):.3g}]; a link must be defined "
                "for every real argument."
            )
        return out


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
            _warn_once_no_derivative(link)
            df = _CentralDifference(f)
        elif not callable(df):
            raise ValueError("The link's 'derivative' attribute must be callable.")
    else:
        raise ValueError(f"link must be a string, a callable or a pair; got {link!r}.")
    _check_vectorised(f, "link function")
    _check_vectorised(df, "link derivative")
    name = getattr(f, "__name__", type(f).__name__)
    return Link(_Guarded(f, "link function"), _Guarded(df, "link derivative"), _is_even(f),
                name)
