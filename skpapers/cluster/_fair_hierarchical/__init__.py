# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fair hierarchical clustering (Knittel et al., NeurIPS 2023 and ICML 2023).

- ``estimator``: :class:`FairHierarchicalClustering`.
- ``solver``: :func:`fair_hierarchical_tree`, the function ``fit`` calls.
- ``tree_operators``: SplitRoot, fold, level abstraction, MakeFair and the reduction.
- ``similarity``: similarity transforms and the base linkage.
"""
