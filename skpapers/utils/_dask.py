# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dask arrays in the per-row methods: detection, blockwise application, reductions.

Dask stays optional: a Dask collection is recognised by the module of its type,
without importing Dask, and Dask is imported only once one is passed in.
"""

import functools
import importlib

import numpy as np

_EXTRA = "pip install 'skpapers[dask]'"


def is_dask_collection(X):
    """Whether ``X`` is a Dask collection (array, DataFrame or Series).

    Decided from the module of its type, so that Dask is not imported for
    in-memory input.
    """
    top = type(X).__module__.partition(".")[0]
    return top in ("dask", "dask_expr") and hasattr(X, "__dask_graph__")


def is_dask_dataframe(X):
    """Whether ``X`` is a Dask DataFrame or Series."""
    return is_dask_collection(X) and ".dataframe" in type(X).__module__


def import_dask(module="dask.array"):
    """Import a module of Dask, or raise an ImportError naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"skpapers got a Dask collection but could not import {module} ({exc}); "
            f"install the optional dependencies with {_EXTRA}."
        ) from exc


def row_chunks(X, who):
    """``X`` as a 2-D Dask array whose columns are one chunk (rechunked if need be)."""
    if X.ndim != 2:
        raise ValueError(f"{who} expects a 2-D Dask array; got {X.ndim} dimension(s).")
    if len(X.chunks[1]) > 1:  # per-row methods need whole rows
        X = X.rechunk({1: -1})
    return X


def _as_numpy(result):
    return result.to_numpy() if hasattr(result, "to_numpy") else np.asarray(result)


def map_rows(method, X, *, width=None, dtype=np.float64, columns=None, n_features=None):
    """Apply a per-row ``method`` to every block of rows of a Dask collection, lazily.

    Parameters
    ----------
    method : callable
        The in-memory method, called on each block (an ndarray for a Dask
        array, a pandas DataFrame for a Dask DataFrame) and returning one
        output row per input row.
    X : dask.array.Array or dask.dataframe.DataFrame
        Row-chunked input; the columns of an array are merged into one chunk.
    width : int or None, default=None
        Columns of the output; None for one value per row.
    dtype : dtype, default=float64
        Output dtype.
    columns : sequence of str or None, default=None
        Names of the output columns: the output is then a Dask DataFrame (the
        pandas convention of ``set_output(transform="pandas")``).

    Returns
    -------
    out : dask.array.Array or dask.dataframe.DataFrame or Series
        A Dask array of shape ``(n_rows,)`` or ``(n_rows, width)``; a Dask
        DataFrame (Series for one value per row) for a Dask DataFrame input
        (indexed like it, with its column names when the output has as many
        columns) or when ``columns`` is given.
    """
    dtype = np.dtype(dtype)
    who = getattr(method, "__qualname__", "this method")
    estimator = getattr(method, "__self__", None)
    if estimator is not None:  # errors now, not when the result is computed
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(estimator)
    if n_features is not None and (X.ndim != 2 or X.shape[1] != n_features):
        raise ValueError(
            f"{who} expects {n_features} columns; got a Dask collection of shape {X.shape}."
        )
    if is_dask_dataframe(X):
        import_dask("dask.dataframe")
        import pandas as pd

        if columns is None and width == X.shape[1]:  # e.g. restore: the input's columns
            columns = list(X.columns)

        def frame(part):
            out = _as_numpy(method(part)).astype(dtype, copy=False)
            if width is None:
                return pd.Series(out, index=part.index)
            return pd.DataFrame(out, index=part.index, columns=columns)

        empty = np.empty((0,) if width is None else (0, width), dtype)
        meta = pd.Series(empty) if width is None else pd.DataFrame(empty, columns=columns)
        return X.map_partitions(frame, meta=meta)
    import_dask()
    X = row_chunks(X, who)

    def block(part):
        return _as_numpy(method(part)).astype(dtype, copy=False)

    if width is None:
        out = X.map_blocks(block, drop_axis=1, dtype=dtype, meta=np.empty((0,), dtype))
    else:
        out = X.map_blocks(
            block, chunks=(X.chunks[0], (width,)), dtype=dtype, meta=np.empty((0, 0), dtype)
        )
    if columns is None:
        return out
    dd = import_dask("dask.dataframe")
    return dd.from_dask_array(out, columns=list(columns))


def wants_pandas(estimator, method="transform"):
    """Whether ``set_output`` asks for pandas output of ``method``."""
    config = getattr(estimator, "_sklearn_output_config", {}).get(method)
    if config is None:
        from sklearn import get_config

        config = get_config()["transform_output"]
    return config == "pandas"


def dask_transform(transform):
    """Wrap a ``transform`` so that Dask input maps it over blocks of rows.

    Applied outside scikit-learn's ``set_output`` wrapper (see
    :class:`DaskRowsMixin`): under pandas output the result is a Dask DataFrame
    named by ``get_feature_names_out``, which that wrapper would otherwise pull
    into memory.
    """

    @functools.wraps(transform)
    def wrapped(self, X, *args, **kwargs):
        if not is_dask_collection(X):
            return transform(self, X, *args, **kwargs)
        if args or kwargs:
            raise ValueError(
                f"{type(self).__name__}.transform on a Dask collection takes no other "
                "argument; map it over the blocks yourself with dask.array.map_blocks."
            )
        names = self.get_feature_names_out()
        return map_rows(
            transform.__get__(self), X, width=len(names), n_features=self.n_features_in_,
            dtype=self._dask_dtype(X), columns=names if wants_pandas(self) else None,
        )  # fmt: skip

    return wrapped


class DaskRowsMixin:
    """Dask input for ``transform``, dispatched outside scikit-learn's output wrapper.

    scikit-learn wraps a ``transform`` defined in a class body when the class is
    created (``set_output``); this mixin wraps it once more, outermost, with
    :func:`dask_transform`. It must precede scikit-learn's mixins in the bases.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "transform" in cls.__dict__:
            cls.transform = dask_transform(cls.transform)

    def _dask_dtype(self, X):
        """Output dtype of ``transform`` on the blocks of ``X``."""
        return np.float64


# ---------------------------------------------------------------- reductions
def compute(*values):
    """``dask.compute`` of the values (one pass over their shared inputs)."""
    return import_dask("dask").compute(*values)


def _bin_sums(values, weights, edges):
    """Count and sum the weights of ``values`` in the bins ``edges`` (others dropped)."""
    bins = len(edges) - 1
    idx = np.searchsorted(edges, values, side="right") - 1
    idx[values == edges[-1]] = bins - 1  # the last bin is closed
    inside = (idx >= 0) & (idx < bins) & (values >= edges[0]) & (values <= edges[-1])
    idx, w = idx[inside], weights[inside]
    return np.stack([
        np.bincount(idx, minlength=bins).astype(np.float64),
        np.bincount(idx, weights=w, minlength=bins),
    ])  # fmt: skip


def _in_bin(values, weights, edges, k):
    """Stack the values and weights of the items in bin ``k`` of ``edges``."""
    bins = len(edges) - 1
    idx = np.searchsorted(edges, values, side="right") - 1
    idx[values == edges[-1]] = bins - 1
    keep = (idx == k) & (values >= edges[0]) & (values <= edges[-1])
    return np.stack([values[keep], weights[keep]])


def block_sum(func, *arrays, fan_in=8):
    """Delayed tree sum of ``func(*blocks)`` over the aligned blocks of rows of ``arrays``.

    ``func`` returns an ndarray (or a tuple of them) of the same shape for
    every block; the partial sums are added ``fan_in`` at a time on the
    workers, so the client receives one result.
    """
    delayed = import_dask("dask").delayed
    blocks = zip(*(a.to_delayed().ravel() for a in arrays), strict=True)
    return tree_sum([delayed(func)(*b) for b in blocks], fan_in)


def tree_sum(parts, fan_in=8):
    """Delayed sum of delayed ndarrays (or tuples of them), ``fan_in`` at a time."""
    delayed = import_dask("dask").delayed
    while len(parts) > 1:
        parts = [delayed(_add)(*parts[i : i + fan_in]) for i in range(0, len(parts), fan_in)]
    return parts[0]


def _add(*parts):
    if isinstance(parts[0], tuple):
        return tuple(sum(p) for p in zip(*parts, strict=True))
    return sum(parts[1:], parts[0])


def weighted_select(values, weights, target, *, removed=None, bins=1024, max_gather=2**16):
    """Smallest value ``v`` of a 1-D Dask array with ``sum(weights[values <= v]) >= target``.

    Exact (the value a sort and a cumulative sum in memory would give, to the
    rounding of the sums): passes of weighted histograms narrow the window that
    holds the answer until it holds at most ``max_gather`` values, which are
    then brought to the client and sorted. ``removed``: ``(values, weights)``
    of items to leave out (copies of items of the array, e.g. its smallest
    values), as ndarrays.
    """
    delayed = import_dask("dask").delayed
    rv = np.empty(0) if removed is None else np.asarray(removed[0], dtype=np.float64)
    rw = np.empty(0) if removed is None else np.asarray(removed[1], dtype=np.float64)
    lo, hi = (float(v) for v in compute(values.min(), values.max()))
    below = 0.0  # weight left of the window
    for _ in range(12):  # each pass narrows the window 1024-fold: 6 reach adjacent floats
        if not lo < hi:
            return lo
        edges = np.linspace(lo, hi, bins + 1)
        edges[-1] = hi
        sums = block_sum(functools.partial(_bin_sums, edges=edges), values, weights)
        counts, wsum = compute(sums)[0]
        r_counts, r_wsum = _bin_sums(rv, rw, edges)
        counts, wsum = counts - r_counts, wsum - r_wsum
        cum = below + np.cumsum(wsum)
        k = min(int(np.searchsorted(cum, target)), bins - 1)
        while k > 0 and counts[k] <= 0:  # past the total: the last non-empty bin
            k -= 1
        below = cum[k] - wsum[k]
        if counts[k] <= max_gather:
            pick = functools.partial(_in_bin, edges=edges, k=k)
            blocks = zip(values.to_delayed().ravel(), weights.to_delayed().ravel(), strict=True)
            parts = [delayed(pick)(v, w) for v, w in blocks]
            vals, w = np.concatenate(compute(*parts), axis=1)
            for v in _in_bin(rv, rw, edges, k)[0]:
                hit = np.flatnonzero(vals == v)[:1]
                vals, w = np.delete(vals, hit), np.delete(w, hit)
            order = np.argsort(vals, kind="stable")
            cum = below + np.cumsum(w[order])
            return float(vals[order][min(int(np.searchsorted(cum, target)), vals.size - 1)])
        lo = edges[k]
        hi = edges[k + 1] if k == bins - 1 else float(np.nextafter(edges[k + 1], -np.inf))
    return lo


def sample_rows(X, n_samples, random_state=None):
    """Draw rows of an array without replacement, in their order.

    Works on in-memory arrays (and DataFrames) and on Dask arrays, whose
    sampled rows are computed into memory: the recipe "fit on a sample, assign
    at scale" (see the scaling guide).

    Parameters
    ----------
    X : array-like or dask.array.Array of shape (n_rows, n_features)
        Rows to sample from.
    n_samples : int or float
        Number of rows, or a share of them in (0, 1].
    random_state : int, RandomState instance or None, default=None
        Seeds the draw.

    Returns
    -------
    X_sample : ndarray or DataFrame of shape (n_samples, n_features)
        The sampled rows, in memory, in the order they have in ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.utils import sample_rows
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> sample_rows(X, 3, random_state=0).shape
    (3, 2)
    """
    from sklearn.utils import check_random_state

    if is_dask_dataframe(X):
        raise ValueError(
            "sample_rows takes a Dask array, not a Dask DataFrame: pass "
            "X.to_dask_array(lengths=True), or use X.sample(frac=...)."
        )
    n_rows = X.shape[0]
    if isinstance(n_samples, float | np.floating) and 0 < n_samples <= 1:
        n_samples = max(1, int(round(n_samples * n_rows)))
    if not isinstance(n_samples, int | np.integer) or not 1 <= n_samples <= n_rows:
        raise ValueError(
            f"n_samples must be an int in [1, {n_rows}] or a share in (0, 1]; got {n_samples!r}."
        )
    if is_dask_collection(X) and np.isnan(n_rows):
        raise ValueError("sample_rows needs the number of rows; call X.compute_chunk_sizes().")
    rng = check_random_state(random_state)
    rows = np.sort(rng.choice(n_rows, int(n_samples), replace=False))
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    if is_dask_collection(X):
        return np.asarray(X[rows].compute())
    return X[rows]
