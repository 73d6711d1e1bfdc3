# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clustering: fair hierarchical clustering and transport clustering.

Each method lives in a private subpackage (``_fair_hierarchical``,
``_transport``) whose ``estimator`` module holds the class and whose ``solver``
module holds the function that ``fit`` calls.
"""

from skpapers.cluster._fair_hierarchical.display import FairDendrogramDisplay
from skpapers.cluster._fair_hierarchical.estimator import FairHierarchicalClustering
from skpapers.cluster._fair_hierarchical.solver import (
    FairHierarchyResult,
    fair_hierarchical_tree,
)
from skpapers.cluster._transport.display import TransportPlanDisplay, cocluster_plan
from skpapers.cluster._transport.estimator import TransportClustering
from skpapers.cluster._transport.solver import (
    TransportClusteringResult,
    transport_clustering,
)
from skpapers.utils._hierarchy import HierarchyTree

__all__ = [
    "FairDendrogramDisplay",
    "FairHierarchicalClustering",
    "FairHierarchyResult",
    "HierarchyTree",
    "TransportClustering",
    "TransportClusteringResult",
    "TransportPlanDisplay",
    "cocluster_plan",
    "fair_hierarchical_tree",
    "transport_clustering",
]
