# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dask arrays in the per-row methods: the same numbers as in memory, lazily.

Run on Dask's synchronous scheduler (no cluster); tests/test_dask_cluster.py
runs on a ``LocalCluster`` whose workers hold less memory than the data.
"""

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from skpapers.cluster import TransportClustering
from skpapers.datasets import make_permuted_subspace, make_shifted_gaussians
from skpapers.decomposition import UnlabeledPCA
from skpapers.decomposition._unlabeled_pca.subspace import _weighted_median
from skpapers.exceptions import FlaggingWarning
from skpapers.linear_model import RobustSingleIndexRegressor
from skpapers.metrics import principal_angle
from skpapers.utils import sample_rows
from skpapers.utils._dask import is_dask_collection, weighted_select

da = pytest.importorskip("dask.array", reason="the [dask] extra is not installed")
dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

# row chunks: one block, even blocks, uneven blocks with a one-row block
CHUNKS = [600, 150, (1, 100, 250, 249)]


@pytest.fixture(autouse=True)
def _synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def upca_data():
    X, *_ = make_permuted_subspace(
        n_samples=600, n_features=20, n_components=3, outlier_ratio=0.3,
        shuffled_ratio=0.2, noise=0.01, random_state=0,
    )  # fmt: skip
    return X, UnlabeledPCA(3).fit(X)


@pytest.fixture(scope="module")
def tc_data():
    X, Y, _, _ = make_shifted_gaussians(600, n_clusters=4, sigma=0.2, random_state=0)
    return X, Y, TransportClustering(4, random_state=0).fit(X, X_target=Y)


@pytest.fixture(scope="module")
def sim_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = np.tanh(X @ np.ones(5) / 2) + 0.05 * rng.normal(size=600)
    y[:30] += 5.0  # gross outliers
    return X, y, RobustSingleIndexRegressor(random_state=0).fit(X, y)


def _dask(X, rows, columns=-1):
    return da.from_array(X, chunks=(rows, columns) if X.ndim == 2 else rows)


# ------------------------------------------------------------- detection
def test_detection_does_not_import_dask():
    code = (
        "import sys, numpy as np; from skpapers.utils._dask import is_dask_collection; "
        "import skpapers.decomposition, skpapers.cluster, skpapers.linear_model; "
        "assert not is_dask_collection(np.ones(3)); assert 'dask' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_detection():
    X = np.ones((4, 2))
    assert is_dask_collection(da.from_array(X))
    assert is_dask_collection(dd.from_pandas(pd.DataFrame(X), npartitions=1))
    assert not is_dask_collection(X)
    assert not is_dask_collection(pd.DataFrame(X))


def test_missing_dask_names_the_extra(monkeypatch, upca_data):
    _, upca = upca_data

    class FakeArray:  # a Dask array as seen without Dask installed
        __module__ = "dask.array.core"
        __dask_graph__ = None
        shape, ndim, dtype = (3, 20), 2, np.dtype(np.float64)

    monkeypatch.setitem(sys.modules, "dask.array", None)
    with pytest.raises(ImportError, match=r"skpapers\[dask\]"):
        upca.restore(FakeArray())


# ------------------------------------------------------------- UnlabeledPCA
@pytest.mark.parametrize("rows", CHUNKS)
@pytest.mark.parametrize("method", ["restore", "transform", "score"])
def test_upca_same_as_in_memory(upca_data, rows, method):
    X, upca = upca_data
    expected = getattr(upca, method)(X)
    got = getattr(upca, method)(_dask(X, rows, columns=7))  # columns merged into one chunk
    if method == "score":
        assert got == pytest.approx(expected, rel=1e-12)
        return
    assert isinstance(got, da.Array) and got.chunks[0] == _dask(X, rows).chunks[0]
    np.testing.assert_allclose(got.compute(), expected, rtol=0, atol=1e-12)
    assert got.dtype == expected.dtype


def test_upca_inverse_transform_and_float32(upca_data):
    X, upca = upca_data
    C = upca.transform(X)
    np.testing.assert_allclose(
        upca.inverse_transform(_dask(C, 77)).compute(), upca.inverse_transform(C), atol=1e-12
    )
    X32 = X.astype(np.float32)
    got = upca.restore(_dask(X32, 150))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.compute(), upca.restore(X32), atol=1e-5)


def test_upca_restores_the_permuted_samples_blockwise(upca_data):
    X, upca = upca_data
    changed = np.any(upca.restore(_dask(X, 97)).compute() != X, axis=1)
    assert changed.sum() > 100  # the shuffled samples (about 30%) are restored
    np.testing.assert_array_equal(changed, np.any(upca.restore(X) != X, axis=1))


def test_upca_pandas_output(upca_data):
    X, upca = upca_data
    upca = UnlabeledPCA(3).set_output(transform="pandas").fit(X)
    for method in ("transform", "restore"):
        got = getattr(upca, method)(_dask(X, 150))
        assert isinstance(got, dd.DataFrame)
        expected = getattr(upca, method)(X)
        pd.testing.assert_frame_equal(got.compute(), expected, check_exact=False, atol=1e-12)


def test_upca_dask_dataframe_input_keeps_names_and_index(upca_data):
    X, _ = upca_data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(20)], index=np.arange(600) * 2)
    upca = UnlabeledPCA(3).fit(frame)
    got = upca.restore(dd.from_pandas(frame, npartitions=4)).compute()
    np.testing.assert_array_equal(got.index, frame.index)
    np.testing.assert_array_equal(got.columns, frame.columns)
    np.testing.assert_allclose(got.to_numpy(), upca.restore(frame), atol=1e-12)


def test_upca_refuses_the_leave_one_out_rule_blockwise(upca_data):
    X, upca = upca_data
    upca = UnlabeledPCA(3).fit(X)
    upca.flagging_rule_ = "unexplained"
    with pytest.raises(ValueError, match="other samples"):
        upca.restore(_dask(X, 150))


def test_methods_are_lazy(upca_data):
    X, upca = upca_data
    calls = []

    def counted(block):
        calls.append(len(block))
        return block

    dX = _dask(X, 150).map_blocks(counted, dtype=X.dtype, meta=np.empty((0, 0)))
    out = upca.restore(dX)
    assert calls == []
    out.compute()
    assert sum(calls) == 600


def test_errors_are_raised_before_compute(upca_data):
    X, _ = upca_data
    with pytest.raises(NotFittedError):
        UnlabeledPCA(3).restore(_dask(X, 150))
    upca = UnlabeledPCA(3).fit(X)
    with pytest.raises(ValueError, match="20 columns"):
        upca.restore(_dask(X[:, :5], 150))
    with pytest.raises(NotFittedError):
        TransportClustering(3).predict(_dask(X, 150))


# ------------------------------------------------------------- TransportClustering
@pytest.mark.parametrize("rows", CHUNKS)
def test_transport_same_as_in_memory(tc_data, rows):
    X, Y, tc = tc_data
    np.testing.assert_array_equal(tc.predict(_dask(X, rows)).compute(), tc.predict(X))
    np.testing.assert_array_equal(tc.predict_target(_dask(Y, rows)).compute(), tc.predict_target(Y))
    np.testing.assert_allclose(tc.transform(_dask(X, rows)).compute(), tc.transform(X))
    assert tc.score(_dask(X, rows)) == pytest.approx(tc.score(X), rel=1e-12)
    w = np.linspace(0.5, 2.0, 600)
    assert tc.score(_dask(X, rows), sample_weight=_dask(w, rows)) == pytest.approx(
        tc.score(X, sample_weight=w), rel=1e-12
    )


def test_transport_pandas_output_and_refusals(tc_data):
    X, Y, _ = tc_data
    tc = TransportClustering(4, random_state=0).set_output(transform="pandas").fit(X, X_target=Y)
    got = tc.transform(_dask(X, 150))
    assert isinstance(got, dd.DataFrame)
    pd.testing.assert_frame_equal(got.compute(), tc.transform(X))
    with pytest.raises(ValueError, match="no other argument"):
        tc.transform(_dask(X, 150), sample_domain=np.ones(600))


# ------------------------------------------------------------- robust SIM
@pytest.mark.parametrize("rows", CHUNKS)
def test_sim_same_as_in_memory(sim_data, rows):
    X, y, sim = sim_data
    dX, dy = _dask(X, rows, columns=2), _dask(y, rows)
    np.testing.assert_allclose(sim.predict(dX).compute(), sim.predict(X), rtol=0, atol=1e-13)
    assert sim.score(dX, dy) == pytest.approx(sim.score(X, y), rel=1e-12)
    assert sim.robust_score(dX, dy) == pytest.approx(sim.robust_score(X, y), rel=1e-12)


# ------------------------------------------------------------- reductions, sampling
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("removed", [0, 3])
def test_weighted_select_is_the_in_memory_weighted_median(seed, removed):
    rng = np.random.default_rng(seed)
    n = [7, 300, 5000, 60000][seed]
    values = np.log(rng.random(n) ** 3 + 1e-12)
    values[: n // 4] = values[0]  # ties
    weights = np.exp(-values)
    order = np.argsort(values, kind="stable")
    out, keep = order[:removed], np.sort(order[removed:])
    expected = _weighted_median(values[keep], weights[keep])
    got = weighted_select(
        _dask(values, n // 3 + 1), _dask(weights, n // 3 + 1), 0.5 * weights[keep].sum(),
        removed=(values[out], weights[out]), max_gather=50,
    )  # fmt: skip
    assert got == expected


@pytest.mark.parametrize("n", [1, 10, 0.25])
def test_sample_rows(n):
    X = np.arange(200.0).reshape(100, 2)
    mem = sample_rows(X, n, random_state=0)
    got = sample_rows(_dask(X, 30), n, random_state=0)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, mem)
    assert len(mem) == (25 if n == 0.25 else n)
    assert np.all(np.diff(mem[:, 0]) > 0)  # rows in their order, no repeats
    frame = pd.DataFrame(X)
    pd.testing.assert_frame_equal(sample_rows(frame, n, random_state=0), frame.iloc[mem[:, 0] // 2])
    with pytest.raises(ValueError, match="n_samples"):
        sample_rows(X, 101)
    with pytest.raises(ValueError, match="to_dask_array"):
        sample_rows(dd.from_pandas(frame, npartitions=2), 3)


# ------------------------------------------------------------- UnlabeledPCA.fit, distributed
def _fit_both(X, rows, **params):
    return UnlabeledPCA(3, **params).fit(X), UnlabeledPCA(3, **params).fit(_dask(X, rows))


@pytest.mark.parametrize(
    "params, n, rows",
    [
        ({}, 3000, (1, 999, 1000, 1000)),  # the refit from partly shuffled samples
        ({}, 40_000, 7000),  # the warm start on a subsample, then every row
        ({"stage1": "pca"}, 3000, 500),
        ({"lsrf_tol": None}, 3000, 500),  # the paper's algorithm: no refit
        ({"lsrf_tol": 0.05, "restore_samples": "all", "p": 1.0}, 3000, 500),
    ],
)
def test_distributed_fit_equals_the_in_memory_fit(params, n, rows):
    X, *_ = make_permuted_subspace(
        n_samples=n, n_features=20, n_components=3, outlier_ratio=0.3,
        shuffled_ratio=0.1, noise=0.01, random_state=1,
    )  # fmt: skip
    mem, dist = _fit_both(X, rows, **params)
    assert principal_angle(mem.components_, dist.components_) < np.radians(1e-8)
    assert dist.n_iter_ == mem.n_iter_
    assert dist.threshold_ == pytest.approx(mem.threshold_, rel=1e-10)
    assert isinstance(dist.distances_, da.Array)
    np.testing.assert_allclose(dist.distances_.compute(), mem.distances_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(dist.permuted_mask_.compute(), mem.permuted_mask_)
    if mem.lsrf_tol_ is None:
        assert dist.lsrf_tol_ is None
    else:
        assert dist.lsrf_tol_ == pytest.approx(mem.lsrf_tol_, rel=1e-10)
    np.testing.assert_allclose(dist.restore(_dask(X, 500)).compute(), mem.restore(X), atol=1e-9)


@pytest.mark.parametrize("random_state", [1, 3])
def test_distributed_fit_checks_few_clean_samples_by_leave_one_out(random_state):
    # 60 clean samples of 200: the threshold is raised to the clean samples'
    # leave-one-out distances (seed 1: raised, nothing unflagged; seed 3: one
    # sample unflagged, with the FlaggingWarning naming it), as in memory
    X, *_ = make_permuted_subspace(
        n_samples=200, n_features=20, n_components=3, outlier_ratio=0.7,
        shuffled_ratio=0.1, noise=0.05, random_state=random_state,
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mem, dist = _fit_both(X, 50)
    held_out = [str(w.message) for w in caught if "leave-one-out" in str(w.message)]
    assert len(held_out) == (0 if random_state == 1 else 2)
    assert len(set(held_out)) <= 1  # the same words from both fits
    assert dist.flagging_warning_ == mem.flagging_warning_
    assert dist.threshold_ == pytest.approx(mem.threshold_, rel=1e-10)
    np.testing.assert_array_equal(dist.permuted_mask_.compute(), mem.permuted_mask_)
    np.testing.assert_allclose(dist.restore(_dask(X, 50)).compute(), mem.restore(X), atol=1e-9)


def test_distributed_fit_float32_and_flagging_warning():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 20)).astype(np.float32)  # far from rank 1: the rule cannot flag
    with pytest.warns(FlaggingWarning) as mem_warning:
        mem = UnlabeledPCA(1).fit(X)
    with pytest.warns(FlaggingWarning) as dist_warning:
        dist = UnlabeledPCA(1).fit(_dask(X, 300))
    assert str(dist_warning[0].message) == str(mem_warning[0].message)
    assert dist.components_.dtype == np.float32
    assert principal_angle(mem.components_, dist.components_) < np.radians(1e-4)


def test_distributed_fit_refuses_what_it_does_not_implement(upca_data):
    X, _ = upca_data
    with pytest.raises(ValueError, match="stage1 in \\['dpcp', 'pca'\\], not 'cop'"):
        UnlabeledPCA(3, stage1="cop").fit(_dask(X, 150))
    X_nan = X.copy()
    X_nan[3, 4] = np.nan
    with pytest.raises(ValueError, match="missing"):
        UnlabeledPCA(3).fit(_dask(X_nan, 150))
    with pytest.raises(ValueError, match="as many samples as features"):
        UnlabeledPCA(3).fit(_dask(X[:15], 5))
    with pytest.raises(ValueError, match="to_dask_array"):
        UnlabeledPCA(3).fit(dd.from_pandas(pd.DataFrame(X), npartitions=2))

    class Centred(UnlabeledPCA):  # a parameter the distributed fit does not know
        def __init__(self, n_components, *, centre=True):
            super().__init__(n_components)
            self.centre = centre

    Centred._parameter_constraints = {**UnlabeledPCA._parameter_constraints, "centre": ["boolean"]}
    with pytest.raises(ValueError, match="does not implement the parameter 'centre'"):
        Centred(3).fit(_dask(X, 150))


@pytest.mark.parametrize("with_mean", [True, False])
def test_upca_scaler_in_front_refused_or_warned_as_in_memory(with_mean):
    # the Dask fit reads the features' moments in its first pass: centred data
    # are refused and unit variances warned about, as in memory (before, the
    # distributed fit ran on centred data silently)
    from sklearn.preprocessing import StandardScaler

    X, _, _, _ = make_permuted_subspace(n_samples=300, n_features=20, n_components=3,
                                        random_state=309)  # fmt: skip
    Xs = StandardScaler(with_mean=with_mean).fit_transform(X)
    if with_mean:
        with pytest.raises(ValueError, match="every feature of X has mean 0.*refused"):
            UnlabeledPCA(3).fit(Xs)
        with pytest.raises(ValueError, match="every feature of X has mean 0.*refused"):
            UnlabeledPCA(3).fit(_dask(Xs, 100))
        return
    with pytest.warns(FlaggingWarning, match="every feature of X has variance 1"):
        UnlabeledPCA(3).fit(Xs)
    with pytest.warns(FlaggingWarning, match="every feature of X has variance 1"):
        UnlabeledPCA(3).fit(_dask(Xs, 100))
