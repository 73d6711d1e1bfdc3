# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Clustering: fair hierarchical clustering and transport clustering."""

from skpapers.cluster._fair_hierarchical import FairHierarchicalClustering
from skpapers.cluster._transport_clustering import TransportClustering

__all__ = ["FairHierarchicalClustering", "TransportClustering"]
