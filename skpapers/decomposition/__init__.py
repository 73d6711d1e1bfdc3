# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Matrix decomposition: unlabeled principal component analysis.

The method lives in the private subpackage ``_unlabeled_pca``: ``estimator``
holds :class:`UnlabeledPCA`, ``solver`` the function :func:`unlabeled_pca`
that ``fit`` calls, ``subspace`` and ``unlabeled_sensing`` its two stages.
"""

from skpapers.decomposition._unlabeled_pca.display import FlaggingDisplay
from skpapers.decomposition._unlabeled_pca.estimator import UnlabeledPCA
from skpapers.decomposition._unlabeled_pca.solver import UnlabeledPCAResult, unlabeled_pca

__all__ = ["FlaggingDisplay", "UnlabeledPCA", "UnlabeledPCAResult", "unlabeled_pca"]
