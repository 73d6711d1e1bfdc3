# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Unlabeled principal component analysis (Yao, Peng and Tsakiris).

- ``estimator``: :class:`UnlabeledPCA`.
- ``solver``: :func:`unlabeled_pca`, the function ``fit`` and ``restore`` call.
- ``subspace``: Stage I (DPCP-IRLS, coherence pursuit).
- ``unlabeled_sensing``: Stage II (LSRF, least absolute deviations, pseudo-likelihood, hard EM).
"""
