# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Array kernels for hierarchy costs and group fairness (used by skpapers.metrics)."""

import numpy as np

__all__ = ["cost_from_rows", "encode_groups", "fairness_from_counts", "group_counts"]


def _row_block_size(n):
    """Rows per block so that a dense float64 block holds about 1 M entries."""
    return int(max(1, min(n, 1_000_000 // max(n, 1))))


def cost_from_rows(tree, row_block):
    """Dasgupta cost of ``tree`` given a function returning dense similarity rows.

    ``row_block(rows, cols)`` returns the dense (len(rows), len(cols)) block of the
    similarity for original sample indices. Leaves are put in depth-first order,
    so each node ``u`` covers a contiguous range [l, r); with P the 2-D prefix sum
    of the zero-diagonal similarity in that order, the weight inside ``u`` is
    W(u) = (P[r, r] - 2 P[l, r] + P[l, l]) / 2 and
    cost = sum_u W(u) (|u| - |parent(u)|). P is needed only at 3 points per node;
    they are read in one sweep over row blocks (memory O(block * n)).
    """
    n = tree.n_leaves
    order = tree.order
    internal = np.flatnonzero(np.diff(tree.children_ptr) > 0)
    lo, hi = tree.left[internal], tree.right[internal]
    qa = np.concatenate([hi, lo, lo])  # P[a, b] with a <= b
    qb = np.concatenate([hi, hi, lo])
    vals = np.zeros(qa.shape[0], dtype=np.float64)
    by_row = np.argsort(qa, kind="stable")
    qa_sorted = qa[by_row]
    running = np.zeros(n + 1, dtype=np.float64)
    step = _row_block_size(n)
    for s in range(0, n, step):
        e = min(n, s + step)
        block = np.asarray(row_block(order[s:e], order), dtype=np.float64)  # a fresh array
        block[np.arange(e - s), np.arange(s, e)] = 0.0
        cum = np.zeros((e - s, n + 1), dtype=np.float64)
        np.cumsum(block, axis=1, out=cum[:, 1:])
        np.cumsum(cum, axis=0, out=cum)
        cum += running
        i0 = np.searchsorted(qa_sorted, s + 1, side="left")
        i1 = np.searchsorted(qa_sorted, e, side="right")
        sel = by_row[i0:i1]
        vals[sel] = cum[qa[sel] - s - 1, qb[sel]]
        running = cum[-1].copy()
    m = internal.shape[0]
    weight = 0.5 * (vals[:m] - 2.0 * vals[m : 2 * m] + vals[2 * m :])
    size = tree.size[internal].astype(np.float64)
    par = tree.parent[internal]
    par_size = np.where(par >= 0, tree.size[np.maximum(par, 0)], 0).astype(np.float64)
    return float(np.dot(weight, size - par_size))


def encode_groups(sensitive_features):
    """Integer codes and sorted distinct labels of any hashable labels."""
    values = np.asarray(getattr(sensitive_features, "to_numpy", lambda: sensitive_features)())
    if values.ndim != 1:
        raise ValueError(
            f"sensitive_features must be 1-D, got an array of shape {values.shape}."
        )
    try:
        groups, codes = np.unique(values, return_inverse=True)
    except TypeError:  # mixed, unorderable labels: order by their repr
        keys = {v: None for v in values.tolist()}
        groups = np.empty(len(keys), dtype=object)
        groups[:] = sorted(keys, key=repr)
        lookup = {v: i for i, v in enumerate(groups.tolist())}
        codes = np.asarray([lookup[v] for v in values.tolist()], dtype=np.intp)
    return codes.reshape(-1).astype(np.intp), groups


def group_counts(tree, codes, n_groups):
    """(n_nodes, n_groups) number of leaves of every group below every node."""
    onehot = np.zeros((tree.n_leaves + 1, n_groups), dtype=np.int64)
    onehot[np.arange(1, tree.n_leaves + 1), codes[tree.order]] = 1
    cum = np.cumsum(onehot, axis=0)
    return cum[tree.right] - cum[tree.left]


def fairness_from_counts(counts, min_size, groups=None):
    """Fairness summary from per-node group counts (see :func:`cluster_fairness`)."""
    sizes = counts.sum(axis=1)
    n = sizes.max()
    global_prop = counts[np.argmax(sizes)] / n
    prop = counts / np.maximum(sizes, 1)[:, None]
    evaluated = sizes >= min_size
    if np.any(evaluated):
        sub = prop[evaluated]
        violation = float(np.max(np.abs(sub - global_prop)))
        balance = float(np.min(sub / global_prop))
    else:
        violation, balance = 0.0, 1.0
    return {
        "violation": violation,
        "min_balance": balance,
        "proportions": prop,
        "sizes": sizes,
        "evaluated": evaluated,
        "groups": groups,
    }
