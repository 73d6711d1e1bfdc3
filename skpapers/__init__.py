# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn-compatible estimators implementing recent machine-learning papers.

Importing :mod:`skpapers` is cheap: it imports no estimator and reads no plugin
metadata. Use the subpackages (:mod:`skpapers.decomposition`,
:mod:`skpapers.cluster`, :mod:`skpapers.linear_model`) or the entry-point
registry :mod:`skpapers.registry`.
"""

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "cluster",
    "datasets",
    "decomposition",
    "exceptions",
    "linear_model",
    "metrics",
    "registry",
    "testing",
    "utils",
]
