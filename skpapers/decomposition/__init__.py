# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Matrix decomposition: unlabeled principal component analysis."""

from skpapers.decomposition._upca import UnlabeledPCA

__all__ = ["UnlabeledPCA"]
