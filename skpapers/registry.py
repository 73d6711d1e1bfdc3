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
- a third-party name containing ``":"`` (such as ``"skpapers:upca"``) or a
  character that cannot be printed is refused with a warning: ``":"`` is
  reserved for the qualified ``"distribution:name"`` form;
- a distribution whose metadata cannot be read (a missing or empty
  ``METADATA``, a file that is not UTF-8, an ``entry_points.txt`` line in the
  ``skpapers.estimators`` section without ``=``) gives one warning naming it;
  its valid lines still count when its name is readable, and every other
  distribution is read as usual;
- a plugin that fails to import, raises at import (any exception, including
  :class:`SystemExit` and a :class:`KeyboardInterrupt` raised by its own code)
  or is not a :class:`~sklearn.base.BaseEstimator` subclass gives one warning
  and is skipped by :func:`all_estimators`; :func:`get` on it raises
  :class:`PluginLoadError` naming the distribution and the cause;
- Ctrl-C stays Ctrl-C: while plugin code runs, the registry watches for the
  ``SIGINT`` signal (in the main thread, when Python's handler is installed).
  A :class:`KeyboardInterrupt` is passed on unchanged, and nothing is cached,
  when a ``SIGINT`` actually arrived during that import; otherwise it was
  raised by the plugin's own code and the plugin counts as broken;
- warnings are computed once, outside the cached table, and emitted once.
  When a warning filter turns them into errors (``python -W error``), the
  message is written to ``sys.stderr`` instead of raised, so that a broken
  or clashing plugin never breaks a lookup of another estimator; use
  ``all_estimators(on_error="raise")`` to fail on a broken plugin;
- ``SKPAPERS_DISABLE_PLUGINS=1`` hides every entry not declared by skpapers.

Examples
--------
>>> from skpapers import registry
>>> "upca" in registry.available()
True
>>> registry.get("upca").__name__
'UnlabeledPCA'
"""

import contextlib
import difflib
import functools
import importlib.metadata
import inspect
import os
import re
import signal
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import NamedTuple

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
# What the running skpapers itself provides (the same entries as its pyproject.toml
# declares). Built-in is decided by this table, never by a distribution's name: any
# installed package can ship metadata that says "Name: skpapers".
_BUILTINS = {
    "upca": "skpapers.decomposition:UnlabeledPCA",
    "fair_hierarchical": "skpapers.cluster:FairHierarchicalClustering",
    "transport_clustering": "skpapers.cluster:TransportClustering",
    "robust_sim": "skpapers.linear_model:RobustSingleIndexRegressor",
}
_DISABLE_ENV = "SKPAPERS_DISABLE_PLUGINS"
_TYPE_MIXINS = {
    "classifier": ClassifierMixin,
    "regressor": RegressorMixin,
    "transformer": TransformerMixin,
    "cluster": ClusterMixin,
}
_VALUE = importlib.metadata.EntryPoint.pattern


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
        """Whether this is one of the running skpapers' own estimators."""
        return _normalise(self.dist) == _BUILTIN_DIST and _BUILTINS.get(self.name) == self.value


class _Dist(NamedTuple):
    name: str
    version: str
    where: str = ""


class _Entry(NamedTuple):
    """An entry point read by :func:`_entry_points` (same fields as importlib's)."""

    name: str
    value: str
    group: str
    dist: _Dist


class _Problem(NamedTuple):
    """A distribution that could not be read fully; ``message`` becomes a warning."""

    dist: _Dist
    message: str


def _normalise(dist_name):
    return re.sub(r"[-_.]+", "-", dist_name).lower()


def _where(dist):
    path = getattr(dist, "_path", None)
    return str(path) if path is not None else repr(dist)


def _distributions():
    """Yield installed distributions; a failing finder ends the walk with a problem."""
    found = iter(importlib.metadata.distributions())
    while True:
        try:
            yield next(found)
        except StopIteration:
            return
        except Exception as exc:  # a broken path entry must not break the registry
            yield _Problem(
                _Dist("unknown", "unknown"),
                f"skpapers: stopped reading installed packages: {type(exc).__name__}: {exc}",
            )
            return


def _parse_section(text, group):
    """Return ``(pairs, bad_lines)`` of ``group`` in an ``entry_points.txt`` text."""
    pairs, bad, section = [], [], None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section != group:
            continue
        name, sep, value = (part.strip() for part in line.partition("="))
        if sep and name and _VALUE.match(value):
            pairs.append((name, value))
        else:
            bad.append(f"line {number}: {line!r}")
    return pairs, bad


def _dist_entries(dist, group):
    """Entries and problems of one distribution, never raising."""
    where = _where(dist)
    try:
        text = dist.read_text("entry_points.txt")
    except UnicodeDecodeError as exc:
        if group.encode() not in exc.object:
            return []  # unreadable, but declares no estimator
        return [
            _Problem(
                _Dist(where, "unknown"),
                f"skpapers: ignoring the estimators declared at {where!r}: its "
                f"entry_points.txt is not valid UTF-8 ({exc}); reinstall that package.",
            )
        ]
    except Exception as exc:
        return [
            _Problem(
                _Dist(where, "unknown"),
                f"skpapers: could not read entry_points.txt at {where!r}: "
                f"{type(exc).__name__}: {exc}",
            )
        ]
    if not text or f"[{group}]" not in text.replace(" ", ""):
        return []
    pairs, bad = _parse_section(text, group)
    try:
        metadata = dist.metadata
        name = metadata.get("Name") if metadata is not None else None
        version = (metadata.get("Version") if metadata is not None else None) or "unknown"
        reason = None if name and str(name).strip() else "has no Name field"
    except Exception as exc:
        name, version, reason = None, "unknown", f"cannot be read ({type(exc).__name__}: {exc})"
    if reason is not None:
        return [
            _Problem(
                _Dist(where, "unknown"),
                f"skpapers: ignoring the estimators declared at {where!r}: its METADATA "
                f"file is missing, empty or {reason}; reinstall that package.",
            )
        ]
    info = _Dist(str(name).strip(), str(version).strip(), where)
    found = [_Entry(key, value, group, info) for key, value in pairs]
    if bad:
        found.append(
            _Problem(
                info,
                f"skpapers: ignoring {len(bad)} malformed line(s) of the [{group}] section "
                f"of '{info.name} {info.version}' ({where}): {'; '.join(bad)}; each line "
                "must read 'name = package.module:Class'.",
            )
        )
    return found


def _dedup_key(dist):
    try:
        key = dist._normalized_name
    except Exception:
        return None
    return re.sub(r"[-_.]+", "_", key).lower() if isinstance(key, str) and key else None


def _entry_points(group):
    """Entry points of ``group`` and problems met while reading them.

    A seam the tests replace. Each item is an entry point (``name``, ``value``
    and, when known, ``dist`` with ``name`` and ``version``) or a
    :class:`_Problem` to report as a warning. Unlike
    :func:`importlib.metadata.entry_points`, one unreadable distribution does not
    hide the others; the first of two distributions of the same name on
    ``sys.path`` wins, as in :mod:`importlib.metadata`.
    """
    seen, found = set(), []
    for dist in _distributions():
        if isinstance(dist, _Problem):
            found.append(dist)
            continue
        key = _dedup_key(dist)
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        found.extend(_dist_entries(dist, group))
    return found


def _dist_of(entry_point):
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "unknown", "unknown"
    return dist.name or "unknown", dist.version or "unknown"


def _refused(name, dist):
    if ":" in name:
        why = "':' is reserved for the qualified 'distribution:name' form"
    elif not name.isprintable():
        why = "it holds characters that cannot be printed"
    else:
        return None
    return (
        f"skpapers: ignoring the estimator name {name!r} declared by {dist!r}: {why}; "
        "rename the entry point."
    )


def _impostor(ep):
    where = getattr(ep.dist, "where", "") or "an unknown location"
    return (
        f"skpapers: ignoring the estimator {ep.name!r} = {ep.value!r} declared by a package "
        f"at {where!r} whose metadata says it is 'skpapers': it is not one of this "
        f"skpapers' own estimators (an impostor or a stale install); remove that package."
    )


@functools.cache
def _scan():
    """Build the lookup tables from metadata; return the warnings to emit, never warn."""
    disabled = os.environ.get(_DISABLE_ENV, "").strip().lower() in {"1", "true", "yes"}
    notes, raw, declared_builtins = [], {}, set()
    for ep in _entry_points(GROUP):
        dist, version = _dist_of(ep)
        if isinstance(ep, _Problem):
            if not disabled:
                notes.append(ep.message)
            continue
        claims_builtin = _normalise(dist) == _BUILTIN_DIST
        if claims_builtin and _BUILTINS.get(ep.name) == ep.value:
            declared_builtins.add(ep.name)  # the built-ins are taken from _BUILTINS below
            continue
        if claims_builtin:
            notes.append(_impostor(ep))
            continue
        if disabled:
            continue
        refusal = _refused(ep.name, dist)
        if refusal is not None:
            notes.append(refusal)
            continue
        raw[(dist, ep.name, ep.value)] = Spec(ep.name, ep.value, dist, version)
    if declared_builtins != set(_BUILTINS):
        notes.append(
            "skpapers: the package metadata declaring the built-in estimators was not "
            "found; they still work, but install the package (e.g. `pip install -e .`) "
            "rather than importing it from a bare source tree."
        )
    from skpapers import __version__

    builtins = [Spec(name, value, _BUILTIN_DIST, __version__) for name, value in _BUILTINS.items()]
    entries = builtins + sorted(raw.values(), key=lambda s: (_normalise(s.dist), s.name))
    table, qualified = {}, {}
    for declared in entries:
        winner = table.get(declared.name)
        if winner is None:
            entry = table[declared.name] = declared
        elif winner.value != declared.value:
            key = f"{declared.dist}:{declared.name}"
            entry = table[key] = Spec(
                key, declared.value, declared.dist, declared.version, winner.dist
            )
            notes.append(
                f"skpapers: estimator name {declared.name!r} is declared by {winner.dist!r} "
                f"({winner.value}) and by {declared.dist!r} ({declared.value}); {winner.dist!r} "
                f"wins, the other stays reachable as {key!r}."
            )
        else:
            continue
        qualified[f"{_normalise(declared.dist)}:{declared.name}"] = entry
    return table, qualified, tuple(dict.fromkeys(notes))


_LOCK = threading.RLock()
_EMITTED = set()


def _warn(message, stacklevel):
    """Emit ``message`` once as a :class:`SkpapersPluginWarning`, never raising it.

    A filter turning it into an error (``-W error``) must not break the caller's
    lookup, nor leave the message unsaid: it is written to ``sys.stderr``.
    """
    with _LOCK:
        if message in _EMITTED:
            return
        _EMITTED.add(message)
    try:
        warnings.warn(message, SkpapersPluginWarning, stacklevel=stacklevel + 1)
    except SkpapersPluginWarning:
        with contextlib.suppress(Exception):
            print(f"SkpapersPluginWarning: {message}", file=sys.stderr)


def _table():
    """Return the cached ``(table, qualified)`` lookups; warn once about problems."""
    table, qualified, notes = _scan()
    for message in notes:
        _warn(message, stacklevel=3)
    return table, qualified


def specs():
    """Describe every registered estimator from metadata, importing nothing.

    Returns
    -------
    specs : list of Spec
        One entry per lookup key, sorted by name.
    """
    return sorted(_table()[0].values(), key=lambda declared: declared.name)


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
    declared = table.get(name) or (qualified.get(f"{_normalise(dist)}:{short}") if sep else None)
    if declared is not None:
        return declared
    close = difflib.get_close_matches(name, table, n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ValueError(
        f"No estimator named {name!r} is registered.{hint} Registered: {sorted(table)}."
    )


@contextlib.contextmanager
def _watch_sigint():
    """Record whether a real ``SIGINT`` arrives while the block runs.

    Yields a dict whose ``"received"`` item turns True when the signal arrives.
    The handler in place is wrapped, not replaced, so Ctrl-C still raises
    :class:`KeyboardInterrupt` where it did. Outside the main thread, or when
    the handler is not a Python callable, a ``SIGINT`` cannot raise
    :class:`KeyboardInterrupt` there, so there is nothing to watch.
    """
    state = {"received": False}
    previous = None
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(Exception):
            current = signal.getsignal(signal.SIGINT)
            if callable(current):

                def handler(signum, frame):
                    state["received"] = True
                    return current(signum, frame)

                signal.signal(signal.SIGINT, handler)
                previous = current
    try:
        yield state
    finally:
        if previous is not None:
            with contextlib.suppress(Exception):
                signal.signal(signal.SIGINT, previous)


def _contained(func, *args, **kwargs):
    """Call plugin code; return ``(result, None)`` or ``(None, exception)``.

    Every exception is caught, :class:`BaseException` included, except a real
    user interrupt: when a ``SIGINT`` arrived during the call,
    :class:`KeyboardInterrupt` is raised (even if the plugin swallowed it).
    """
    with _watch_sigint() as state:
        try:
            result = func(*args, **kwargs)
        except BaseException as exc:  # a plugin may raise SystemExit or the like
            if state["received"]:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                raise KeyboardInterrupt from exc
            return None, exc
    if state["received"]:
        raise KeyboardInterrupt
    return result, None


_LOADED = {}
_IMPORTING = set()  # entries whose import is under way (it may call the registry)


def _import_class(declared):
    obj = importlib.metadata.EntryPoint(declared.name, declared.value, GROUP).load()
    if not (
        isinstance(obj, type) and issubclass(obj, BaseEstimator) and not inspect.isabstract(obj)
    ):
        raise TypeError(
            f"{declared.value} is {obj!r}, not a concrete scikit-learn estimator class "
            "(a subclass of sklearn.base.BaseEstimator)"
        )
    return obj


def _load(declared):
    """Import the class of ``declared`` once; cache the class or the failure."""
    with _LOCK:
        if declared.name in _LOADED:
            return _LOADED[declared.name]
        if declared.name in _IMPORTING:  # asked for by its own import: not a failure
            return PluginLoadError(
                f"skpapers: plugin {declared.name!r} ({declared.value}) is still being "
                "imported: its own import asked the registry for it."
            )
        _IMPORTING.add(declared.name)
        try:
            obj, exc = _contained(_import_class, declared)
        finally:
            _IMPORTING.discard(declared.name)
        if exc is None:
            _LOADED[declared.name] = obj
            return obj
        try:
            detail = str(exc)
        except BaseException:  # a plugin exception whose __str__ fails
            detail = "<unprintable>"
        error = PluginLoadError(
            f"skpapers: could not load plugin {declared.name!r} ({declared.value}) from "
            f"'{declared.dist} {declared.version}': {type(exc).__name__}: {detail}"
        )
        error.__cause__ = exc
        _LOADED[declared.name] = error
    _warn(str(error), stacklevel=3)
    return error


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
    if isinstance(loaded, BaseException):
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
    for declared in specs():
        if not (include_plugins or declared.builtin):
            continue
        loaded = _load(declared)
        if isinstance(loaded, BaseException):
            if on_error == "raise":
                raise loaded
            continue
        if mixins and not _contained(issubclass, loaded, mixins)[0]:
            continue
        result.append((declared.name, loaded))
    return result


def refresh():
    """Forget the cached metadata scan, loaded classes and emitted warnings.

    Call it after installing or removing a plugin in a running interpreter,
    or after changing ``SKPAPERS_DISABLE_PLUGINS``.
    """
    with _LOCK:
        _scan.cache_clear()
        _LOADED.clear()
        _EMITTED.clear()
