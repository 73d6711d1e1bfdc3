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

from sklearn.utils.estimator_checks import (
    _get_check_estimator_ids,
    check_estimator,
    estimator_checks_generator,
)

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

__all__ = [
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
    found = [spec for spec in registry.specs() if registry._normalise(spec.dist) == norm]
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
    for spec in _dist_specs(dist):
        try:
            cls = registry.get(spec.name)
        except registry.PluginLoadError as error:
            user = {} if callable(expected_failed_checks) else expected_failed_checks or {}
            yield spec.name, error, user.get(spec.name, {})
            continue
        builtin_xfails = PER_ESTIMATOR_XFAIL_CHECKS.get(spec.name, {}) if spec.builtin else {}
        for params in _param_sets(spec.name, cls, spec.builtin):
            estimator = cls(**params)
            if callable(expected_failed_checks):
                user = expected_failed_checks(estimator)
            else:
                user = (expected_failed_checks or {}).get(cls.__name__, {})
            yield spec.name, estimator, {**builtin_xfails, **(user or {})}


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


def check_plugin(dist, *, expected_failed_checks=None):
    """Run the plugin contract on every estimator of ``dist`` and report.

    Parameters
    ----------
    dist : str
        Distribution name of the plugin.
    expected_failed_checks : dict or callable, default=None
        As in :func:`parametrize_with_plugin_checks`.

    Returns
    -------
    report : list of dict
        One row per check with keys ``estimator``, ``check``, ``status``
        (``"passed"``, ``"failed"``, ``"xfail"`` or ``"skipped"``) and ``reason``.
    """
    rows = []
    for name, estimator, xfails in _cases(dist, expected_failed_checks):
        if isinstance(estimator, Exception):
            reason = xfails.get("load_plugin")
            status = "xfail" if reason else "failed"
            rows.append(_row(name, "load_plugin", status, reason or str(estimator)))
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SensitiveFeaturesWarning)
            results = check_estimator(
                estimator, expected_failed_checks=xfails, on_skip=None, on_fail=None
            )
        for result in results:
            exception = result["exception"]
            reason = result["expected_to_fail_reason"] if result["status"] == "xfail" else ""
            if not reason and exception is not None:
                reason = f"{type(exception).__name__}: {exception}"
            rows.append(_row(name, result["check_name"], result["status"], reason))
        for check in _skpapers_checks(name):
            check_name = _check_name(check)
            try:
                check(estimator)
                status, reason = "passed", ""
            except Exception as exc:
                status = "xfail" if check_name in xfails else "failed"
                reason = xfails.get(check_name) or f"{type(exc).__name__}: {exc}"
            rows.append(_row(name, check_name, status, reason))
    return rows


def _row(estimator, check, status, reason):
    return {"estimator": estimator, "check": check, "status": status, "reason": reason}
