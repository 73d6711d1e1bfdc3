# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the transport generators: planted structure and known distances."""

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import shortest_path
from scipy.spatial.distance import cdist

from skpapers.datasets import (
    make_fragmented_hypercube,
    make_moons_to_gaussians,
    make_sbm_cost,
    make_shifted_gaussians,
)


def test_shifted_gaussians_planted_shift():
    X, Y, lx, ly = make_shifted_gaussians(300, n_clusters=6, sigma=0.1, tau=0.1, random_state=0)
    assert X.shape == Y.shape == (300, 6)
    assert set(lx) == set(ly) == set(range(6))
    np.testing.assert_array_equal(np.bincount(lx), np.bincount(ly))
    # the optimal matching keeps every point inside its planted cluster
    r, c = linear_sum_assignment(cdist(X, Y, "sqeuclidean"))
    assert np.mean(lx[r] == ly[c]) == 1.0
    # cluster means sit at e_k
    means = np.array([X[lx == k].mean(0) for k in range(6)])
    np.testing.assert_allclose(means, np.eye(6), atol=0.05)
    with pytest.raises(ValueError, match="at least n_clusters"):
        make_shifted_gaussians(3, n_clusters=6)


def test_moons_to_gaussians_ring():
    X, Y, lx, ly = make_moons_to_gaussians(800, gaussian_std=0.1, random_state=0)
    assert set(lx) == {0, 1} and set(ly) <= set(range(8))
    radii = np.linalg.norm(Y, axis=1)
    assert abs(np.median(radii) - 5.0) < 0.1


def test_sbm_cost_is_a_metric():
    C, labels = make_sbm_cost(3, 20, p_intra=0.5, p_inter=0.05, random_state=0)
    assert C.shape == (60, 60)
    np.testing.assert_allclose(C, C.T)
    np.testing.assert_allclose(np.diag(C), 0)
    # shortest paths are their own closure: the triangle inequality holds
    np.testing.assert_allclose(shortest_path(C, directed=False), C)
    same = labels[:, None] == labels[None, :]
    assert C[same].mean() < C[~same].mean()


def test_hypercube_w2_is_eight():
    X, Y = make_fragmented_hypercube(2000, 2, random_state=0)
    assert np.all(np.abs(X) <= 1)
    r, c = linear_sum_assignment(cdist(X, Y, "sqeuclidean"))
    w2 = cdist(X, Y, "sqeuclidean")[r, c].mean()
    assert abs(w2 - 8.0) < 0.1
