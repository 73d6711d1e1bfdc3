# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""
Finding and creating estimators through the registry
=====================================================

Every skpapers estimator, built-in or from a third-party plugin, is declared as
an entry point in the group ``skpapers.estimators``. The registry reads those
declarations from package metadata without importing any estimator, and imports
a class only when it is asked for. Here we list what is registered, create two
estimators by name and use them as any scikit-learn estimator.
"""

# %%
# What is registered
# ------------------
# :func:`~skpapers.registry.specs` reads metadata only: the name, where the class
# lives, and the distribution that declared it.
import warnings

from skpapers import registry
from skpapers.exceptions import SkpapersPluginWarning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", SkpapersPluginWarning)  # a test plugin may be installed
    builtins = [declared for declared in registry.specs() if declared.builtin]
for declared in builtins:
    print(f"{declared.name:22s} {declared.value:50s} ({declared.dist} {declared.version})")

# %%
# Create estimators by name
# -------------------------
# :func:`~skpapers.registry.create` imports the class and passes the parameters on.
# We fit a fair hierarchy on two blobs whose group membership follows the blob,
# and a plain one for comparison, both created by name.
import matplotlib.pyplot as plt
import numpy as np
from scipy.cluster.hierarchy import dendrogram
from sklearn.datasets import make_blobs

X, blob = make_blobs([60, 30], random_state=0)
group = np.where(np.random.default_rng(0).random(len(X)) < 0.1, 1 - blob, blob)

fair = registry.create("fair_hierarchical", h=8, k=2).fit(X, sensitive_features=group)
with warnings.catch_warnings():
    # without sensitive_features the estimator warns that it fits the plain tree
    warnings.simplefilter("ignore")
    plain = registry.create("fair_hierarchical").fit(X)

fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True, layout="constrained")
colours = np.array(["tab:blue", "tab:orange"])
for ax, est, title in [
    (axes[0], plain, "plain average linkage"),
    (axes[1], fair, f"fair hierarchy (cost ratio {fair.cost_ratio_:.2f})"),
]:
    tree = dendrogram(est.linkage_matrix_, ax=ax, no_labels=True, color_threshold=0,
                      above_threshold_color="0.5")
    ax.scatter(np.arange(len(X)) * 10 + 5, np.zeros(len(X)), c=colours[group[tree["leaves"]]],
               s=12, zorder=3, clip_on=False)
    ax.set_title(title)
    ax.set_ylabel("merge distance")
axes[1].set_xlabel("points, coloured by group")
plt.show()

# %%
# The top of the plain tree splits the groups apart; in the fair tree, every large
# cluster mixes them. The fitted estimator renders as an HTML diagram in notebooks
# and in this gallery; its "?" icon links to the estimator's API page.
fair
