# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Hierarchy kernels shared by clustering, metrics and data sets.

A flat-array k-ary hierarchy (:class:`HierarchyTree`), conversions from
scipy/sklearn formats, cuts, the Dasgupta cost from similarity rows, group
encoding, per-node group counts and the fairness summary. Every traversal here
is iterative (explicit stacks or row-order sweeps): an average-linkage tree can
be ``n - 1`` levels deep.
"""

import heapq
import math
import numbers

import numpy as np
from scipy import sparse

__all__ = [
    "HierarchyTree",
    "as_hierarchy",
    "cost_from_rows",
    "cost_from_weights",
    "encode_groups",
    "fairness_from_counts",
    "fairness_threshold",
    "format_label",
    "group_counts",
    "merge_distances",
    "monotone_heights",
    "node_weights",
]


class HierarchyTree:
    """A rooted k-ary hierarchy stored in flat arrays (picklable, no objects).

    Leaves are nodes ``0 .. n_leaves - 1`` in sample order; internal nodes are
    ``n_leaves .. n_nodes - 1`` (in the fitted ``tree_`` they are numbered in
    breadth-first order, so the root is ``n_leaves``). Children are stored in CSR form: the
    children of node ``u`` are ``children[children_ptr[u]:children_ptr[u + 1]]``.

    Parameters
    ----------
    parent : ndarray of shape (n_nodes,)
        Parent of every node, ``-1`` for the root.
    children_ptr : ndarray of shape (n_nodes + 1,)
        CSR offsets into ``children``.
    children : ndarray of shape (n_nodes - 1,)
        Concatenated child lists.
    group_counts : ndarray of shape (n_nodes, n_groups), default=None
        Number of leaves of each group below every node; ``None`` means one group.
    height : ndarray of shape (n_nodes,), default=None
        Merge distance of every node (0 for the leaves), never below its
        children's; ``None`` when unknown (then ``to_linkage`` draws sizes).

    Attributes
    ----------
    n_leaves : int
        Number of leaves (samples).
    n_nodes : int
        Number of nodes, leaves included.
    root : int
        Root node id (the node without a parent).
    order : ndarray of shape (n_leaves,)
        Leaves in depth-first order: every node covers a contiguous range.
    left, right : ndarray of shape (n_nodes,)
        Range ``order[left[u]:right[u]]`` of the leaves below node ``u``.
    size : ndarray of shape (n_nodes,)
        Number of leaves below every node.
    depth : ndarray of shape (n_nodes,)
        Depth of every node (root = 0).
    height : ndarray of shape (n_nodes,) or None
        The ``height`` passed in. In the fitted ``tree_``: the mean distance
        ``max(S) - S`` between the node's children, raised to the largest
        height below it (see ``FairHierarchicalClustering.linkage_matrix_``).
    """

    def __init__(self, parent, children_ptr, children, group_counts=None, height=None):
        self.parent = np.asarray(parent, dtype=np.intp)
        self.children_ptr = np.asarray(children_ptr, dtype=np.intp)
        self.children = np.asarray(children, dtype=np.intp)
        self.n_nodes = self.parent.shape[0]
        n_child = np.diff(self.children_ptr)
        self.n_leaves = int(np.count_nonzero(n_child == 0))
        roots = np.flatnonzero(self.parent < 0)
        if roots.shape[0] != 1:
            raise ValueError("A hierarchy must have exactly one root.")
        self.root = int(roots[0])
        self.order, self.left, self.right, preorder = _intervals(
            self.children_ptr, self.children, self.root, self.n_leaves
        )
        self.size = self.right - self.left
        self.depth = np.zeros(self.n_nodes, dtype=np.intp)
        for u in preorder[1:]:  # parents come before children in pre-order
            self.depth[u] = self.depth[self.parent[u]] + 1
        if group_counts is None:
            group_counts = self.size[:, None].copy()
        self.group_counts = np.asarray(group_counts, dtype=np.int64)
        if height is not None:
            height = np.asarray(height, dtype=np.float64)
            if height.shape != (self.n_nodes,):
                raise ValueError(
                    f"height must have one entry per node ({self.n_nodes}); got {height.shape}."
                )
            kid = np.flatnonzero(self.parent >= 0)
            if np.any(height[self.parent[kid]] < height[kid]):
                raise ValueError("height must never be below a child's height.")
        self.height = height

    def children_of(self, node):
        """Return the children of a node.

        Parameters
        ----------
        node : int
            Node id (leaves are ``0 .. n_leaves - 1``).

        Returns
        -------
        children : ndarray of int
            Ids of its children (empty for a leaf).
        """
        return self.children[self.children_ptr[node] : self.children_ptr[node + 1]]

    def leaves_of(self, node):
        """Return the samples below a node.

        Parameters
        ----------
        node : int
            Node id.

        Returns
        -------
        samples : ndarray of int
            Indices of the samples (leaves) in the subtree of ``node``.
        """
        return self.order[self.left[node] : self.right[node]]

    def cut(self, n_clusters=None, depth=None):
        """Flat clusters of the hierarchy.

        Parameters
        ----------
        n_clusters : int, default=None
            Exact number of clusters, obtained top-down: the largest non-leaf
            cluster is replaced by its children; when that would overshoot, its
            children are split off one at a time (largest first) and the rest
            is kept as one union of siblings. ``None`` (and ``depth=None``):
            the root's children.
        depth : int, default=None
            Cut at this depth instead: the nodes at that depth, plus the leaves
            above it.

        Returns
        -------
        labels : ndarray of shape (n_leaves,)
            Contiguous labels ``0 .. K - 1``.
        """
        if n_clusters is not None and depth is not None:
            raise ValueError("Pass n_clusters or depth, not both.")
        if depth is not None:
            members = [[u] for u in self._nodes_at_depth(depth)]
        elif n_clusters is None:
            members = [[int(u)] for u in self.children_of(self.root)] or [[self.root]]
        else:
            members = self._cut_exact(n_clusters)
        labels = np.empty(self.n_leaves, dtype=np.intp)
        for lab, nodes in enumerate(members):
            for u in nodes:
                labels[self.leaves_of(u)] = lab
        return labels

    def _nodes_at_depth(self, depth):
        leaf = np.diff(self.children_ptr) == 0
        mask = (self.depth == depth) | (leaf & (self.depth < depth))
        return [int(u) for u in np.flatnonzero(mask)]

    def _cut_exact(self, n_clusters):
        if not isinstance(n_clusters, numbers.Integral) or n_clusters < 1:
            raise ValueError(f"n_clusters must be a positive integer, got {n_clusters!r}.")
        if n_clusters > self.n_leaves:
            raise ValueError(
                f"n_clusters = {n_clusters} exceeds the number of samples "
                f"n_samples = {self.n_leaves}."
            )
        heap = [(-int(self.size[self.root]), self.root)]
        done = []  # leaves popped from the heap
        count = 1
        while count < n_clusters:
            neg, u = heapq.heappop(heap)
            kids = sorted(self.children_of(u), key=lambda c: (-self.size[c], c))
            if count - 1 + len(kids) <= n_clusters:
                for c in kids:
                    heapq.heappush(heap, (-int(self.size[c]), int(c)))
                count += len(kids) - 1
            else:
                need = n_clusters - count  # split off `need` children, keep the rest
                for c in kids[:need]:
                    heapq.heappush(heap, (-int(self.size[c]), int(c)))
                done.append([int(c) for c in kids[need:]])
                count = n_clusters
        members = done + [[u] for _, u in sorted(heap, key=lambda t: t[1])]
        return members

    def to_linkage(self, heights="size", return_nodes=False):
        """Binarised scipy linkage matrix of the hierarchy.

        A node with ``m > 2`` children becomes a chain of ``m - 1`` merges, all
        at the node's height, so heights are monotone. The extra chain clusters
        exist only in this view.

        Parameters
        ----------
        heights : {"size", "distance"}, default="size"
            ``"size"``: a node's height is its number of samples (the drawing of
            a balanced tree). ``"distance"``: the node's merge distance
            (the ``height`` attribute; the fitted estimator's
            ``linkage_matrix_``).
        return_nodes : bool, default=False
            Also return the node of the hierarchy every row belongs to.

        Returns
        -------
        Z : ndarray of shape (n_leaves - 1, 4)
            ``[a, b, height, size]`` rows in non-decreasing height order.
        nodes : ndarray of shape (n_leaves - 1,)
            Node id of every row (a node of m children owns m - 1 rows); only
            with ``return_nodes=True``.
        """
        if heights not in ("size", "distance"):
            raise ValueError(f"heights must be 'size' or 'distance'; got {heights!r}.")
        if heights == "distance" and self.height is None:
            raise ValueError("This hierarchy has no merge distances (height is None).")
        level = self.size if heights == "size" else self.height
        n = self.n_leaves
        Z = np.empty((max(n - 1, 0), 4), dtype=np.float64)
        nodes = np.empty(max(n - 1, 0), dtype=np.intp)
        zid = np.full(self.n_nodes, -1, dtype=np.intp)
        zid[:n] = np.arange(n)
        row = 0
        for u in self._postorder():
            kids = self.children_of(u)
            if kids.shape[0] == 0:
                continue
            cur = zid[kids[0]]
            cur_size = self.size[kids[0]]
            for c in kids[1:]:
                cur_size += self.size[c]
                Z[row] = (cur, zid[c], level[u], cur_size)
                nodes[row] = u
                cur = n + row
                row += 1
            zid[u] = cur
        # stable sort by height keeps children before parents; remap the ids
        perm = np.argsort(Z[:, 2], kind="stable")
        inv = np.empty_like(perm)
        inv[perm] = np.arange(perm.shape[0])
        Z = Z[perm]
        ids = Z[:, :2].astype(np.intp)
        merged = ids >= n
        ids[merged] = n + inv[ids[merged] - n]
        Z[:, :2] = np.sort(ids, axis=1)
        return (Z, nodes[perm]) if return_nodes else Z

    def _postorder(self):
        out = []
        stack = [self.root]
        while stack:
            u = stack.pop()
            out.append(u)
            stack.extend(self.children_of(u).tolist())
        out.reverse()
        return out


def _intervals(children_ptr, children, root, n_leaves):
    """Leaf order (DFS) and leaf interval [left, right) of every node."""
    n_nodes = children_ptr.shape[0] - 1
    left = np.zeros(n_nodes, dtype=np.intp)
    right = np.zeros(n_nodes, dtype=np.intp)
    order = np.empty(n_leaves, dtype=np.intp)
    preorder = []
    pos = 0
    stack = [root]
    ptr = children_ptr.tolist()
    kids_all = children.tolist()
    while stack:
        u = stack.pop()
        preorder.append(u)
        a, b = ptr[u], ptr[u + 1]
        left[u] = pos
        if a == b:
            if pos >= n_leaves:
                raise ValueError("The hierarchy has more leaves than expected.")
            order[pos] = u
            pos += 1
        else:
            stack.extend(reversed(kids_all[a:b]))
    if pos != n_leaves:
        raise ValueError("The hierarchy does not reach every leaf from its root.")
    # right = left + number of leaves: reverse pre-order accumulates sizes
    size = np.zeros(n_nodes, dtype=np.intp)
    parent_of = np.full(n_nodes, -1, dtype=np.intp)
    counts = np.diff(children_ptr)
    parent_of[children] = np.repeat(np.arange(n_nodes), counts)
    size[counts == 0] = 1
    size_l = size.tolist()
    par_l = parent_of.tolist()
    for u in reversed(preorder[1:]):
        size_l[par_l[u]] += size_l[u]
    right[:] = left + np.asarray(size_l, dtype=np.intp)
    return order, left, right, preorder


def _from_merges(merges, n):
    """Parent array / CSR children of a binary tree given as (n - 1, 2) merges."""
    merges = np.asarray(merges)
    if merges.ndim != 2 or merges.shape[0] != n - 1 or merges.shape[1] < 2:
        raise ValueError(f"Expected (n_samples - 1, 2) merges, got shape {merges.shape}.")
    kids = merges[:, :2].astype(np.intp)
    if not np.array_equal(kids, merges[:, :2]) or kids.min() < 0 or kids.max() > 2 * n - 3:
        raise ValueError("Merge ids must be integers in [0, 2 * n_samples - 2).")
    n_nodes = 2 * n - 1
    parent = np.full(n_nodes, -1, dtype=np.intp)
    flat = kids.ravel()
    if np.unique(flat).shape[0] != flat.shape[0]:
        raise ValueError("A node is merged twice: not a valid hierarchy.")
    parent[flat] = np.repeat(np.arange(n, n_nodes), 2)
    ptr = np.concatenate([np.zeros(n + 1, dtype=np.intp), 2 * np.arange(1, n)])
    return parent, ptr, flat


def as_hierarchy(tree, n_samples=None):
    """Convert a ``HierarchyTree``, scipy linkage ``Z`` or sklearn ``children_``.

    Parameters
    ----------
    tree : HierarchyTree or array-like of shape (n - 1, 4) or (n - 1, 2)
        The hierarchy.
    n_samples : int, default=None
        Expected number of leaves (checked when given).

    Returns
    -------
    tree : HierarchyTree
    """
    if isinstance(tree, HierarchyTree):
        out = tree
    else:
        if sparse.issparse(tree):
            raise TypeError("tree must be a HierarchyTree, a linkage matrix or children_.")
        arr = np.asarray(tree)
        if arr.ndim != 2 or arr.shape[1] not in (2, 4):
            raise ValueError(
                "tree must be a HierarchyTree, a scipy linkage matrix of shape "
                f"(n - 1, 4) or an sklearn children_ array (n - 1, 2); got shape {arr.shape}."
            )
        if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)):
            raise ValueError("tree must hold finite numbers.")
        n = arr.shape[0] + 1
        out = HierarchyTree(*_from_merges(arr, n))
    if n_samples is not None and out.n_leaves != n_samples:
        raise ValueError(
            f"The tree has {out.n_leaves} leaves but the data has {n_samples} samples."
        )
    return out


def _row_block_size(n):
    """Rows per block so that a dense float64 block holds about 1 M entries."""
    return int(max(1, min(n, 1_000_000 // max(n, 1))))


def node_weights(tree, row_block):
    """Similarity inside every node, and the largest similarity between two samples.

    ``row_block(rows, cols)`` returns the dense (len(rows), len(cols)) block of the
    similarity for original sample indices. Leaves are put in depth-first order,
    so each node ``u`` covers a contiguous range [l, r); with P the 2-D prefix sum
    of the zero-diagonal similarity in that order, the weight inside ``u`` is
    W(u) = (P[r, r] - P[l, r] - P[r, l] + P[l, l]) / 2 (a non-symmetric matrix
    thus counts as (S + S.T) / 2). P is needed only at 4 points per node; they
    are read in one sweep over row blocks (memory O(block * n)).

    Returns
    -------
    inside : ndarray of shape (n_nodes,)
        W(u) for every node (0 for the leaves).
    smax : float
        The largest off-diagonal entry of the similarity.
    """
    n = tree.n_leaves
    order = tree.order
    internal = np.flatnonzero(np.diff(tree.children_ptr) > 0)
    lo, hi = tree.left[internal], tree.right[internal]
    qa = np.concatenate([hi, lo, lo, hi])  # P[row, col] at the four corners
    qb = np.concatenate([hi, hi, lo, lo])
    vals = np.zeros(qa.shape[0], dtype=np.float64)
    by_row = np.argsort(qa, kind="stable")
    qa_sorted = qa[by_row]
    running = np.zeros(n + 1, dtype=np.float64)
    smax = 0.0
    step = _row_block_size(n)
    for s in range(0, n, step):
        e = min(n, s + step)
        block = np.asarray(row_block(order[s:e], order), dtype=np.float64)  # a fresh array
        block[np.arange(e - s), np.arange(s, e)] = 0.0
        smax = max(smax, float(block.max(initial=0.0)))
        np.cumsum(block, axis=1, out=block)  # row prefix sums, in place
        i0 = np.searchsorted(qa_sorted, s + 1, side="left")
        i1 = np.searchsorted(qa_sorted, e, side="right")
        sel = by_row[i0:i1]
        if sel.shape[0]:
            # P[a, b] = running[b] + sum of the block's first a - s rows over cols < b;
            # only the queried columns are summed down the rows
            cols, inv = np.unique(qb[sel], return_inverse=True)
            sub = np.zeros((e - s, cols.shape[0]), dtype=np.float64)
            nonzero = cols > 0
            sub[:, nonzero] = block[:, cols[nonzero] - 1]
            np.cumsum(sub, axis=0, out=sub)
            vals[sel] = running[qb[sel]] + sub[qa[sel] - s - 1, inv]
        running[1:] += block.sum(axis=0)
    m = internal.shape[0]
    inside = np.zeros(tree.n_nodes, dtype=np.float64)
    inside[internal] = 0.5 * (vals[:m] - vals[m : 2 * m] + vals[2 * m : 3 * m] - vals[3 * m :])
    return inside, smax


def cost_from_weights(tree, inside):
    """Dasgupta cost from the weight inside every node: sum_u W(u) (|u| - |parent(u)|)."""
    internal = np.flatnonzero(np.diff(tree.children_ptr) > 0)
    size = tree.size[internal].astype(np.float64)
    par = tree.parent[internal]
    par_size = np.where(par >= 0, tree.size[np.maximum(par, 0)], 0).astype(np.float64)
    return float(np.dot(inside[internal], size - par_size))


def cost_from_rows(tree, row_block):
    """Dasgupta cost of ``tree`` given a function returning dense similarity rows.

    See :func:`node_weights` for ``row_block`` and the method.
    """
    return cost_from_weights(tree, node_weights(tree, row_block)[0])


def merge_distances(tree, inside, smax):
    """Height of every node: the mean distance between its children, made monotone.

    The distance is the base linkage's, ``max(S) - S``: for a node with
    children ``C_1 .. C_m`` the mean over pairs in different children is
    ``smax - (W(u) - sum_c W(c)) / (number of such pairs)``; average linkage
    merges two clusters at exactly this height. Every node is then raised to
    the largest height below it (a running maximum from the leaves), so that
    a parent is never below a child. Leaves are at 0.

    Parameters
    ----------
    tree : HierarchyTree
    inside : ndarray of shape (n_nodes,)
        Weight inside every node (:func:`node_weights`).
    smax : float
        Largest off-diagonal similarity.

    Returns
    -------
    height : ndarray of shape (n_nodes,)
    """
    kid = np.flatnonzero(tree.parent >= 0)
    par = tree.parent[kid]
    size = tree.size.astype(np.float64)
    child_inside = np.bincount(par, inside[kid], minlength=tree.n_nodes)
    child_sq = np.bincount(par, size[kid] ** 2, minlength=tree.n_nodes)
    pairs = np.where(np.diff(tree.children_ptr) > 0, 0.5 * (size**2 - child_sq), 0.0)
    cross = np.divide(inside - child_inside, pairs, out=np.zeros_like(size), where=pairs > 0)
    height = np.where(pairs > 0, np.maximum(smax - cross, 0.0), 0.0)
    return monotone_heights(tree, height)


def monotone_heights(tree, height):
    """Raise every node to the largest height below it (children first)."""
    height = np.asarray(height, dtype=np.float64).tolist()
    parent = tree.parent.tolist()
    for u in np.argsort(-tree.depth, kind="stable").tolist():
        p = parent[u]
        if p >= 0 and height[u] > height[p]:
            height[p] = height[u]
    return np.asarray(height)


def _plain(value):
    """Return a label as the user wrote it (numpy scalars become Python scalars)."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value.item() if isinstance(value, np.generic) else value


def format_label(value):
    """Return the ``repr`` of a label without numpy wrappers (``np.str_``)."""
    return repr(_plain(value))


def _encode_column(values):
    try:
        groups, codes = np.unique(values, return_inverse=True)
    except TypeError:  # mixed, unorderable labels: order by their repr
        keys = {v: None for v in values.tolist()}
        groups = np.empty(len(keys), dtype=object)
        groups[:] = sorted(keys, key=repr)
        lookup = {v: i for i, v in enumerate(groups.tolist())}
        codes = np.asarray([lookup[v] for v in values.tolist()], dtype=np.intp)
    return codes.reshape(-1).astype(np.intp), groups


def encode_groups(sensitive_features, n_samples=None, index=None):
    """Integer codes and sorted distinct labels of any hashable labels.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
        Group labels; several columns (a 2-D array or a DataFrame) define
        intersectional groups, one per distinct row (labels are tuples).
    n_samples : int, default=None
        Expected length (checked when given).
    index : pandas Index, default=None
        Index of a DataFrame ``X``: a pandas ``sensitive_features`` must have
        the same index (it is never matched by position silently).

    Returns
    -------
    codes : ndarray of shape (n_samples,)
        Group code of every sample, ``0 .. n_groups - 1``.
    groups : ndarray of shape (n_groups,)
        Sorted distinct labels (tuples for several columns).
    """
    sf_index = getattr(sensitive_features, "index", None)
    if index is not None and sf_index is not None and hasattr(sf_index, "equals"):
        if len(sf_index) == len(index) and not sf_index.equals(index):
            raise ValueError(
                "sensitive_features has a pandas index different from X's index; "
                "align it (e.g. s.loc[X.index] or s.reindex(X.index)) or pass "
                "s.to_numpy() to match rows by position."
            )
    if hasattr(sensitive_features, "to_numpy"):
        values = sensitive_features.to_numpy()
    else:
        values = np.asarray(sensitive_features, dtype=object)
        if values.ndim > 0 and values.dtype == object:
            try:  # keep a homogeneous numeric or string array typed
                typed = np.asarray(sensitive_features)
            except ValueError:
                typed = values
            mixed = typed.dtype.kind in "US" and not all(
                isinstance(v, str) for v in values.ravel().tolist()
            )  # numpy would turn 1 into '1': keep the labels as written
            values = typed if typed.shape == values.shape and not mixed else values
    if values.ndim not in (1, 2) or (values.ndim == 2 and values.shape[1] == 0):
        raise ValueError(
            "sensitive_features must be 1-D (one label per sample) or 2-D (one "
            f"column per attribute); got an array of shape {values.shape}."
        )
    if n_samples is not None and values.shape[0] != n_samples:
        raise ValueError(
            f"sensitive_features has {values.shape[0]} entries but X has n_samples = {n_samples}."
        )
    import pandas as pd  # a dependency; imported here to keep this module light

    missing = np.asarray(pd.isna(values))
    if missing.ndim == 2:
        missing = missing.any(axis=1)
    if np.any(missing):
        where = np.flatnonzero(missing)
        first = ", ".join(str(int(i)) for i in where[:5])
        raise ValueError(
            f"sensitive_features has {where.shape[0]} missing labels (NaN, None or "
            f"pd.NA), first at positions {first}. Give every sample a group, e.g. "
            "an explicit 'unknown' label."
        )
    if values.ndim == 1:
        return _encode_column(values)
    columns = [_encode_column(values[:, j]) for j in range(values.shape[1])]
    stacked = np.stack([c for c, _ in columns], axis=1)
    rows, codes = np.unique(stacked, axis=0, return_inverse=True)
    groups = np.empty(rows.shape[0], dtype=object)
    groups[:] = [tuple(_plain(columns[j][1][r[j]]) for j in range(len(columns))) for r in rows]
    return codes.reshape(-1).astype(np.intp), groups


def group_counts(tree, codes, n_groups):
    """(n_nodes, n_groups) number of leaves of every group below every node."""
    onehot = np.zeros((tree.n_leaves + 1, n_groups), dtype=np.int64)
    onehot[np.arange(1, tree.n_leaves + 1), codes[tree.order]] = 1
    cum = np.cumsum(onehot, axis=0)
    return cum[tree.right] - cum[tree.left]


def fairness_threshold(h, epsilon):
    """Smallest cluster size whose group shares fair HC controls, ``max(h, ceil(1/(2 eps)))``.

    Clusters below it are too small to hold every group near its global share
    (a group of share ``c`` has fewer than one expected member in a cluster of
    size below ``1 / (2 eps)`` when ``c`` is close to ``eps``).
    """
    return int(max(h, math.ceil(1.0 / (2.0 * epsilon))))


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
    else:  # nothing measured: claim nothing
        violation, balance = float("nan"), float("nan")
    return {
        "violation": violation,
        "min_balance": balance,
        "proportions": prop,
        "sizes": sizes,
        "evaluated": evaluated,
        "groups": groups,
    }
