# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""
Finding and creating estimators through the registry
=====================================================

Every skpapers estimator, built-in or from a third-party plugin, is declared as
an entry point in the group ``skpapers.estimators``. The registry reads those
declarations from package metadata without importing any estimator, and imports
a class only when it is asked for.
"""

# %%
# List what is registered. :func:`~skpapers.registry.specs` reads metadata only.
import warnings

from skpapers import registry
from skpapers.exceptions import SkpapersPluginWarning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", SkpapersPluginWarning)  # a test plugin may be installed
    for spec in registry.specs():
        print(f"{spec.name:28s} {spec.value:50s} {spec.dist} {spec.version}")

# %%
# Create an estimator by name and use it like any scikit-learn estimator.
import numpy as np

rng = np.random.default_rng(0)
basis = np.linalg.qr(rng.normal(size=(10, 2)))[0].T
X = rng.normal(size=(200, 2)) @ basis
upca = registry.create("upca", n_components=2)
upca.fit(X)
print(upca)
print("components shape:", upca.components_.shape)

# %%
# Only the built-ins, filtered by kind (this imports the classes):
with warnings.catch_warnings():
    warnings.simplefilter("ignore", SkpapersPluginWarning)
    for name, cls in registry.all_estimators("cluster", include_plugins=False):
        print(name, "->", cls.__name__)

# %%
# The fitted estimator renders as an HTML diagram in notebooks and in this gallery.
upca
