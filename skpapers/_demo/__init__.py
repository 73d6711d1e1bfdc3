# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sections of ``python -m skpapers demo``, one module per built-in method.

Each module defines ``TITLE`` (str) and ``run()``, returning rows
``(metric, value, expected)``: what was measured, the number, and the reference
or bound it should meet. Every section runs in seconds on embedded or generated
data (no files, no network).
"""

SECTIONS = ("upca", "fair_hierarchical", "transport_clustering", "robust_sim")
