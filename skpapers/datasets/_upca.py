# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic data of unlabeled PCA: a subspace whose samples have permuted entries."""

import numbers

import numpy as np
from sklearn.utils import check_array, check_random_state

from skpapers.utils._memory import GENERATED_MAX_ENTRIES, check_generated_size
from skpapers.utils._numerics import unit_exponent
from skpapers.utils._sklearn import Interval, StrOptions, validate_params

__all__ = ["make_permuted_subspace", "normalize_records", "permute_records"]


def _random_permutations(rng, n_rows, k):
    """``n_rows`` uniformly random permutations of ``range(k)``, none the identity."""
    perms = np.argsort(rng.random((n_rows, k)), axis=1)
    identity = np.all(perms == np.arange(k), axis=1)
    while identity.any():
        perms[identity] = np.argsort(rng.random((identity.sum(), k)), axis=1)
        identity = np.all(perms == np.arange(k), axis=1)
    return perms


@validate_params(
    {
        "n_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_features": [Interval(numbers.Integral, 2, None, closed="left")],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "outlier_ratio": [Interval(numbers.Real, 0, 1, closed="both")],
        "shuffled_ratio": [Interval(numbers.Real, 0, 1, closed="both")],
        "noise": [Interval(numbers.Real, 0, None, closed="left")],
        "outlier_type": [StrOptions({"shuffle", "random"})],
        "missing_ratio": [Interval(numbers.Real, 0, 1, closed="left")],
        "max_dense_entries": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_permuted_subspace(
    n_samples=500,
    n_features=50,
    n_components=3,
    *,
    outlier_ratio=0.9,
    shuffled_ratio=0.1,
    noise=0.01,
    outlier_type="shuffle",
    missing_ratio=0.0,
    random_state=None,
    max_dense_entries=GENERATED_MAX_ENTRIES,
):
    """Generate samples of a linear subspace, some with permuted entries.

    The corruption model of unlabeled PCA (authors' synthetic generators, in the
    scikit-learn orientation: one sample per row). A random ``n_components``
    dimensional subspace of ``R^n_features`` is drawn, with samples ``x*_j = c_j
    @ components`` (``c_j ~ N(0, I / n_components)``) scaled to unit norm. Noise
    rows of norm ``noise`` are added and the rows renormalised. In
    ``floor(outlier_ratio * n_samples)`` samples at random positions,
    ``floor(shuffled_ratio * n_features)`` entries at random positions are
    shuffled among themselves (never by the identity); with
    ``outlier_type="random"`` those samples are replaced by random unit vectors
    instead.

    Parameters
    ----------
    n_samples : int, default=500
        Number of samples (the paper's n).
    n_features : int, default=50
        Ambient dimension (the paper's m).
    n_components : int, default=3
        Dimension of the subspace, smaller than ``n_features``.
    outlier_ratio : float in [0, 1], default=0.9
        Fraction of corrupted (permuted) samples.
    shuffled_ratio : float in [0, 1], default=0.1
        Fraction ``alpha`` of the entries shuffled in each permuted sample; 1 is a
        dense permutation. Needs ``floor(shuffled_ratio * n_features) >= 2`` when
        samples are shuffled.
    noise : float, default=0.01
        Norm of the noise added to each (unit-norm) sample.
    outlier_type : {"shuffle", "random"}, default="shuffle"
        Shuffled entries, or random unit vectors (the paper's Fig. 1 "random
        outliers").
    missing_ratio : float in [0, 1), default=0.0
        Fraction of entries set to NaN, uniformly at random (missing completely at
        random), after the permutation.
    random_state : int, RandomState instance or None, default=None
        Seed of every random draw.
    max_dense_entries : int or None, default=250_000_000
        Largest single array the generator may allocate, in entries (float64:
        2 GB by default); a ValueError is raised before allocating beyond it.
        It caps one array, not the total: the peak memory of a call is about
        5.1 times its largest array. ``None``: no limit.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Observed samples (noisy, partly permuted, NaN where missing).
    X_true : ndarray of shape (n_samples, n_features)
        The clean unit-norm samples ``x*_j``, in the true feature order.
    components : ndarray of shape (n_components, n_features)
        Orthonormal basis (rows) of the subspace.
    permuted_mask : ndarray of shape (n_samples,) of bool
        Samples that were corrupted.

    See Also
    --------
    skpapers.decomposition.UnlabeledPCA : Restores such samples.

    Notes
    -----
    Whether the JMLR paper masks entries before or after permuting could not be
    checked; here the mask is drawn after permuting, independently of it.

    Examples
    --------
    >>> from skpapers.datasets import make_permuted_subspace
    >>> X, X_true, components, permuted = make_permuted_subspace(random_state=0)
    >>> X.shape, components.shape, int(permuted.sum())
    ((500, 50), (3, 50), 450)
    """
    check_generated_size((n_samples, n_features), max_dense_entries)
    if n_components >= n_features:
        raise ValueError(
            f"n_components = {n_components} must be smaller than n_features = {n_features}."
        )
    rng = check_random_state(random_state)
    U, _ = np.linalg.qr(rng.standard_normal((n_features, n_components)))
    components = U.T
    X_true = rng.standard_normal((n_samples, n_components)) / np.sqrt(n_components) @ components
    X_true /= np.linalg.norm(X_true, axis=1, keepdims=True)
    E = rng.standard_normal((n_samples, n_features))
    if noise > 0:
        X = X_true + E * (noise / np.linalg.norm(E, axis=1, keepdims=True))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    else:
        X = X_true.copy()

    n_out = int(np.floor(outlier_ratio * n_samples))
    permuted_mask = np.zeros(n_samples, dtype=bool)
    rows = rng.permutation(n_samples)[:n_out]
    permuted_mask[rows] = True
    if n_out and outlier_type == "random":
        R = rng.standard_normal((n_out, n_features))
        X[rows] = R / np.linalg.norm(R, axis=1, keepdims=True)
    elif n_out:
        k = int(np.floor(shuffled_ratio * n_features))
        if k < 2:
            raise ValueError(
                f"shuffled_ratio * n_features = {shuffled_ratio * n_features:g} leaves fewer "
                "than 2 entries to shuffle; raise shuffled_ratio or n_features."
            )
        positions = np.argsort(rng.random((n_out, n_features)), axis=1)[:, :k]
        perms = _random_permutations(rng, n_out, k)
        values = np.take_along_axis(X[rows], positions, axis=1)
        shuffled = X[rows]
        np.put_along_axis(shuffled, positions, np.take_along_axis(values, perms, axis=1), axis=1)
        X[rows] = shuffled
    if missing_ratio > 0:
        X[rng.random(X.shape) < missing_ratio] = np.nan
    return X, X_true, components, permuted_mask


def normalize_records(X):
    """Centre every column (attribute) of a table and divide it by its norm.

    The column norms and means are invariant under shuffling the entries of a
    column, so they are the same before and after :func:`permute_records`, and
    ``X_normalized * norms + means`` maps any restored table back to the
    original units.

    Parameters
    ----------
    X : array-like of shape (n_records, n_attributes)
        The table; no column may be constant.

    Returns
    -------
    X_normalized : ndarray of shape (n_records, n_attributes)
        Centred columns of unit norm.
    norms : ndarray of shape (n_attributes,)
        Norm of every centred column.
    means : ndarray of shape (n_attributes,)
        Mean of every column.

    See Also
    --------
    permute_records : Shuffle part of some columns, as in record linkage.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.datasets import normalize_records
    >>> Z, norms, means = normalize_records(np.array([[1.0, 2.0], [3.0, 6.0]]))
    >>> Z
    array([[-0.70710678, -0.70710678],
           [ 0.70710678,  0.70710678]])
    >>> means
    array([2., 4.])
    """
    X = check_array(X, dtype=np.float64)
    exponent = unit_exponent(X, axis=0)  # per column, exact: no overflow in the norms
    X = np.ldexp(X, -exponent)
    means = X.mean(axis=0)
    centred = X - means
    norms = np.linalg.norm(centred, axis=0)
    if np.any(norms == 0):
        raise ValueError(
            f"column(s) {np.flatnonzero(norms == 0).tolist()} are constant: they cannot be "
            "normalised (drop them first)."
        )
    with np.errstate(over="ignore"):
        return centred / norms, np.ldexp(norms, exponent), np.ldexp(means, exponent)


@validate_params(
    {
        "X": ["array-like"],
        "columns": ["array-like"],
        "shuffled_ratio": [Interval(numbers.Real, 0, 1, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def permute_records(X, columns, shuffled_ratio, *, random_state=None):
    """Shuffle a random part of the entries of some columns of a table.

    Every listed column gets its own random subset of
    ``floor(shuffled_ratio * n_records)`` records, whose values in that column
    are permuted among themselves: the record-linkage corruption of the
    unlabeled PCA papers' real-data experiments (the authors'
    ``permute_corruption.m``).

    Parameters
    ----------
    X : array-like of shape (n_records, n_attributes)
        The table (not modified).
    columns : array-like of int
        Indices of the columns to corrupt.
    shuffled_ratio : float in [0, 1]
        Fraction of the records shuffled in every listed column.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsets and the permutations.

    Returns
    -------
    X_permuted : ndarray of shape (n_records, n_attributes)
        A corrupted copy of ``X``.

    See Also
    --------
    normalize_records : Centre and scale the columns first.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.datasets import permute_records
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> Xp = permute_records(X, [1], 1.0, random_state=0)
    >>> bool(np.array_equal(Xp[:, 0], X[:, 0]))
    True
    >>> sorted(Xp[:, 1]) == sorted(X[:, 1])
    True
    """
    X = check_array(X, dtype=np.float64, copy=True)
    rng = check_random_state(random_state)
    columns = np.asarray(columns, dtype=np.intp).ravel()
    if columns.size and (columns.min() < -X.shape[1] or columns.max() >= X.shape[1]):
        raise ValueError(f"columns must index the {X.shape[1]} columns of X; got {columns}.")
    n = X.shape[0]
    k = int(np.floor(shuffled_ratio * n))
    for j in columns:  # a handful of attributes, not samples
        idx = rng.permutation(n)[:k]
        X[idx, j] = X[idx[rng.permutation(k)], j]
    return X
