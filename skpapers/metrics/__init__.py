# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Metrics for the skpapers methods: subspaces, hierarchies, low-rank transport, robust R^2."""

from skpapers.metrics._hierarchical import (
    FairHierarchyScorer,
    cluster_fairness,
    dasgupta_cost,
    fair_hierarchy_score,
)
from skpapers.metrics._regression import trimmed_r2_score, trimmed_r2_scorer
from skpapers.metrics._subspace import (
    principal_angle,
    refined_restoration_error,
    relative_restoration_error,
)
from skpapers.metrics._transport import class_transfer_accuracy, lowrank_ot_cost

__all__ = [
    "FairHierarchyScorer",
    "class_transfer_accuracy",
    "cluster_fairness",
    "dasgupta_cost",
    "fair_hierarchy_score",
    "lowrank_ot_cost",
    "principal_angle",
    "refined_restoration_error",
    "relative_restoration_error",
    "trimmed_r2_score",
    "trimmed_r2_scorer",
]
