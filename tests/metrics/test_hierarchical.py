# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dasgupta cost against brute-force LCA sums and known optima; cluster fairness."""

import itertools

import numpy as np
import pytest
from scipy import sparse
from scipy.cluster.hierarchy import linkage

from skpapers.cluster._fair_hierarchical.tree_operators import WorkTree
from skpapers.datasets import stratified_subsample
from skpapers.metrics import cluster_fairness, dasgupta_cost
from skpapers.utils._hierarchy import HierarchyTree, as_hierarchy


def _brute_force_cost(S, parent, n):
    """Sum over unordered pairs of S_ij * |leaves(lca)| from parent pointers."""
    n_nodes = len(parent)
    size = np.zeros(n_nodes, dtype=int)
    for leaf in range(n):
        u = leaf
        while u >= 0:
            size[u] += 1
            u = parent[u]

    def ancestors(u):
        out = []
        while u >= 0:
            out.append(u)
            u = parent[u]
        return out

    total = 0.0
    for i, j in itertools.combinations(range(n), 2):
        anc_i = ancestors(i)
        anc_j = set(ancestors(j))
        lca = next(a for a in anc_i if a in anc_j)
        total += S[i, j] * size[lca]
    return total


def _random_similarity(n, rng):
    A = rng.random((n, n))
    S = A + A.T
    np.fill_diagonal(S, 5.0)  # the diagonal must be ignored
    return S


def _random_kary(n, rng):
    """A random k-ary tree: random binary merges, then random unary-free folds."""
    Z = linkage(rng.random((n, 2)), "average")
    tree = as_hierarchy(Z)
    work = WorkTree(tree, np.zeros(n, dtype=int), 1)
    for u in range(n, tree.n_nodes):  # fold some nodes into their parents
        p = work.par[u]
        if p >= 0 and work.ch[u] and rng.random() < 0.5:
            work.ch[p].remove(u)
            for c in work.ch[u]:
                work.ch[p].append(c)
                work.par[c] = p
            work.ch[u] = []
            work.par[u] = -2
    return work.to_hierarchy()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [2, 3, 17, 40])
def test_cost_matches_brute_force_all_formats(seed, n):
    rng = np.random.default_rng(seed)
    S = _random_similarity(n, rng)
    Z = linkage(rng.normal(size=(n, 3)), "single")
    parent = np.full(2 * n - 1, -1)
    for i, (a, b) in enumerate(Z[:, :2].astype(int)):
        parent[a] = parent[b] = n + i
    expected = _brute_force_cost(S, parent, n)
    assert dasgupta_cost(S, Z) == pytest.approx(expected, rel=1e-12)
    assert dasgupta_cost(S, Z[:, :2].astype(int)) == pytest.approx(expected, rel=1e-12)
    assert dasgupta_cost(S, as_hierarchy(Z)) == pytest.approx(expected, rel=1e-12)
    S_sparse = sparse.csr_array(S)
    assert dasgupta_cost(S_sparse, Z) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_cost_kary_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 30
    tree = _random_kary(n, rng)
    assert np.max(np.diff(tree.children_ptr)) > 2  # really k-ary
    S = _random_similarity(n, rng)
    S[rng.random((n, n)) < 0.5] = 0.0
    S = np.maximum(S, S.T)
    expected = _brute_force_cost(S, tree.parent, n)
    assert dasgupta_cost(S, tree) == pytest.approx(expected, rel=1e-12)
    assert dasgupta_cost(sparse.csr_matrix(S), tree) == pytest.approx(expected, rel=1e-12)


def test_cost_hand_example_unordered_pairs():
    # 4 points, tree ((0, 1), (2, 3)); w01 = 3, w23 = 2, w02 = 1, others 0
    S = np.zeros((4, 4))
    S[0, 1] = S[1, 0] = 3.0
    S[2, 3] = S[3, 2] = 2.0
    S[0, 2] = S[2, 0] = 1.0
    Z = np.array([[0, 1, 1, 2], [2, 3, 1, 2], [4, 5, 2, 4]], dtype=float)
    # unordered pairs: 3 * 2 + 2 * 2 + 1 * 4 = 14 (the authors' ordered-pair code gives 28)
    assert dasgupta_cost(S, Z) == pytest.approx(14.0)


@pytest.mark.parametrize("n", [3, 6, 11])
def test_every_binary_tree_of_a_clique_costs_the_known_value(n):
    # Dasgupta (2016): on the unit-weight clique every binary tree costs (n^3 - n) / 3
    S = np.ones((n, n))
    rng = np.random.default_rng(n)
    for method in ("single", "average", "complete"):
        Z = linkage(rng.normal(size=(n, 2)), method)
        assert dasgupta_cost(S, Z) == pytest.approx((n**3 - n) / 3)
    # the star (root with all n leaves) pays n for every pair
    star = HierarchyTree(
        np.r_[np.full(n, n), -1], np.r_[np.zeros(n + 1, int), n], np.arange(n)
    )
    assert dasgupta_cost(S, star) == pytest.approx(n * n * (n - 1) / 2)


def test_optimum_on_two_disjoint_edges():
    # graph {0-1, 2-3}: the optimum ((0,1),(2,3)) costs 2 + 2 = 4; every other
    # binary tree on 4 leaves costs more (brute force over all 15 trees)
    S = np.zeros((4, 4))
    S[0, 1] = S[1, 0] = S[2, 3] = S[3, 2] = 1.0
    costs = []
    for first in itertools.combinations(range(4), 2):
        rest = [i for i in range(4) if i not in first]
        Z1 = np.array([[*first, 1, 2], [*rest, 1, 2], [4, 5, 2, 4]], dtype=float)
        costs.append(dasgupta_cost(S, Z1))
        for third in rest:  # caterpillars ((first, third), last)
            last = [i for i in rest if i != third][0]
            Z2 = np.array([[*first, 1, 2], [4, third, 2, 3], [5, last, 3, 4]], dtype=float)
            costs.append(dasgupta_cost(S, Z2))
    assert min(costs) == pytest.approx(4.0)
    # the 3 balanced trees are listed twice each: only ((0,1),(2,3)) reaches 4
    assert sum(np.isclose(c, 4.0) for c in costs) == 2
    opt = np.array([[0, 1, 1, 2], [2, 3, 1, 2], [4, 5, 2, 4]], dtype=float)
    assert dasgupta_cost(S, opt) == pytest.approx(4.0)


def test_cost_input_errors():
    Z = np.array([[0, 1, 1, 2], [2, 3, 2, 3]], dtype=float)
    with pytest.raises(ValueError, match="leaves"):
        dasgupta_cost(np.ones((4, 4)), Z)
    with pytest.raises(ValueError, match="square"):
        dasgupta_cost(np.ones((3, 2)), Z)
    with pytest.raises(ValueError, match="NaN"):
        dasgupta_cost(np.full((3, 3), np.nan), Z)
    with pytest.raises(ValueError, match="shape"):
        dasgupta_cost(np.ones((3, 3)), np.ones((2, 3)))


def test_cluster_fairness_hand_example():
    Z = np.array([[0, 2, 1, 2], [1, 3, 1, 2], [4, 5, 2, 4]], dtype=float)
    res = cluster_fairness(Z, np.array(["a", "a", "b", "b"]))
    # both pairs are {a, b}: perfectly fair
    assert res["violation"] == pytest.approx(0.0)
    assert res["min_balance"] == pytest.approx(1.0)
    Z_bad = np.array([[0, 1, 1, 2], [2, 3, 1, 2], [4, 5, 2, 4]], dtype=float)
    res = cluster_fairness(Z_bad, ["a", "a", "b", "b"])
    assert res["violation"] == pytest.approx(0.5)
    assert res["min_balance"] == pytest.approx(0.0)
    assert res["evaluated"].sum() == 3
    res = cluster_fairness(Z_bad, ["a", "a", "b", "b"], min_size=3)
    assert res["violation"] == pytest.approx(0.0)  # only the root is evaluated
    np.testing.assert_array_equal(res["groups"], ["a", "b"])


def test_stratified_subsample_keeps_ratio():
    rng = np.random.default_rng(0)
    s = np.array(["x"] * 700 + ["y"] * 200 + ["z"] * 100)
    X = rng.normal(size=(1000, 2))
    X_sub, s_sub, idx = stratified_subsample(X, s, 128, random_state=3)
    values, counts = np.unique(s_sub, return_counts=True)
    assert counts.sum() == 128 and np.unique(idx).shape[0] == 128
    # ceil(128 * 0.2) = 26 and ceil(128 * 0.1) = 13; the largest group takes the rest
    np.testing.assert_array_equal(counts, [128 - 26 - 13, 26, 13])
    np.testing.assert_array_equal(X_sub, X[idx])
    again = stratified_subsample(X, s, 128, random_state=3)[2]
    np.testing.assert_array_equal(idx, again)
    with pytest.raises(ValueError, match="n_samples"):
        stratified_subsample(X, s, 2000)


@pytest.mark.parametrize("seed", range(3))
def test_non_symmetric_similarity_counts_as_its_symmetric_part(seed):
    rng = np.random.default_rng(seed)
    n = 23
    A = rng.random((n, n)) * rng.integers(0, 5, size=(n, n))  # strongly non-symmetric
    Z = linkage(rng.normal(size=(n, 2)), "average")
    parent = np.full(2 * n - 1, -1)
    for i, (a, b) in enumerate(Z[:, :2].astype(int)):
        parent[a] = parent[b] = n + i
    expected = _brute_force_cost((A + A.T) / 2, parent, n)
    assert dasgupta_cost(A, Z) == pytest.approx(expected, rel=1e-12)
    assert dasgupta_cost(sparse.csr_array(A), Z) == pytest.approx(expected, rel=1e-12)


def test_negative_or_complex_similarity_is_rejected():
    S = np.ones((4, 4))
    Z = linkage(np.arange(4.0)[:, None])
    S_neg = S.copy()
    S_neg[0, 1] = -0.5
    with pytest.raises(ValueError, match="non-negative.*1 negative entries"):
        dasgupta_cost(S_neg, Z)
    with pytest.raises(ValueError, match="non-negative"):
        dasgupta_cost(sparse.csr_array(S_neg), Z)
    with pytest.raises(TypeError, match="complex"):
        dasgupta_cost(S + 1j, Z)


@pytest.mark.parametrize("n_samples", [5, 6, 7, 9, 11, 23])
def test_stratified_subsample_many_small_groups_sums_to_n_samples(n_samples):
    # five equal groups: rounding every group but the largest up would give
    # the largest a negative count; the counts must still sum to n_samples
    X = np.arange(100).reshape(50, 2)
    s = np.repeat(list("abcde"), 10)
    X_sub, s_sub, idx = stratified_subsample(X, s, n_samples, random_state=0)
    assert idx.shape[0] == n_samples == np.unique(idx).shape[0]
    counts = np.unique(s_sub, return_counts=True)[1]
    assert counts.sum() == n_samples
    assert np.all(counts <= np.ceil(n_samples / 5))
    np.testing.assert_array_equal(X_sub, X[idx])


def test_cluster_fairness_is_nan_when_no_cluster_is_evaluated():
    Z = np.array([[0, 1, 1.0, 2], [2, 3, 1.0, 2], [4, 5, 2.0, 4]])
    report = cluster_fairness(Z, ["a", "a", "b", "b"], min_size=5)
    assert np.isnan(report["violation"]) and np.isnan(report["min_balance"])
    assert not report["evaluated"].any()
    full = cluster_fairness(Z, ["a", "a", "b", "b"], min_size=4)  # the root only
    assert (full["violation"], full["min_balance"]) == (0.0, 1.0)
