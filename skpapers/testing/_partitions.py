# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Assertions that compare clusterings up to the numbering of their clusters."""

import numpy as np
from scipy.optimize import linear_sum_assignment


def assert_same_partition(labels, other):
    """Assert that two labelings split the samples alike, whatever their cluster numbers.

    Two runs that find the same clusters may number them differently (a tie
    broken by rounding, another computation order); compare them with this,
    never with ``labels == other``.

    Parameters
    ----------
    labels, other : array-like of shape (n_samples,)
        Cluster labels of the same samples.

    Raises
    ------
    AssertionError
        If some cluster of one labeling is not a cluster of the other; the
        message counts the samples in the clusters that do not match.

    Examples
    --------
    >>> from skpapers.testing import assert_same_partition
    >>> assert_same_partition([0, 0, 1, 2], [5, 5, 3, 0])
    """
    labels, other = np.asarray(labels).ravel(), np.asarray(other).ravel()
    if labels.shape != other.shape:
        raise AssertionError(f"labelings of {labels.size} and {other.size} samples")
    _, first = np.unique(labels, return_inverse=True)
    _, second = np.unique(other, return_inverse=True)
    table = np.zeros((first.max(initial=-1) + 1, second.max(initial=-1) + 1), dtype=int)
    np.add.at(table, (first, second), 1)
    shared = np.count_nonzero(table)
    if shared != table.shape[0] or shared != table.shape[1]:
        off = labels.size - int(table[linear_sum_assignment(-table)].sum())
        raise AssertionError(
            f"not the same partition: {table.shape[0]} and {table.shape[1]} clusters; "
            f"{off} of {labels.size} samples lie outside the best matching of the clusters"
        )


def assert_allclose_up_to_column_order(A, B, *, rtol=1e-7, atol=0.0):
    """Assert that ``B`` equals ``A`` once its columns are put in the best matching order.

    For membership matrices (a low-rank plan's factors, soft assignments) whose
    columns are clusters numbered differently by two runs. The columns of
    ``B`` are matched to those of ``A`` by the smallest total squared
    difference, then compared with :func:`numpy.testing.assert_allclose`.

    Parameters
    ----------
    A, B : array-like of shape (n_samples, n_clusters)
        The two matrices.
    rtol, atol : float
        Tolerances of :func:`numpy.testing.assert_allclose`.

    Returns
    -------
    order : ndarray of shape (n_clusters,)
        Column ``order[k]`` of ``B`` matches column ``k`` of ``A``.

    Examples
    --------
    >>> import numpy as np
    >>> from skpapers.testing import assert_allclose_up_to_column_order
    >>> Q = np.array([[0.5, 0.0], [0.0, 0.5]])
    >>> assert_allclose_up_to_column_order(Q, Q[:, ::-1])
    array([1, 0])
    """
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.shape != B.shape:
        raise AssertionError(f"shapes {A.shape} and {B.shape} differ")
    gap = (A * A).sum(0)[:, None] + (B * B).sum(0)[None, :] - 2 * A.T @ B
    _, order = linear_sum_assignment(gap)
    np.testing.assert_allclose(B[:, order], A, rtol=rtol, atol=atol)
    return order
