# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Hierarchy kernels: group encoding (validation, intersections), cost kernel, cuts."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.cluster.hierarchy import linkage

from skpapers.utils._hierarchy import (
    HierarchyTree,
    as_hierarchy,
    cost_from_rows,
    encode_groups,
    format_label,
)


def test_encode_groups_keeps_labels_as_written():
    codes, groups = encode_groups([1, "a", 1])
    assert groups.tolist() == ["a", 1]  # not the strings '1', 'a'
    np.testing.assert_array_equal(codes, [1, 0, 1])
    codes, groups = encode_groups(pd.Series(["x", "y", "x"], index=[5, 6, 7]))
    assert groups.tolist() == ["x", "y"]
    assert format_label(np.str_("b")) == "'b'"
    assert format_label((np.str_("b"), np.int64(2))) == "('b', 2)"


def test_encode_groups_intersections_and_errors():
    codes, groups = encode_groups(pd.DataFrame({"a": ["m", "f", "m"], "b": [1, 1, 2]}))
    assert groups.tolist() == [("f", 1), ("m", 1), ("m", 2)]
    np.testing.assert_array_equal(codes, [1, 0, 2])
    with pytest.raises(ValueError, match="2 missing labels.*positions 0, 2"):
        encode_groups([None, "a", np.nan])
    with pytest.raises(ValueError, match="1 missing labels.*position"):
        encode_groups(np.array([["a", 1], ["b", None]], dtype=object))
    with pytest.raises(ValueError, match="3 entries but X has n_samples = 4"):
        encode_groups(["a", "b", "a"], n_samples=4)
    with pytest.raises(ValueError, match="index different"):
        encode_groups(pd.Series(["a", "b"], index=[1, 0]), index=pd.RangeIndex(2))
    with pytest.raises(ValueError, match="1-D .* or 2-D"):
        encode_groups(np.zeros((2, 2, 2)))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 30), seed=st.integers(0, 10_000))
def test_cost_kernel_counts_a_non_symmetric_matrix_as_its_symmetric_part(n, seed):
    # documented: a non-symmetric similarity counts as (S + S.T) / 2
    rng = np.random.default_rng(seed)
    A = rng.random((n, n))
    tree = as_hierarchy(linkage(rng.normal(size=(n, 2)), "average"))
    sym = (A + A.T) / 2
    got = cost_from_rows(tree, lambda r, c: A[np.ix_(r, c)])
    ref = cost_from_rows(tree, lambda r, c: sym[np.ix_(r, c)])
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-12)


def test_to_linkage_heights_and_their_checks():
    Z = linkage(np.random.default_rng(0).normal(size=(12, 2)), "average")
    tree = as_hierarchy(Z)
    with pytest.raises(ValueError, match="no merge distances"):
        tree.to_linkage(heights="distance")
    with pytest.raises(ValueError, match="'size' or 'distance'"):
        tree.to_linkage(heights="sizes")
    height = np.r_[np.zeros(12), Z[:, 2]]
    with_height = HierarchyTree(tree.parent, tree.children_ptr, tree.children, height=height)
    got, nodes = with_height.to_linkage(heights="distance", return_nodes=True)
    np.testing.assert_array_equal(got, Z)  # scipy's own matrix back
    np.testing.assert_array_equal(nodes, np.arange(12, 23))
    sizes = with_height.to_linkage()[:, 2]  # sizes by default
    np.testing.assert_array_equal(sizes, np.sort(Z[:, 3]))
    height[-1] = 0.0  # the root below its children
    with pytest.raises(ValueError, match="below a child"):
        HierarchyTree(tree.parent, tree.children_ptr, tree.children, height=height)
    with pytest.raises(ValueError, match="one entry per node"):
        HierarchyTree(tree.parent, tree.children_ptr, tree.children, height=height[:-1])
