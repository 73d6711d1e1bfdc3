# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Entry-point registry of skpapers estimators, built-in and third-party.

Estimators are declared as entry points in the group ``skpapers.estimators``
(``name = "package.module:Class"``). skpapers declares its own estimators the
same way in its ``pyproject.toml``, so built-ins and plugins share one code
path. Names are read from package metadata only; a class is imported when it is
asked for.

Rules:

- a name declared by skpapers itself always wins a clash; between plugins the
  first in sorted ``(distribution, name)`` order wins; every loser stays
  reachable as ``"distribution:name"`` and one :class:`SkpapersPluginWarning`
  names both sides;
- a plugin that fails to import, raises at import or is not a
  :class:`~sklearn.base.BaseEstimator` subclass gives one warning and is
  skipped by :func:`all_estimators`; :func:`get` on it raises
  :class:`PluginLoadError` naming the distribution and the cause;
- ``SKPAPERS_DISABLE_PLUGINS=1`` hides every entry not declared by skpapers.

Examples
--------
>>> from skpapers import registry
>>> "upca" in registry.available()
True
>>> registry.get("upca").__name__
'UnlabeledPCA'
"""

import difflib
import functools
import importlib.metadata
import inspect
import os
import warnings
from dataclasses import dataclass

from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    RegressorMixin,
    TransformerMixin,
)

from skpapers.exceptions import SkpapersPluginWarning

__all__ = [
    "GROUP",
    "PluginLoadError",
    "Spec",
    "all_estimators",
    "available",
    "create",
    "get",
    "refresh",
    "specs",
]

GROUP = "skpapers.estimators"
_BUILTIN_DIST = "skpapers"
_DISABLE_ENV = "SKPAPERS_DISABLE_PLUGINS"
_TYPE_MIXINS = {
    "classifier": ClassifierMixin,
    "regressor": RegressorMixin,
    "transformer": TransformerMixin,
    "cluster": ClusterMixin,
}


class PluginLoadError(ImportError):
    """A registered estimator could not be imported or is not an estimator."""


@dataclass(frozen=True)
class Spec:
    """One registered estimator, as declared in package metadata.

    Parameters
    ----------
    name : str
        Lookup key: the declared name, or ``"dist:name"`` for a shadowed entry.
    value : str
        Object reference ``"package.module:Class"``.
    dist : str
        Name of the distribution declaring the entry.
    version : str
        Version of that distribution.
    shadowed_by : str or None
        For a shadowed entry, the distribution whose entry won the name.
    """

    name: str
    value: str
    dist: str
    version: str
    shadowed_by: str | None = None

    @property
    def builtin(self):
        """Whether skpapers itself declares this entry."""
        return _normalise(self.dist) == _BUILTIN_DIST


def _entry_points(group):
    """Entry points of ``group`` (a seam the tests replace)."""
    return importlib.metadata.entry_points(group=group)


def _normalise(dist_name):
    return dist_name.lower().replace("_", "-").replace(".", "-")


def _dist_of(entry_point):
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "unknown", "unknown"
    return dist.name, dist.version


@functools.cache
def _table():
    """Map every lookup key to its :class:`Spec`; warn once about clashes."""
    disabled = os.environ.get(_DISABLE_ENV, "").strip().lower() in {"1", "true", "yes"}
    raw = {}
    for ep in _entry_points(GROUP):
        dist, version = _dist_of(ep)
        if disabled and _normalise(dist) != _BUILTIN_DIST:
            continue
        raw[(dist, ep.name, ep.value)] = Spec(ep.name, ep.value, dist, version)
    entries = sorted(raw.values(), key=lambda s: (not s.builtin, _normalise(s.dist), s.name))
    if not any(spec.builtin for spec in entries):
        warnings.warn(
            "skpapers: the package metadata declaring the built-in estimators was not "
            "found; install the package (e.g. `pip install -e .`) rather than importing "
            "it from a bare source tree.",
            SkpapersPluginWarning,
            stacklevel=3,
        )
    table, qualified = {}, {}
    for spec in entries:
        winner = table.get(spec.name)
        if winner is None:
            entry = table[spec.name] = spec
        elif winner.value != spec.value:
            key = f"{spec.dist}:{spec.name}"
            entry = table[key] = Spec(key, spec.value, spec.dist, spec.version, winner.dist)
            warnings.warn(
                f"skpapers: estimator name {spec.name!r} is declared by {winner.dist!r} "
                f"({winner.value}) and by {spec.dist!r} ({spec.value}); {winner.dist!r} "
                f"wins, the other stays reachable as {key!r}.",
                SkpapersPluginWarning,
                stacklevel=3,
            )
        else:
            continue
        qualified[f"{_normalise(spec.dist)}:{spec.name}"] = entry
    return table, qualified


def specs():
    """Describe every registered estimator from metadata, importing nothing.

    Returns
    -------
    specs : list of Spec
        One entry per lookup key, sorted by name.
    """
    return sorted(_table()[0].values(), key=lambda spec: spec.name)


def available():
    """Names of the registered estimators, importing nothing.

    Returns
    -------
    names : list of str
        Sorted lookup keys; shadowed entries appear as ``"dist:name"``.
    """
    return sorted(_table()[0])


def _spec(name):
    table, qualified = _table()
    dist, sep, short = name.rpartition(":")
    spec = table.get(name) or (qualified.get(f"{_normalise(dist)}:{short}") if sep else None)
    if spec is not None:
        return spec
    close = difflib.get_close_matches(name, table, n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ValueError(
        f"No estimator named {name!r} is registered.{hint} Registered: {sorted(table)}."
    )


_LOADED = {}


def _load(spec):
    """Import the class of ``spec`` once; cache the class or the failure."""
    if spec.name not in _LOADED:
        try:
            obj = importlib.metadata.EntryPoint(spec.name, spec.value, GROUP).load()
            if not (
                isinstance(obj, type)
                and issubclass(obj, BaseEstimator)
                and not inspect.isabstract(obj)
            ):
                raise TypeError(
                    f"{spec.value} is {obj!r}, not a concrete scikit-learn estimator class "
                    "(a subclass of sklearn.base.BaseEstimator)"
                )
            _LOADED[spec.name] = obj
        except Exception as exc:  # a broken plugin must never break discovery
            error = PluginLoadError(
                f"skpapers: could not load plugin {spec.name!r} ({spec.value}) from "
                f"'{spec.dist} {spec.version}': {type(exc).__name__}: {exc}"
            )
            error.__cause__ = exc
            _LOADED[spec.name] = error
            warnings.warn(str(error), SkpapersPluginWarning, stacklevel=3)
    return _LOADED[spec.name]


def get(name):
    """Return the estimator class registered under ``name``.

    Parameters
    ----------
    name : str
        A registered name, or ``"dist:name"`` to pick one distribution's entry.

    Returns
    -------
    cls : type
        The estimator class.

    Raises
    ------
    ValueError
        If no estimator of that name is registered.
    PluginLoadError
        If the entry cannot be imported or is not an estimator class; the
        message names the distribution and the cause.
    """
    loaded = _load(_spec(name))
    if isinstance(loaded, Exception):
        raise loaded
    return loaded


def create(name, **params):
    """Instantiate the estimator registered under ``name``.

    Parameters
    ----------
    name : str
        A registered name (see :func:`available`).
    **params : dict
        Constructor parameters of the estimator.

    Returns
    -------
    estimator : BaseEstimator
        A new, unfitted estimator.

    Examples
    --------
    >>> from skpapers import registry
    >>> registry.create("upca", n_components=2)
    UnlabeledPCA(n_components=2)
    """
    return get(name)(**params)


def all_estimators(type_filter=None, *, include_plugins=True, on_error="warn"):
    """Import and return the registered estimators.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "transformer", "cluster"} or list, \
            default=None
        Keep only estimators of these kinds (by scikit-learn mixin).
    include_plugins : bool, default=True
        Whether to include third-party entries.
    on_error : {"warn", "raise"}, default="warn"
        What to do with an entry that fails to load: skip it (the warning is
        emitted once) or raise :class:`PluginLoadError` (for plugin authors' CI).

    Returns
    -------
    estimators : list of (str, type)
        ``(name, class)`` pairs sorted by name.
    """
    if on_error not in ("warn", "raise"):
        raise ValueError(f"on_error must be 'warn' or 'raise', got {on_error!r}.")
    if type_filter is None:
        mixins = ()
    else:
        kinds = [type_filter] if isinstance(type_filter, str) else list(type_filter)
        unknown = set(kinds) - set(_TYPE_MIXINS)
        if unknown:
            raise ValueError(
                f"Unknown type_filter {sorted(unknown)}; use any of {sorted(_TYPE_MIXINS)}."
            )
        mixins = tuple(_TYPE_MIXINS[kind] for kind in kinds)
    result = []
    for spec in specs():
        if not (include_plugins or spec.builtin):
            continue
        loaded = _load(spec)
        if isinstance(loaded, Exception):
            if on_error == "raise":
                raise loaded
            continue
        if mixins and not issubclass(loaded, mixins):
            continue
        result.append((spec.name, loaded))
    return result


def refresh():
    """Forget the cached metadata scan and loaded classes.

    Call it after installing or removing a plugin in a running interpreter,
    or after changing ``SKPAPERS_DISABLE_PLUGINS``.
    """
    _table.cache_clear()
    _LOADED.clear()
