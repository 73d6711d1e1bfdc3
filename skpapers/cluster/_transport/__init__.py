# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Transport clustering (Schmidt, Halmos and Raphael, ICML 2026).

- ``estimator``: :class:`TransportClustering`.
- ``solver``: :func:`transport_clustering`, the function ``fit`` calls.
- ``registration``: the full-rank registration (assignment, LP, Sinkhorn, hierarchical).
- ``generalized_kmeans``: mirror descent on the generalized K-means problem.
- ``cost``: ground-cost factors and scales.
"""
