# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn-compatible estimators implementing recent machine-learning papers.

Importing :mod:`skpapers` is cheap: it imports no estimator and reads no plugin
metadata. Use the subpackages (:mod:`skpapers.decomposition`,
:mod:`skpapers.cluster`, :mod:`skpapers.linear_model`) or the entry-point
registry :mod:`skpapers.registry`.
"""

__version__ = "0.1.0"

import importlib

__all__ = ["__version__"]

_SUBMODULES = (
    "cluster",
    "datasets",
    "decomposition",
    "exceptions",
    "linear_model",
    "metrics",
    "registry",
    "testing",
    "utils",
)


def __getattr__(name):
    """Import a subpackage on first access (``skpapers.cluster`` and so on)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"skpapers.{name}")
    raise AttributeError(f"module 'skpapers' has no attribute {name!r}")


def __dir__():
    return [*__all__, *_SUBMODULES]
