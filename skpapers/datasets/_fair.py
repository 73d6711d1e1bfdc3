# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Stratified subsampling that keeps the global group ratio (fair HC experiments)."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

from skpapers.utils._hierarchy import encode_groups

__all__ = ["stratified_subsample"]


def stratified_subsample(X, sensitive_features, n_samples, *, random_state=None):
    """Draw a subsample without replacement that keeps the group proportions.

    As in the fair hierarchical clustering papers' code: every group but the
    largest gets ``ceil(n_samples * n_g / n)`` rows, the largest gets the rest
    (for two groups: ``ceil(n B / (B + R))`` blue rows and the rest red). When
    rounding up many small groups would leave the largest a negative count,
    the counts are the largest-remainder rounding of ``n_samples * n_g / n``
    instead (they sum to ``n_samples``; a group may then get no row).

    Parameters
    ----------
    X : array-like or DataFrame of shape (n, n_features)
        Samples.
    sensitive_features : array-like of shape (n,)
        Group label of every sample.
    n_samples : int
        Size of the subsample, ``len(groups) <= n_samples <= n``.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.

    Returns
    -------
    X_sub : ndarray or DataFrame of shape (n_samples, n_features)
        The subsample, rows in increasing original order.
    sensitive_sub : ndarray or Series of shape (n_samples,)
        Their group labels.
    indices : ndarray of shape (n_samples,)
        The row indices drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.datasets import stratified_subsample
    >>> X = np.arange(20).reshape(10, 2)
    >>> s = np.array(["a"] * 7 + ["b"] * 3)
    >>> _, s_sub, idx = stratified_subsample(X, s, 5, random_state=0)
    >>> sorted(s_sub.tolist())
    ['a', 'a', 'a', 'b', 'b']
    """
    codes, groups = encode_groups(sensitive_features)
    n = codes.shape[0]
    if getattr(X, "shape", (len(X),))[0] != n:
        raise ValueError(
            f"X has {getattr(X, 'shape', (len(X),))[0]} rows but sensitive_features has {n}."
        )
    if not isinstance(n_samples, numbers.Integral) or not groups.shape[0] <= n_samples <= n:
        raise ValueError(
            f"n_samples must be an integer in [{groups.shape[0]}, {n}], got {n_samples!r}."
        )
    rng = check_random_state(random_state)
    counts = np.bincount(codes, minlength=groups.shape[0])
    take = np.ceil(n_samples * counts / n).astype(int)
    largest = int(np.argmax(counts))
    take[largest] = 0
    take[largest] = n_samples - take.sum()
    if take[largest] < 0:  # rounding up many groups overshoots n_samples
        take = _largest_remainder(n_samples, counts)
    picked = [
        rng.choice(np.flatnonzero(codes == g), size=int(m), replace=False)
        for g, m in enumerate(take)
    ]
    indices = np.sort(np.concatenate(picked))
    if hasattr(X, "iloc"):
        X_sub = X.iloc[indices]
    else:
        X_sub = np.asarray(X)[indices]
    s = sensitive_features
    s_sub = s.iloc[indices] if hasattr(s, "iloc") else np.asarray(s)[indices]
    return X_sub, s_sub, indices


def _largest_remainder(n_samples, counts):
    """Integer counts summing to ``n_samples``, proportional to ``counts``."""
    exact = n_samples * counts / counts.sum()
    take = np.floor(exact).astype(int)
    short = n_samples - int(take.sum())
    order = np.lexsort((np.arange(counts.shape[0]), -(exact - take)))
    take[order[:short]] += 1
    return take
