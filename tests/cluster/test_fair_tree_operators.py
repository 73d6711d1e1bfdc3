# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tree operators: leaf set and counts preserved, size windows, balance, folding."""

import math

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage

from skpapers.cluster._fair_hierarchical.tree_operators import (
    WorkTree,
    fair_hc,
    fold_stride,
    make_fair,
    rebalance_tree,
    refine_rebalance_tree,
    split_root,
)
from skpapers.utils._hierarchy import HierarchyTree, as_hierarchy


def _caterpillar(n):
    """The deepest binary tree: ((((0, 1), 2), 3), ...), n - 1 levels."""
    Z = np.empty((n - 1, 4))
    Z[0] = (0, 1, 1, 2)
    for i in range(1, n - 1):
        Z[i] = (n + i - 1, i + 1, i + 1, i + 2)
    return Z


def _tree(n, seed, deep=False):
    if deep:
        return as_hierarchy(_caterpillar(n))
    rng = np.random.default_rng(seed)
    return as_hierarchy(linkage(rng.normal(size=(n, 3)), "average"))


def _check_valid(work, groups, n_groups):
    """The tree reaches every leaf once, has no unary node, counts are exact."""
    tree = work.to_hierarchy()  # raises on lost/duplicated leaves or unary nodes
    np.testing.assert_array_equal(np.sort(tree.order), np.arange(tree.n_leaves))
    internal = np.diff(tree.children_ptr) > 0
    assert np.all(np.diff(tree.children_ptr)[internal] >= 2)
    onehot = np.eye(n_groups, dtype=np.int64)[groups[tree.order]]
    cum = np.vstack([np.zeros(n_groups, dtype=np.int64), np.cumsum(onehot, axis=0)])
    np.testing.assert_array_equal(tree.group_counts, cum[tree.right] - cum[tree.left])
    np.testing.assert_array_equal(tree.size, tree.group_counts.sum(axis=1))
    return tree


@pytest.mark.parametrize("deep", [False, True])
@pytest.mark.parametrize("n_groups", [2, 4])
def test_operators_preserve_leaves_and_counts(deep, n_groups):
    n = 300
    rng = np.random.default_rng(1)
    groups = rng.integers(0, n_groups, size=n)
    base = _tree(n, 0, deep=deep)
    eps = 1 / (4 * math.log2(n))
    work = WorkTree(base, groups, n_groups)
    make_fair(work, 8, 2, eps, 1000)
    _check_valid(work, groups, n_groups)
    work = WorkTree(base, groups, n_groups)
    rebalance_tree(work)
    _check_valid(work, groups, n_groups)
    refine_rebalance_tree(work, eps)
    _check_valid(work, groups, n_groups)
    fair_hc(work, 8, 2)
    _check_valid(work, groups, n_groups)


def test_deep_tree_has_no_recursion_limit():
    n = 5000  # far beyond Python's default recursion limit of 1000
    groups = np.arange(n) % 2
    work = WorkTree(_tree(n, 0, deep=True), groups, 2)
    rebalance_tree(work)
    tree = _check_valid(work, groups, 2)
    assert tree.depth.max() <= math.log(n, 1.5) + 1  # 1/3-2/3 splits: logarithmic depth
    work = WorkTree(_tree(n, 0, deep=True), groups, 2)
    make_fair(work, 4, 2, 1 / 16, 10_000)
    _check_valid(work, groups, 2)


@pytest.mark.parametrize("h", [4, 8, 16])
@pytest.mark.parametrize("deep", [False, True])
def test_split_root_sizes_inside_window(h, deep):
    n, eps = 512, 1 / 32
    work = WorkTree(_tree(n, h, deep=deep), np.zeros(n, dtype=int), 1)
    converged = split_root(work, work.root, h, eps, 10_000)
    assert converged
    sizes = np.array([work.sz[c] for c in work.ch[work.root]])
    assert sizes.shape[0] == h and sizes.sum() == n
    assert np.all(sizes >= (1 / h - eps) * n) and np.all(sizes <= (1 / h + eps) * n)
    _check_valid(work, np.zeros(n, dtype=int), 1)


def test_rebalance_and_refine_balance():
    n = 1000
    eps = 1 / (4 * math.log2(n))
    work = WorkTree(_tree(n, 3), np.zeros(n, dtype=int), 1)
    rebalance_tree(work)
    tree = _check_valid(work, np.zeros(n, dtype=int), 1)
    for u in range(n, tree.n_nodes):
        kids = tree.children_of(u)
        assert kids.shape[0] == 2
        assert tree.size[kids].max() <= 2 / 3 * tree.size[u] + 1e-9
    refine_rebalance_tree(work, eps)
    tree = _check_valid(work, np.zeros(n, dtype=int), 1)
    big = tree.size >= 1 / (2 * eps)
    for u in np.flatnonzero(big & (np.diff(tree.children_ptr) > 0)):
        share = tree.size[tree.children_of(u)].max() / tree.size[u]
        # integer sizes: within (1/2 + eps) up to one leaf
        assert share < 0.5 + eps + 1 / tree.size[u]


@pytest.mark.parametrize("h,k", [(4, 2), (8, 2), (16, 4), (12, 3)])
def test_stride_fold_contracts_the_spread(h, k):
    # a star of h equal parts of size 10 with known red counts: each stride
    # group's proportion is within (k / h) * spread of the parent's
    rng = np.random.default_rng(h + k)
    n_red = rng.permutation(np.linspace(0, 10, h).round().astype(int))
    groups = np.concatenate([np.r_[np.ones(r, int), np.zeros(10 - r, int)] for r in n_red])
    n = 10 * h
    parent = np.r_[np.repeat(n + 1 + np.arange(h), 10), -1, np.full(h, n)]
    ptr = np.r_[np.zeros(n + 1, int), h, h + 10 * np.arange(1, h + 1)]
    kids = np.r_[np.arange(n + 1, n + 1 + h), np.arange(n)]
    work = WorkTree(HierarchyTree(parent, ptr, kids), groups, 2)
    fold_stride(work, work.root, k)
    assert len(work.ch[work.root]) == k
    prop = np.array([work.cnt[g, 1] / work.sz[g] for g in work.ch[work.root]])
    spread = (n_red.max() - n_red.min()) / 10
    assert np.all(np.abs(prop - groups.mean()) <= k / h * spread + 1e-12)
    # contiguous blocks of the sorted list (one port's grouping) are far less fair
    blocks = np.sort(n_red)[::-1].reshape(k, h // k).mean(axis=1) / 10
    assert np.max(np.abs(blocks - groups.mean())) > 2 * np.max(np.abs(prop - groups.mean()))
    _check_valid(work, groups, 2)
