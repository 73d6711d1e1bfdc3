# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Common tests run on every estimator skpapers registers through its entry points.

A new built-in is covered as soon as its entry point and its ``INIT_PARAMS``
entry exist: scikit-learn's checks and the plugin contract, a fuzz of bad
inputs, determinism under ``random_state`` and a grid search on a real Dask
cluster.
"""

import os
import warnings

import joblib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV
from sklearn.utils import get_tags

from skpapers import registry
from skpapers.exceptions import SkpapersPluginWarning
from skpapers.testing import parametrize_with_plugin_checks
from skpapers.testing._checks import (
    _constant_scorer,
    _fit,
    _outputs,
    _smoke_data,
    process_id_scorer,
)
from skpapers.testing._instance_generator import _param_sets

# the checks fit on random data: no protected groups, and far from any subspace
pytestmark = [
    pytest.mark.filterwarnings("ignore::skpapers.exceptions.SensitiveFeaturesWarning"),
    pytest.mark.filterwarnings("ignore::skpapers.exceptions.FlaggingWarning"),
]


def _builtin_instances():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkpapersPluginWarning)
        pairs = registry.all_estimators(include_plugins=False, on_error="raise")
    return [
        pytest.param(cls(**params), id=f"{name}-{i}")
        for name, cls in pairs
        for i, params in enumerate(_param_sets(name, cls, builtin=True))
    ]


BUILTINS = _builtin_instances()


def test_every_builtin_is_registered_and_tested():
    names = {spec.name for spec in registry.specs() if spec.builtin}
    assert names == {"upca", "fair_hierarchical", "transport_clustering", "robust_sim"}
    assert len(BUILTINS) >= len(names)


@parametrize_with_plugin_checks(dist="skpapers")
def test_sklearn_and_plugin_contract(estimator, check):
    check(estimator)


_FIT_CORRUPTIONS = ("nan_cell", "nan_row", "inf_cell", "ndim1", "ndim3", "empty", "one_sample")
_KINDS = (*_FIT_CORRUPTIONS, "wrong_n_features", "invalid_param")


def _corrupt(kind, X, y, data):
    """Return a bad copy of (X, y) for a corruption kind of ``fit``."""
    X = X.copy()
    i = data.draw(st.integers(0, X.shape[0] - 1), label="row")
    j = data.draw(st.integers(0, X.shape[1] - 1), label="column")
    if kind == "nan_cell":
        X[i, j] = np.nan
    elif kind == "nan_row":
        X[i] = np.nan
    elif kind == "inf_cell":
        X[i, j] = data.draw(st.sampled_from([np.inf, -np.inf]), label="sign")
    elif kind == "ndim1":
        X = X[:, 0]
    elif kind == "ndim3":
        X = X[:, :, None]
    elif kind == "empty":
        X, y = X[:0], None if y is None else y[:0]
    elif kind == "one_sample":
        X, y = X[:1], None if y is None else y[:1]
    return X, y


def _assert_clear_error(call, *args):
    with pytest.raises((ValueError, TypeError)) as excinfo:
        call(*args)
    assert len(str(excinfo.value)) > 10, f"uninformative message: {excinfo.value!r}"


@pytest.mark.parametrize("estimator", BUILTINS)
@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=st.data())
def test_bad_input_gives_clear_error_and_leaves_input_alone(estimator, data):
    kind = data.draw(st.sampled_from(_KINDS), label="kind")
    estimator = clone(estimator)
    X, y = _smoke_data(estimator)
    if kind == "nan_cell" and get_tags(estimator).input_tags.allow_nan:
        kind = "nan_row"  # NaN means "missing" here; a row with nothing observed is bad
    if kind in _FIT_CORRUPTIONS:
        X_bad, y_bad = _corrupt(kind, X, y, data)
        snapshot = X_bad.copy()
        _assert_clear_error(_fit, estimator, X_bad, y_bad)
        np.testing.assert_array_equal(X_bad, snapshot)
    elif kind == "wrong_n_features":
        _fit(estimator, X, y)
        methods = [m for m in ("predict", "transform", "score") if hasattr(estimator, m)]
        if not methods or get_tags(estimator).input_tags.pairwise:
            return  # nothing takes new samples after fit
        method = data.draw(st.sampled_from(methods), label="method")
        X_bad = X[:, :-1].copy()
        args = (X_bad,) if method != "score" or y is None else (X_bad, y)
        _assert_clear_error(getattr(estimator, method), *args)
        np.testing.assert_array_equal(X_bad, X[:, :-1])
    else:
        name = data.draw(st.sampled_from(sorted(estimator.get_params())), label="param")
        estimator.set_params(**{name: "__not_a_valid_value__"})
        _assert_clear_error(_fit, estimator, X, y)


@pytest.mark.parametrize("estimator", BUILTINS)
def test_deterministic_under_random_state_and_inputs_unchanged(estimator):
    X, y = _smoke_data(estimator)
    X.setflags(write=False)
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=0)
    first = _outputs(_fit(clone(estimator), X, y), X, y)
    second = _outputs(_fit(clone(estimator), X, y), X, y)
    assert first.keys() == second.keys() and first
    for key in first:
        np.testing.assert_array_equal(first[key], second[key], err_msg=key)
    np.testing.assert_array_equal(X, _smoke_data(estimator)[0])


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


@pytest.mark.dask
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning")
@pytest.mark.parametrize("estimator", BUILTINS)
def test_grid_search_runs_on_dask_workers(estimator, dask_client):
    X, y = _smoke_data(estimator)
    name, value = next(iter(estimator.get_params(deep=False).items()))
    main = check_scoring(estimator) if hasattr(estimator, "score") else _constant_scorer
    search = GridSearchCV(
        clone(estimator),
        {name: [value, value]},
        cv=2,
        scoring={"main": main, "pid": process_id_scorer},
        refit="main",
        n_jobs=-1,
        error_score="raise",
    )
    with joblib.parallel_config(backend="dask"):
        _fit(search, X, y)
    fit_pids = {search.cv_results_[f"split{k}_test_pid"][i] for k in range(2) for i in range(2)}
    worker_pids = {float(pid) for pid in dask_client.run(os.getpid).values()}
    assert fit_pids <= worker_pids, (fit_pids, worker_pids)
    assert float(os.getpid()) not in fit_pids


@pytest.mark.parametrize(
    "estimator, function",
    [
        ("skpapers.decomposition:UnlabeledPCA", "skpapers.decomposition:unlabeled_pca"),
        ("skpapers.cluster:FairHierarchicalClustering", "skpapers.cluster:fair_hierarchical_tree"),
        ("skpapers.cluster:TransportClustering", "skpapers.cluster:transport_clustering"),
        (
            "skpapers.linear_model:RobustSingleIndexRegressor",
            "skpapers.linear_model:robust_single_index",
        ),
    ],
)
def test_function_defaults_match_the_estimator(estimator, function):
    """The functional core and the estimator declare the same parameters and defaults."""
    import importlib
    import inspect

    def load(path):
        module, name = path.split(":")
        return getattr(importlib.import_module(module), name)

    est_params = inspect.signature(load(estimator).__init__).parameters
    fun_params = inspect.signature(load(function)).parameters
    for name, param in est_params.items():
        if name == "self" or (name == "n_clusters" and "fair" in function):
            continue  # the flat cut of the fair tree is the estimator's labels_
        assert name in fun_params, f"{function} lacks the parameter {name!r}"
        assert fun_params[name].default == param.default, (
            f"{name}: {function} defaults to {fun_params[name].default!r}, "
            f"{estimator} to {param.default!r}"
        )


@pytest.mark.parametrize("name", sorted(registry._BUILTINS))
def test_integer_parameters_refuse_booleans(name):
    from numbers import Integral

    from sklearn.utils._param_validation import InvalidParameterError

    from skpapers.utils import Interval

    cls = registry.get(name)
    counts = [
        param
        for param, constraints in cls._parameter_constraints.items()
        if any(isinstance(c, Interval) and c.type is Integral for c in constraints)
        and "boolean" not in constraints
    ]
    assert counts, "every estimator has an integer parameter"
    X = np.random.default_rng(0).normal(size=(30, 3))
    for param in counts:
        required = {"n_clusters": 2, "n_components": 1}
        est = registry.create(name, **{k: v for k, v in required.items() if k in counts})
        with pytest.raises(InvalidParameterError, match=f"'{param}' parameter.*Got True"):
            est.set_params(**{param: True}).fit(X, np.tanh(X[:, 0]))
