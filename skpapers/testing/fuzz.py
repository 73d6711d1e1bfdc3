# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Bad-input fuzz of the public estimators and functions.

A case is a call of a public estimator (``fit`` then its prediction methods) or
function on generated input: arrays of every dtype, shape and layout, pandas
frames with nullable or categorical columns, sparse matrices, extremes (NaN,
infinity, 1e300, 1e-300, constants, duplicates), read-only or non-contiguous
arrays, metadata arrays of the wrong length or with missing values, and
invalid parameters. Every case ends in one of five outcomes:

- ``"ok"``: a finite result;
- ``"clean error"``: a ``ValueError`` or ``TypeError`` with a message;
- ``"crash"``: any other exception (or an empty message);
- ``"silent"``: a result with NaN or infinity, an input array modified, or
  (estimators) a different answer when X is given in other units (X times a
  power of two from 2**-300 to 2**300, compared up to the scale);
- ``"hang"``: no answer within the time limit.

:func:`run_fuzz` drives the cases with hypothesis and returns the outcomes;
``python -m skpapers.testing.fuzz`` prints the table of outcomes per area, and
the test suite asserts that only the first two occur.
"""

import math
import signal
import threading
import time
import warnings
from collections import Counter

import numpy as np
import pandas as pd
from scipy import sparse

__all__ = ["AREAS", "classify", "run_fuzz"]

_SIZES = (0, 1, 2, 3, 8, 24)
_KINDS = (
    "normal", "nan", "inf", "huge", "tiny", "constant", "duplicates", "zeros", "mixed_scale",
)
_DTYPES = ("float64", "float32", "int64", "bool", "complex", "object_str")
_CONTAINERS = (
    "ndarray", "list", "frame", "frame_nullable", "frame_categorical", "csr", "readonly",
    "noncontiguous", "fortran",
)


class _Timeout(Exception):
    pass


class _Recorder:
    """Hypothesis' ``data`` object that also records what each case drew."""

    def __init__(self, data):
        self.data, self.draws = data, []

    def draw(self, strategy, label=None):
        value = self.data.draw(strategy, label=label)
        self.draws.append(f"{label}={value!r:.40}")
        return value


def _values(data, n, d, kind):
    from hypothesis import strategies as st

    seed = data.draw(st.integers(0, 2**16), label="seed")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind == "nan" and X.size:
        X.flat[rng.integers(X.size)] = np.nan
    elif kind == "inf" and X.size:
        X.flat[rng.integers(X.size)] = np.inf
    elif kind == "huge":
        X *= 1e300
    elif kind == "tiny":
        X *= 1e-300
    elif kind == "constant":
        X[:] = 3.0
    elif kind == "duplicates" and n:
        X[:] = X[0]
    elif kind == "zeros":
        X[:] = 0.0
    elif kind == "mixed_scale" and d:
        X[:, 0] *= 1e12
    return X


def _cast(X, dtype):
    if dtype == "complex":
        return X.astype(np.complex128) + 1j
    if dtype == "object_str":
        return X.astype(str).astype(object)
    with np.errstate(invalid="ignore", over="ignore"):
        if dtype in ("int64", "bool"):
            return np.nan_to_num(X, nan=0, posinf=1, neginf=-1).astype(dtype)
        return X.astype(dtype)


def _container(X, container):
    if X.ndim != 2:
        return X
    if container == "list":
        return X.tolist()
    if container == "frame":
        return pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    if container == "frame_nullable" and X.dtype.kind == "f":
        moderate = np.clip(np.nan_to_num(X), -1e6, 1e6)
        frame = pd.DataFrame(moderate, columns=[f"f{j}" for j in range(X.shape[1])])
        frame = frame.round().astype("Int64")
        if frame.size:
            frame.iat[0, 0] = pd.NA
        return frame
    if container == "frame_categorical" and X.shape[1]:
        frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
        frame["f0"] = frame["f0"].astype(str).astype("category")
        return frame
    if container == "csr" and X.dtype.kind in "fiub":
        return sparse.csr_matrix(X)
    if container == "readonly":
        X = np.array(X)
        X.setflags(write=False)
        return X
    if container == "noncontiguous":
        wide = np.repeat(X, 2, axis=1) if X.ndim == 2 else X
        return wide[:, ::2]
    if container == "fortran":
        return np.asfortranarray(X)
    return X


def draw_array(data, *, label="X", rows=None, columns=None):
    """Draw one input array: well-formed with extreme values half of the time, else anything.

    Well-formed: 8 or 24 rows (or ``rows``), 2-5 columns (or ``columns``), real
    dtype, a container scikit-learn accepts, values normal, huge, tiny,
    constant, duplicated or of mixed scale. Otherwise every size, value, dtype,
    container and dimensionality of the module docstring.
    """
    from hypothesis import strategies as st

    valid = data.draw(st.booleans(), label=f"{label} well-formed")
    if valid:
        n = rows if rows is not None else data.draw(st.sampled_from((8, 24)), label=f"{label} rows")
        d = columns if columns is not None else data.draw(
            st.sampled_from((2, 3, 5)), label=f"{label} columns"
        )
        kind = data.draw(
            st.sampled_from(("normal",) * 3 + _KINDS[3:]), label=f"{label} values"
        )
        dtype = data.draw(st.sampled_from(("float64", "float64", "float32")), label="dtype")
        container = data.draw(
            st.sampled_from(("ndarray", "list", "frame", "readonly", "noncontiguous", "fortran")),
            label=f"{label} container",
        )
        return _container(_cast(_values(data, n, d, kind), dtype), container)
    n = data.draw(st.sampled_from(_SIZES), label=f"{label} rows")
    d = data.draw(st.sampled_from((0, 1, 2, 3, 5)), label=f"{label} columns")
    kind = data.draw(st.sampled_from(_KINDS), label=f"{label} values")
    dtype = data.draw(st.sampled_from(("float64",) * 6 + _DTYPES), label=f"{label} dtype")
    container = data.draw(
        st.sampled_from(("ndarray",) * 6 + _CONTAINERS), label=f"{label} container"
    )
    ndim = data.draw(st.sampled_from((2,) * 8 + (1, 3)), label=f"{label} ndim")
    X = _cast(_values(data, n, d, kind), dtype)
    if ndim == 1:
        X = X.ravel()
    elif ndim == 3:
        X = X[..., None]
    return _container(X, container)


def draw_vector(data, n, *, label):
    """Draw a metadata vector: right or wrong length, missing values, strings."""
    from hypothesis import strategies as st

    choice = data.draw(
        st.sampled_from(
            ("none",) * 3 + ("good",) * 3
            + ("short", "long", "nan", "negative", "zeros", "inf", "strings", "2d", "pd_na")
        ),
        label=label,
    )
    rng = np.random.default_rng(n)
    v = rng.uniform(0.5, 2.0, size=n)
    if choice == "none":
        return None
    if choice == "short":
        return v[:-1]
    if choice == "long":
        return np.concatenate([v, [1.0]])
    if choice == "nan" and n:
        v[0] = np.nan
    elif choice == "negative" and n:
        v[0] = -1.0
    elif choice == "zeros":
        v[:] = 0.0
    elif choice == "inf" and n:
        v[0] = np.inf
    elif choice == "strings":
        return np.array([f"s{i}" for i in range(n)], dtype=object)
    elif choice == "2d":
        return v[:, None]
    elif choice == "pd_na":
        series = pd.Series(v, dtype="Float64")
        if n:
            series.iloc[0] = pd.NA
        return series
    return v


def _n_rows(X):
    """Count the rows of any drawn input (0 when it has none)."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) else 0
    return len(X) if hasattr(X, "__len__") else 0


def _groups(data, n):
    from hypothesis import strategies as st

    choice = data.draw(
        st.sampled_from(("two", "two", "one", "many", "none_label", "short", "strings2d")),
        label="sensitive_features",
    )
    labels = np.array(["a", "b"] * n)[:n].astype(object)
    if choice == "one":
        return np.array(["a"] * n, dtype=object)
    if choice == "many":
        return np.arange(n)
    if choice == "none_label" and n:
        labels[0] = None
        return labels
    if choice == "short":
        return labels[:-1]
    if choice == "strings2d":
        return np.stack([labels, labels], axis=1)
    return labels


def _finite(value):
    """Tell whether every number in ``value`` (array, frame, tuple, scalar) is finite."""
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, (pd.DataFrame, pd.Series)):
        value = value.to_numpy()
    if sparse.issparse(value):
        value = value.data
    if hasattr(value, "__dataclass_fields__"):
        return all(_finite(getattr(value, f)) for f in value.__dataclass_fields__)
    arr = np.asarray(value) if not callable(value) else np.zeros(0)
    if arr.dtype.kind in "fc":
        return bool(np.all(np.isfinite(arr)))
    return True


def _snapshot(args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append((a, a.copy()))
        elif isinstance(a, pd.DataFrame):
            out.append((a, a.copy(deep=True)))
        elif sparse.issparse(a):
            out.append((a, a.copy()))
    return out


def _mutated(snapshot):
    for obj, before in snapshot:
        if isinstance(obj, pd.DataFrame):
            if not obj.equals(before):
                return True
        elif sparse.issparse(obj):
            if (obj != before).nnz:
                return True
        elif not np.array_equal(obj, before, equal_nan=obj.dtype.kind in "fc"):
            return True
    return False


def classify(call, inputs, time_limit=20.0):
    """Run ``call()`` and return ``(outcome, detail)`` (see the module docstring).

    ``inputs`` are the arrays passed in, checked for modification afterwards.
    The time limit uses ``SIGALRM`` in the main thread (no limit elsewhere).
    """
    snapshot = _snapshot(inputs)
    use_alarm = threading.current_thread() is threading.main_thread() and hasattr(
        signal, "SIGALRM"
    )

    def on_alarm(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm) if use_alarm else None
    if use_alarm:
        signal.setitimer(signal.ITIMER_REAL, time_limit)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                result = call()
    except _Timeout:
        return "hang", f"no answer after {time_limit:.0f} s"
    except (ValueError, TypeError) as error:
        if not str(error).strip():
            return "crash", f"{type(error).__name__} without a message"
        return "clean error", f"{type(error).__name__}: {str(error)[:120]}"
    except Exception as error:  # noqa: BLE001 - classifying every failure is the point
        return "crash", f"{type(error).__name__}: {str(error)[:160]}"
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if _mutated(snapshot):
        return "silent", "an input array was modified"
    if not _finite(result):
        return "silent", "the result holds NaN or infinity"
    return "ok", f"{time.perf_counter() - t0:.2f} s"


# ------------------------------------------------------------------ units
class _UnitsDiffer(Exception):
    pass


# exponents of the change of units c = 2**k: exact in floating point, so a
# scale-free estimator gives the same answer (up to the scale) bit for bit
_UNIT_EXPONENTS = (-300, -60, 60, 300)


def _units_check(est, fit_args, fit_kwargs, scaled, same):
    """Return ``check(c)``: refit on the ``scaled`` inputs times c and compare.

    ``scaled`` names positions of ``fit_args`` and keys of ``fit_kwargs``;
    ``same(reference, rescaled, c)`` returns what differs, or None. Only
    float64 arrays whose magnitudes stay in [1e-250, 1e250] are rescaled;
    ``check`` returns False when that does not hold (nothing checked) and
    raises ``_UnitsDiffer`` when the answers differ.
    """
    from sklearn.base import clone

    def values():
        for key in scaled:
            yield fit_args[key] if isinstance(key, int) else fit_kwargs.get(key)

    def check(c):
        arrays = [a for a in values() if a is not None]
        for a in arrays:
            if type(a) is not np.ndarray or a.dtype != np.float64 or not np.isfinite(a).all():
                return False
            nonzero = np.abs(a[a != 0])
            if nonzero.size and (nonzero.max() * c > 1e250 or nonzero.min() * c < 1e-250):
                return False
        seed = {"random_state": 0} if "random_state" in est.get_params() else {}
        args = [a * c if i in scaled and a is not None else a for i, a in enumerate(fit_args)]
        kwargs = {k: v * c if k in scaled and v is not None else v for k, v in fit_kwargs.items()}
        reference = clone(est).set_params(**seed).fit(*fit_args, **fit_kwargs)
        rescaled = clone(est).set_params(**seed).fit(*args, **kwargs)
        differs = same(reference, rescaled, c)
        if differs:
            raise _UnitsDiffer(differs)
        return True

    return check


def _same_subspace(a, b, c):
    P, Q = a.components_.T @ a.components_, b.components_.T @ b.components_
    return None if np.allclose(P, Q, atol=1e-6) else "components_ (the subspace)"


def _same_tree(a, b, c):
    if not np.array_equal(a.linkage_matrix_, b.linkage_matrix_):
        return "the tree (linkage_matrix_)"
    return None


def _same_labels(a, b, c):
    return None if np.array_equal(a.labels_, b.labels_) else "labels_"


def _same_index(a, b, c):
    scale = np.max(np.abs(a.coef_), initial=1e-300)
    if not np.allclose(b.coef_ * c, a.coef_, rtol=1e-6, atol=1e-9 * scale):
        return "coef_ * c"
    if not np.allclose(b.intercept_, a.intercept_, rtol=1e-6, atol=1e-9):
        return "intercept_"
    return None


# ------------------------------------------------------------------ areas
def _fit_and_use(est, fit_args, fit_kwargs, methods, units=None):
    """Return the case's call; ``units = (scaled, same)`` attaches its units check."""

    def call():
        est.fit(*fit_args, **fit_kwargs)
        out = []
        for name, args in methods:
            out.append(getattr(est, name)(*args))
        fitted = {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}
        return out, {k: v for k, v in fitted.items() if isinstance(v, (float, np.ndarray))}

    if units is not None:
        call.units = _units_check(est, fit_args, fit_kwargs, *units)
    return call


def _case_upca(data):
    from hypothesis import strategies as st

    from skpapers.decomposition import UnlabeledPCA

    X = draw_array(data)
    params = data.draw(
        st.sampled_from(
            [
                {"n_components": 1, "max_iter": 50},
                {"n_components": 2, "max_iter": 50, "stage2": "l1"},
                {"n_components": 1, "stage1": "pca", "stage2": "pl", "max_iter": 20},
                {"n_components": 1, "stage2": "hard_em", "random_state": 0, "max_iter": 20},
                {"n_components": 1, "n_jobs": 0},
                {"n_components": 0},
                {"n_components": 1, "lsrf_tol": "auto", "restore_samples": "all"},
            ]
        ),
        label="params",
    )
    est = UnlabeledPCA(**params)
    methods = [("transform", (X,)), ("restore", (X,))]
    return _fit_and_use(est, (X,), {}, methods, units=((0,), _same_subspace)), (X,)


def _case_fair(data):
    from hypothesis import strategies as st

    from skpapers.cluster import FairHierarchicalClustering

    X = draw_array(data)
    n = _n_rows(X)
    s = _groups(data, n)
    params = data.draw(
        st.sampled_from(
            [
                {},
                {"method": "reduction", "h": 8},
                {"h": 6, "k": 3},
                {"epsilon": 0.1, "n_clusters": 2},
                {"similarity": "rbf", "linkage": "single"},
                {"similarity": "precomputed"},
                {"h": 5, "k": 2},
            ]
        ),
        label="params",
    )
    est = FairHierarchicalClustering(**params)
    call = _fit_and_use(est, (X,), {"sensitive_features": s}, [], units=((0,), _same_tree))
    return call, (X, s)


def _case_transport(data):
    from hypothesis import strategies as st

    from skpapers.cluster import TransportClustering

    X = draw_array(data)
    two_sided = data.draw(st.booleans(), label="two_sided")
    Y = draw_array(data, label="Y") if two_sided else None
    n = _n_rows(X)
    m = _n_rows(Y) if Y is not None else n
    w = draw_vector(data, n, label="sample_weight")
    v = draw_vector(data, m, label="target_weight") if two_sided else None
    params = data.draw(
        st.sampled_from(
            [
                {"n_clusters": 2, "max_iter": 20},
                {"n_clusters": 2, "max_iter": 20, "registration": "sinkhorn"},
                {"n_clusters": 3, "max_iter": 20, "metric": "euclidean"},
                {"n_clusters": 2, "max_iter": 20, "metric": "precomputed"},
                {"n_clusters": 1, "max_iter": 5, "both_sides": False},
            ]
        ),
        label="params",
    )
    est = TransportClustering(**params)
    kwargs = {"X_target": Y, "sample_weight": w}
    if v is not None:
        kwargs["target_weight"] = v
    methods = [("transform", (X,)), ("predict", (X,))]
    call = _fit_and_use(est, (X,), kwargs, methods, units=((0, "X_target"), _same_labels))
    return call, (X, Y, w, v)


def _case_single_index(data):
    from hypothesis import strategies as st

    from skpapers.linear_model import RobustSingleIndexRegressor

    X = draw_array(data)
    n = _n_rows(X)
    y = draw_vector(data, n, label="y")
    if y is None:
        y = np.random.default_rng(1).normal(size=n)
    params = data.draw(
        st.sampled_from(
            [
                {"max_iter": 10},
                {"link": "tanh", "max_iter": 10, "whiten": "diag"},
                {"link": "relu", "max_iter": 10, "whiten": None, "fit_intercept": False},
                {"contamination": 0.49, "max_iter": 10},
                {"contamination": 0.0, "max_iter": 10, "aggregator": "median_of_means"},
                {"whiten": "mcd", "max_iter": 5},
                {"link": (np.exp, np.exp), "max_iter": 5},
            ]
        ),
        label="params",
    )
    est = RobustSingleIndexRegressor(**params)
    methods = [("predict", (X,)), ("robust_score", (X, y))]
    # whiten=None takes X as standardised (documented): its answer depends on the units
    units = ((0,), _same_index) if params.get("whiten", "auto") is not None else None
    return _fit_and_use(est, (X, y), {}, methods, units=units), (X, y)


def _case_metrics(data):
    from hypothesis import strategies as st

    from skpapers import metrics

    A = draw_array(data, label="A", rows=3, columns=6)
    B = draw_array(data, label="B", rows=3, columns=6)
    name = data.draw(
        st.sampled_from(
            [
                "principal_angle", "relative_restoration_error", "refined_restoration_error",
                "dasgupta_cost", "cluster_fairness", "lowrank_ot_cost",
                "class_transfer_accuracy",
            ]
        ),
        label="metric",
    )
    n = _n_rows(A)
    if name == "principal_angle":
        return (lambda: metrics.principal_angle(A, B)), (A, B)
    if name == "relative_restoration_error":
        return (lambda: metrics.relative_restoration_error(A, B)), (A, B)
    if name == "refined_restoration_error":
        r = data.draw(st.sampled_from((0, 1, 2, 50)), label="n_components")
        return (lambda: metrics.refined_restoration_error(A, B, r)), (A, B)
    linkage = np.array([[0, 1, 1.0, 2], [2, 3, 2.0, 3]], dtype=float)
    tree = data.draw(st.sampled_from(("linkage", "array")), label="tree")
    tree = linkage if tree == "linkage" else B
    if name == "dasgupta_cost":
        return (lambda: metrics.dasgupta_cost(A, tree)), (A,)
    if name == "cluster_fairness":
        s = _groups(data, 3)
        return (lambda: metrics.cluster_fairness(tree, s)), (s,)
    g = draw_vector(data, 2, label="g")
    if name == "lowrank_ot_cost":
        return (lambda: metrics.lowrank_ot_cost(A, A, B, g)), (A, B)
    labels = np.arange(n) % 2
    return (lambda: metrics.class_transfer_accuracy(A, B, g, labels, labels)), (A, B)


def _case_datasets(data):
    from hypothesis import strategies as st

    from skpapers import datasets

    value = data.draw(
        st.sampled_from((0, 1, -1, 0.5, 1e9, np.inf, np.nan, (np.inf, 1.0), "x", None)),
        label="value",
    )
    name = data.draw(
        st.sampled_from(
            [
                "make_contaminated_sim", "make_permuted_subspace", "make_shifted_gaussians",
                "make_moons_to_gaussians", "make_sbm_cost", "make_fragmented_hypercube",
                "stratified_subsample", "permute_records", "normalize_records",
            ]
        ),
        label="generator",
    )
    if name == "make_contaminated_sim":
        which = data.draw(st.sampled_from(("n_samples", "noise", "contamination")))
        kwargs = {"n_samples": 50, "n_features": 3, which: value}
        return (lambda: datasets.make_contaminated_sim(**kwargs)), ()
    if name == "stratified_subsample":
        X = draw_array(data)
        n = _n_rows(X)
        s = _groups(data, n)
        # the rows of X pass through as given (a NaN of the user's included): what
        # the function computes, and what must be finite, is the draw
        return (lambda: datasets.stratified_subsample(X, s, value, random_state=0)[1:]), (X, s)
    if name == "permute_records":
        X = draw_array(data)
        return (lambda: datasets.permute_records(X, [0], value, random_state=0)), (X,)
    if name == "normalize_records":
        X = draw_array(data)
        return (lambda: datasets.normalize_records(X)), (X,)
    first = {"make_sbm_cost": "n_blocks"}.get(name, "n_samples")
    return (lambda: getattr(datasets, name)(**{first: value})), ()


def _case_cli(data):
    from hypothesis import strategies as st

    from skpapers.__main__ import main

    argv = data.draw(
        st.lists(
            st.sampled_from(
                ["list", "check", "--load", "-v", "--help", "nosuchdist", "upca", "",
                 "--plots", "é", "--", "-x"]
            ),
            max_size=3,
        ),
        label="argv",
    )

    def call():
        import contextlib
        import io

        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
        if status not in (0, 1, 2, None):
            raise RuntimeError(f"exit status {status!r}")
        if "Traceback" in buffer.getvalue():
            raise RuntimeError("a traceback was printed")
        return float(status or 0)

    return call, ()


AREAS = {
    "UnlabeledPCA": _case_upca,
    "FairHierarchicalClustering": _case_fair,
    "TransportClustering": _case_transport,
    "RobustSingleIndexRegressor": _case_single_index,
    "metrics": _case_metrics,
    "datasets": _case_datasets,
    "cli": _case_cli,
}
_ESTIMATOR_AREAS = (
    "UnlabeledPCA", "FairHierarchicalClustering", "TransportClustering",
    "RobustSingleIndexRegressor",
)  # fmt: skip


def run_fuzz(area, max_examples=300, *, seed=0, strict=False, time_limit=20.0):
    """Run ``max_examples`` hypothesis cases of ``area``; return a Counter of outcomes.

    Parameters
    ----------
    area : str
        A key of :data:`AREAS`.
    max_examples : int, default=300
        Number of cases.
    seed : int, default=0
        Hypothesis seed (the cases are reproducible).
    strict : bool, default=False
        Raise an AssertionError (with the case hypothesis shrank to) at the first
        outcome other than "ok" or "clean error".
    time_limit : float, default=20.0
        Seconds before a case counts as a hang.

    Returns
    -------
    outcomes : collections.Counter
        Count per outcome; ``outcomes.examples`` maps each bad outcome to one
        detail string; ``outcomes.units_checked`` counts the estimator cases
        also compared in other units.
    """
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hyp_seed
    from hypothesis import strategies as st

    outcomes = Counter()
    outcomes.examples = {}
    outcomes.units_checked = 0
    build = AREAS[area]

    @hyp_seed(seed)
    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )
    @given(st.data())
    def one(data):
        data = _Recorder(data)
        call, inputs = build(data)
        outcome, detail = classify(call, inputs, time_limit=time_limit)
        if outcome == "ok" and hasattr(call, "units"):
            k = data.draw(st.sampled_from(_UNIT_EXPONENTS), label="units: X * 2**k")
            ran = []
            units, why = classify(
                lambda: ran.append(call.units(2.0**k)), (), time_limit=time_limit
            )
            outcomes.units_checked += bool(ran and ran[0])
            if units != "ok":
                outcome, detail = "silent", f"a different answer for X * 2**{k}: {why}"
        outcomes[outcome] += 1
        if outcome not in ("ok", "clean error"):
            detail = f"{detail} [case: {', '.join(data.draws)}]"
            outcomes.examples.setdefault(outcome, detail)
            if strict:
                raise AssertionError(f"{area}: {outcome}: {detail}")

    one()
    return outcomes


def main(argv=None):
    """Print the outcome table: ``python -m skpapers.testing.fuzz [--cases N] [--seed S]``.

    Without ``--seed`` a fresh random seed is drawn and printed first, so that
    any run can be replayed.
    """
    import argparse
    import secrets

    parser = argparse.ArgumentParser(
        prog="python -m skpapers.testing.fuzz",
        description="Bad-input fuzz of skpapers' public API: outcomes per area.",
    )
    parser.add_argument("--cases", type=int, default=300, help="cases per area (300)")
    parser.add_argument(
        "--seed", type=int, default=None, help="hypothesis seed (default: a fresh random one)"
    )
    parser.add_argument("--area", action="append", choices=sorted(AREAS), help="areas to run")
    args = parser.parse_args(argv)
    areas = args.area or list(AREAS)
    seed = secrets.randbelow(2**32) if args.seed is None else args.seed
    print(f"fuzz seed {seed} ({args.cases} cases per area; replay: "
          f"python -m skpapers.testing.fuzz --seed {seed} --cases {args.cases})", flush=True)
    header = (
        "area", "cases", "ok", "clean error", "crash", "silent", "hang", "units checked",
        "seconds",
    )  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    bad = 0
    for area in areas:
        t0 = time.perf_counter()
        counts = run_fuzz(area, args.cases, seed=seed)
        row = [area, sum(counts.values())]
        row += [counts.get(k, 0) for k in ("ok", "clean error", "crash", "silent", "hang")]
        row += [counts.units_checked if area in _ESTIMATOR_AREAS else "-"]
        row.append(math.ceil(time.perf_counter() - t0))
        print("| " + " | ".join(map(str, row)) + " |", flush=True)
        for outcome, detail in counts.examples.items():
            print(f"  first {outcome}: {detail}", flush=True)
        bad += sum(counts.get(k, 0) for k in ("crash", "silent", "hang"))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
