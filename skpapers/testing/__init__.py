# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Contract tests for skpapers estimators and third-party plugins.

A plugin author runs, in the plugin's own pytest suite::

    from skpapers.testing import parametrize_with_plugin_checks

    @parametrize_with_plugin_checks(dist="my-plugin")
    def test_plugin_contract(estimator, check):
        check(estimator)

Every estimator the distribution registers under the ``skpapers.estimators``
entry-point group is instantiated from its ``get_test_params()`` (a dict or a
list of dicts; defaults otherwise) and run through scikit-learn's
:func:`~sklearn.utils.estimator_checks.parametrize_with_checks` plus skpapers'
own checks (registry round trip, clone and pickle round trip, ``Pipeline`` +
``GridSearchCV`` smoke fit, HTML repr, numpydoc sections, metadata routing).
An entry that fails to load becomes one failing test naming the cause.
"""

import functools
import warnings

from sklearn.utils.estimator_checks import estimator_checks_generator

from skpapers import registry
from skpapers.exceptions import SensitiveFeaturesWarning, SkpapersPluginWarning
from skpapers.testing._checks import (
    check_clone_pickle_roundtrip,
    check_html_repr,
    check_numpydoc_sections,
    check_pipeline_gridsearch_smoke,
    check_registry_roundtrip,
    check_routing_declared,
    process_id_scorer,
)
from skpapers.testing._instance_generator import PER_ESTIMATOR_XFAIL_CHECKS, _param_sets
from skpapers.testing._partitions import (
    assert_allclose_up_to_column_order,
    assert_same_partition,
)
from skpapers.utils._sklearn import _get_check_estimator_ids

__all__ = [
    "assert_allclose_up_to_column_order",
    "assert_same_partition",
    "check_clone_pickle_roundtrip",
    "check_html_repr",
    "check_numpydoc_sections",
    "check_pipeline_gridsearch_smoke",
    "check_plugin",
    "check_registry_roundtrip",
    "check_routing_declared",
    "parametrize_with_plugin_checks",
    "process_id_scorer",
]


def _dist_specs(dist):
    norm = registry._normalise(dist)
    found = [e for e in registry.specs() if registry._normalise(e.dist) == norm]
    if not found:
        raise ValueError(
            f"Distribution {dist!r} registers no estimator in the {registry.GROUP!r} "
            f"entry-point group; registered: {sorted({s.dist for s in registry.specs()})}."
        )
    return found


def _cases(dist, expected_failed_checks):
    """List ``(name, estimator or load error, expected failures)`` for ``dist``.

    Registry warnings are silenced here: a load failure becomes a failing case.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkpapersPluginWarning)
        return list(_iter_cases(dist, expected_failed_checks))


def _iter_cases(dist, expected_failed_checks):
    for declared in _dist_specs(dist):
        try:
            cls = registry.get(declared.name)
        except registry.PluginLoadError as error:
            user = {} if callable(expected_failed_checks) else expected_failed_checks or {}
            yield declared.name, error, user.get(declared.name, {})
            continue
        for params in _param_sets(declared.name, cls, declared.builtin):
            estimator = cls(**params)
            yield declared.name, estimator, _xfails(declared, estimator, expected_failed_checks)


def _xfails(declared, estimator, expected_failed_checks):
    """Return the expected failures of one instance: the built-in list plus the user's."""
    builtin = PER_ESTIMATOR_XFAIL_CHECKS.get(declared.name, {}) if declared.builtin else {}
    if callable(expected_failed_checks):
        user = expected_failed_checks(estimator)
    else:
        user = (expected_failed_checks or {}).get(type(estimator).__name__, {})
    return {**builtin, **(user or {})}


def _skpapers_checks(name):
    return [
        functools.partial(check_registry_roundtrip, name=name),
        check_clone_pickle_roundtrip,
        check_pipeline_gridsearch_smoke,
        check_html_repr,
        check_numpydoc_sections,
        check_routing_declared,
    ]


def _check_name(check):
    return getattr(check, "func", check).__name__


def _raise(error, estimator=None):
    raise error


def parametrize_with_plugin_checks(dist, *, expected_failed_checks=None, sklearn_checks=True):
    """Pytest decorator running the plugin contract on every estimator of ``dist``.

    Parameters
    ----------
    dist : str
        Distribution name of the plugin (as in its ``pyproject.toml``).
    expected_failed_checks : dict or callable, default=None
        ``{class name: {check name: reason}}``, or a callable taking an
        estimator and returning ``{check name: reason}``. Those checks are
        marked ``xfail``; a reason is required for each.
    sklearn_checks : bool, default=True
        Whether to include scikit-learn's checks, or only skpapers' own.

    Returns
    -------
    decorator : callable
        A ``pytest.mark.parametrize("estimator, check", ...)`` decorator.
    """
    import pytest

    params = []
    for name, estimator, xfails in _cases(dist, expected_failed_checks):
        if isinstance(estimator, Exception):
            check = functools.partial(_raise, estimator)
            reason = xfails.get("load_plugin")
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            params.append(pytest.param(None, check, id=f"{name}-load_plugin", marks=marks))
            continue
        if sklearn_checks:
            params.extend(
                estimator_checks_generator(
                    estimator, expected_failed_checks=xfails, mark="xfail"
                )
            )
        for check in _skpapers_checks(name):
            reason = xfails.get(_check_name(check))
            marks = [pytest.mark.xfail(reason=reason)] if reason else []
            params.append(pytest.param(estimator, check, marks=marks))
    return pytest.mark.parametrize("estimator, check", params, ids=_get_check_estimator_ids)


def check_plugin(dist, *, expected_failed_checks=None, time_limit=None):
    """Run the plugin contract on every estimator of ``dist`` and report.

    Every entry and every check runs contained: an entry that cannot be
    imported or instantiated, or a check that raises anything (``SystemExit``
    from a ``fit`` that calls ``sys.exit`` included), becomes a failed row and
    the run carries on. A real Ctrl-C still interrupts it.

    With ``time_limit``, the checks run in a child process instead (as
    ``python -m skpapers check`` does): a check that ends the process
    (``os._exit``, a crash) or does not finish within ``time_limit`` seconds
    becomes a failed row, a new child runs the remaining checks, and the
    temporary files of the checks go to a folder removed at the end.

    Parameters
    ----------
    dist : str
        Distribution name of the plugin.
    expected_failed_checks : dict or callable, default=None
        As in :func:`parametrize_with_plugin_checks`; only a dict with a
        ``time_limit`` (it is sent to the child process).
    time_limit : float, default=None
        Seconds each check may take, in a child process; None runs the checks
        in this process, without a limit.

    Returns
    -------
    report : list of dict
        One row per check with keys ``estimator``, ``check``, ``status``
        (``"passed"``, ``"failed"``, ``"xfail"`` or ``"skipped"``) and ``reason``.
    """
    if time_limit is not None:
        from skpapers.testing._isolated import check_in_child_processes

        _dist_specs(dist)  # an unknown distribution is a ValueError here
        return check_in_child_processes(dist, expected_failed_checks, time_limit)
    rows = []
    with warnings.catch_warnings():
        # a load failure becomes a failed row of the report, not a warning too
        warnings.simplefilter("ignore", SkpapersPluginWarning)
        for declared in _dist_specs(dist):
            rows.extend(_check_entry(declared, expected_failed_checks))
    return rows


def _describe(exc):
    try:
        detail = str(exc)
    except BaseException:  # a plugin exception whose __str__ fails
        detail = "<unprintable>"
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _run_check(name, check, estimator, xfails):
    """Run one check; any exception of the plugin (``SystemExit`` too) is a failure."""
    from unittest import SkipTest

    check_name = _check_name(check)
    _, exc = registry._contained(check, estimator)
    if exc is None:
        return _row(name, check_name, "passed", "")
    if isinstance(exc, SkipTest):
        return _row(name, check_name, "skipped", _describe(exc))
    if check_name in xfails:
        return _row(name, check_name, "xfail", xfails[check_name])
    return _row(name, check_name, "failed", _describe(exc))


def _failed(name, step, exc):
    """Return a unit whose row is a failure found while collecting the checks."""
    row = _row(name, step, "failed", exc if isinstance(exc, str) else _describe(exc))
    return name, step, lambda: row


def _entry_units(declared, expected_failed_checks):
    """Yield the contract of one entry as ``(estimator, check, run)`` units.

    ``run()`` returns the unit's report row. Collecting the units (importing,
    instantiating) and running them call plugin code; failures stay inside
    the entry.
    """
    try:
        cls = registry.get(declared.name)
    except registry.PluginLoadError as error:
        yield _failed(declared.name, "load_plugin", str(error))
        return
    param_sets, exc = registry._contained(_param_sets, declared.name, cls, declared.builtin)
    if exc is not None:
        yield _failed(declared.name, "get_test_params", exc)
        return
    for params in param_sets:
        estimator, exc = registry._contained(cls, **params)
        if exc is not None:
            yield _failed(declared.name, "instantiate", exc)
            continue
        xfails, exc = registry._contained(_xfails, declared, estimator, expected_failed_checks)
        if exc is not None:
            yield _failed(declared.name, "expected_failed_checks", exc)
            continue
        checks, exc = registry._contained(
            lambda est, xf=xfails: list(
                estimator_checks_generator(est, expected_failed_checks=xf, mark=None)
            ),
            estimator,
        )
        if exc is not None:
            yield _failed(declared.name, "estimator_checks", exc)
            checks = []
        checks += [(estimator, check) for check in _skpapers_checks(declared.name)]
        for est, check in checks:
            yield (
                declared.name,
                _check_name(check),
                functools.partial(_run_check, declared.name, check, est, xfails),
            )


def _check_entry(declared, expected_failed_checks):
    """Rows of the plugin contract for one entry, run in this process."""
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SensitiveFeaturesWarning)
        for _, _, run in _entry_units(declared, expected_failed_checks):
            rows.append(run())
    return rows


def _row(estimator, check, status, reason):
    return {"estimator": estimator, "check": check, "status": status, "reason": reason}
