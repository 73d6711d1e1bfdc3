# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of lowrank_ot_cost and class_transfer_accuracy against explicit plans."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from skpapers.metrics import class_transfer_accuracy, lowrank_ot_cost


@pytest.fixture
def plan():
    rng = np.random.RandomState(0)
    n, m, K = 13, 9, 3
    Q = rng.uniform(size=(n, K))
    Q /= Q.sum()
    g = Q.sum(axis=0)
    R = rng.uniform(size=(m, K))
    R *= g / R.sum(axis=0)
    X, Y = rng.randn(n, 2), rng.randn(m, 2)
    return X, Y, Q, R, g


def test_lowrank_cost_dense_factored_explicit(plan):
    X, Y, Q, R, g = plan
    C = cdist(X, Y, "sqeuclidean")
    explicit = np.sum(C * ((Q / g) @ R.T))
    A = np.column_stack([(X**2).sum(1), np.ones(len(X)), -2 * X])
    B = np.column_stack([np.ones(len(Y)), (Y**2).sum(1), Y])
    assert lowrank_ot_cost(C, Q, R, g) == pytest.approx(explicit, rel=1e-12)
    assert lowrank_ot_cost((A, B), Q, R, g) == pytest.approx(explicit, rel=1e-12)


def test_lowrank_cost_errors(plan):
    X, Y, Q, R, g = plan
    C = cdist(X, Y)
    with pytest.raises(ValueError, match="do not describe a rank-K plan"):
        lowrank_ot_cost(C, Q, R, g[:2])
    with pytest.raises(ValueError, match="C has shape"):
        lowrank_ot_cost(C.T, Q, R, g)
    with pytest.raises(ValueError, match="g must be positive"):
        lowrank_ot_cost(C, Q, R, -g)
    with pytest.raises(ValueError, match="do not match"):
        lowrank_ot_cost((X, Y[:, :1]), Q, R, g)


def test_class_transfer_accuracy_explicit(plan):
    _, _, Q, R, g = plan
    rng = np.random.RandomState(1)
    ls = rng.choice(["a", "b", "c"], Q.shape[0])
    lt = rng.choice(["a", "b", "d"], R.shape[0])
    P = (Q / g) @ R.T
    same = ls[:, None] == lt[None, :]
    expected = P[same].sum() / P.sum()
    assert class_transfer_accuracy(Q, R, g, ls, lt) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        class_transfer_accuracy(Q, R, g, ls[:-1], lt)


def test_class_transfer_accuracy_refuses_a_plan_without_mass_and_any_scale_is_fine():
    from skpapers.metrics import class_transfer_accuracy

    labels = np.array([0, 0, 1, 1])
    Q = np.array([[0.25, 0.0], [0.25, 0.0], [0.0, 0.25], [0.0, 0.25]])
    g = np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="Q is zero"):
        class_transfer_accuracy(0 * Q, Q, g, labels, labels)
    with pytest.raises(ValueError, match="negative"):
        class_transfer_accuracy(-Q, Q, g, labels, labels)
    with pytest.raises(ValueError, match="no co-cluster with mass"):
        class_transfer_accuracy(Q * [1, 0], Q * [0, 1], g, labels, labels)
    for c in (1e-300, 1.0, 1e300):
        assert class_transfer_accuracy(c * Q, c * Q, c * g, labels, labels) == 1.0
