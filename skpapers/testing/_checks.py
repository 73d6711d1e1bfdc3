# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""skpapers' own estimator checks, run next to scikit-learn's for every plugin.

Each check takes an unfitted estimator instance and raises ``AssertionError``
when the contract is broken.
"""

import inspect
import os
import pickle
import re
import warnings

import numpy as np
from sklearn.base import clone, is_regressor
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import get_tags

from skpapers import registry
from skpapers.exceptions import SensitiveFeaturesWarning

__all__ = [
    "check_clone_pickle_roundtrip",
    "check_html_repr",
    "check_numpydoc_sections",
    "check_pipeline_gridsearch_smoke",
    "check_registry_roundtrip",
    "check_routing_declared",
    "process_id_scorer",
]

_REQUIRED_SECTIONS = ("Parameters", "Attributes", "Examples")


def _smoke_data(estimator, n_samples=40, n_features=5, random_state=0):
    """Small, well-conditioned data fitting any registered estimator kind."""
    rng = np.random.default_rng(random_state)
    centres = rng.normal(scale=4.0, size=(3, n_features))
    X = centres[rng.integers(3, size=n_samples)] + rng.normal(size=(n_samples, n_features))
    if get_tags(estimator).input_tags.pairwise:
        sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        X = np.exp(-sq / sq.mean())
    y = None
    if is_regressor(estimator):
        y = np.tanh(X @ rng.normal(size=X.shape[1]) / np.sqrt(n_features))
        y = y + 0.01 * rng.normal(size=n_samples)
    return X, y


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SensitiveFeaturesWarning)
        return estimator.fit(X, y)


def _outputs(estimator, X, y):
    """Every deterministic output of a fitted estimator on ``X``."""
    out = {}
    for method in ("predict", "transform", "decision_function", "predict_proba"):
        if hasattr(estimator, method):
            out[method] = getattr(estimator, method)(X)
    if hasattr(estimator, "score"):
        out["score"] = estimator.score(X, y)
    if hasattr(estimator, "labels_"):
        out["labels_"] = estimator.labels_
    return out


def check_registry_roundtrip(estimator, *, name):
    """Check that the registry maps ``name`` to the estimator's class and back.

    Parameters
    ----------
    estimator : BaseEstimator
        Instance of the class registered under ``name``.
    name : str
        Registry name of the class.
    """
    cls = registry.get(name)
    assert cls is type(estimator), f"registry.get({name!r}) is {cls!r}, not {type(estimator)!r}"
    declared = next(declared for declared in registry.specs() if declared.name == name)
    module, _, attr = declared.value.partition(":")
    imported = __import__(module, fromlist=[attr])
    assert getattr(imported, attr) is cls, f"{declared.value} does not import {cls!r}"
    assert type(registry.create(name, **estimator.get_params(deep=False))) is cls


def check_clone_pickle_roundtrip(estimator):
    """Check that ``clone`` keeps parameters and pickling keeps predictions.

    Parameters
    ----------
    estimator : BaseEstimator
        Unfitted estimator instance.
    """
    cloned = clone(estimator)
    assert repr(cloned.get_params(deep=False)) == repr(estimator.get_params(deep=False))
    X, y = _smoke_data(estimator)
    fitted = _fit(cloned, X, y)
    restored = pickle.loads(pickle.dumps(fitted))
    expected, actual = _outputs(fitted, X, y), _outputs(restored, X, y)
    assert expected.keys() == actual.keys()
    for key, value in expected.items():
        np.testing.assert_allclose(
            np.asarray(actual[key], dtype=float),
            np.asarray(value, dtype=float),
            err_msg=f"{key} differs after a pickle round trip",
        )


def check_numpydoc_sections(estimator):
    """Check the class docstring for numpydoc Parameters, Attributes, Examples.

    Parameters
    ----------
    estimator : BaseEstimator
        Estimator instance whose class is inspected.
    """
    doc = inspect.getdoc(type(estimator)) or ""
    missing = [
        section
        for section in _REQUIRED_SECTIONS
        if not re.search(rf"^{section}\n-{{{len(section)}}}\s*$", doc, flags=re.MULTILINE)
    ]
    assert not missing, f"{type(estimator).__name__} docstring lacks sections {missing}"


def check_html_repr(estimator):
    """Check that the HTML representation renders before and after fitting.

    Parameters
    ----------
    estimator : BaseEstimator
        Unfitted estimator instance.
    """
    name = type(estimator).__name__
    assert name in estimator._repr_html_()
    X, y = _smoke_data(estimator)
    assert name in _fit(clone(estimator), X, y)._repr_html_()


def check_pipeline_gridsearch_smoke(estimator):
    """Check a fit inside a ``Pipeline`` under a 2-point ``GridSearchCV``.

    Parameters
    ----------
    estimator : BaseEstimator
        Unfitted estimator instance.
    """
    X, y = _smoke_data(estimator)
    if get_tags(estimator).input_tags.pairwise:
        model = clone(estimator)
        name, value = next(iter(estimator.get_params(deep=False).items()))
        grid = {name: [value, value]}
    else:  # a step that keeps the data: some models refuse centred data (UnlabeledPCA)
        model = make_pipeline(FunctionTransformer(), clone(estimator))
        grid = {"functiontransformer__validate": [False, True]}
    scoring = None if hasattr(estimator, "score") else _constant_scorer
    search = GridSearchCV(model, grid, cv=2, scoring=scoring, error_score="raise")
    _fit(search, X, y)
    assert len(search.cv_results_["params"]) == 2
    assert hasattr(search, "best_estimator_")


def _constant_scorer(estimator, X, y=None):
    """Scorer for estimators without ``score``: the smoke test checks fitting only."""
    return 0.0


def check_routing_declared(estimator):
    """Check that every metadata keyword of ``fit`` can be requested for routing.

    Parameters
    ----------
    estimator : BaseEstimator
        Estimator instance.
    """
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    metadata = [
        p.name
        for p in inspect.signature(type(estimator).fit).parameters.values()
        if p.name not in ("self", "X", "y") and p.kind not in skip
    ]
    if not metadata:
        return
    assert hasattr(estimator, "set_fit_request"), "fit takes metadata but has no set_fit_request"
    request = estimator.get_metadata_routing().fit.requests
    missing = sorted(set(metadata) - set(request))
    assert not missing, f"fit metadata {missing} cannot be requested with set_fit_request"


def process_id_scorer(estimator, X, y=None):
    """Scorer returning the id of the process it runs in.

    Use it as one metric of a multi-metric ``GridSearchCV`` to check on which
    processes (e.g. Dask workers) the fits ran.

    Parameters
    ----------
    estimator : BaseEstimator
        Fitted estimator (ignored).
    X : array-like
        Validation data (ignored).
    y : array-like, default=None
        Ignored.

    Returns
    -------
    pid : float
        ``os.getpid()`` of the scoring process.
    """
    return float(os.getpid())
