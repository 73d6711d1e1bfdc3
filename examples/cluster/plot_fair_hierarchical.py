# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""
=====================================================
Fair hierarchical clustering: vanilla vs fair trees
=====================================================

Average linkage on data where the protected colour follows the clusters puts
each colour in its own branch: every large cluster is unfair. The fair trees of
:class:`~skpapers.cluster.FairHierarchicalClustering` (``"polylog"``, NeurIPS
2023, and ``"reduction"``, ICML 2023) keep the low-cost structure near the
leaves and mix the colours in every cluster above the size threshold
``max(h, 1/(2 epsilon))``, at a moderate increase of the Dasgupta cost.
"""

# %%
# Coloured blobs: 70% red, 30% blue, colour tied to the blob
# -----------------------------------------------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from scipy.cluster.hierarchy import dendrogram
from sklearn.datasets import make_blobs

from skpapers.cluster import FairHierarchicalClustering
from skpapers.exceptions import SensitiveFeaturesWarning
from skpapers.metrics import cluster_fairness

rng = np.random.default_rng(0)
X, colour = make_blobs([90, 38], random_state=0)
flip = rng.random(128) < 0.1
colour[flip] = rng.choice(2, flip.sum(), p=[0.7, 0.3])
names = np.where(colour == 0, "red", "blue")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", SensitiveFeaturesWarning)
    vanilla = FairHierarchicalClustering(h=16).fit(X)  # no groups: average linkage
polylog = FairHierarchicalClustering(h=16, k=2).fit(X, sensitive_features=names)
reduction = FairHierarchicalClustering(method="reduction", h=8, k=2).fit(
    X, sensitive_features=names
)
threshold = max(16, int(np.ceil(1 / (2 * polylog.epsilon_))))
for name, est in [("average linkage", vanilla), ("polylog", polylog), ("reduction", reduction)]:
    fair = cluster_fairness(est.tree_, names, min_size=threshold)
    print(
        f"{name:16s} cost ratio {est.cost_ratio_:.3f}  violation {fair['violation']:.3f}  "
        f"min balance {fair['min_balance']:.3f}"
    )

# %%
# Dendrograms with leaves coloured by group
# -----------------------------------------
# The fair tree is k-ary; ``linkage_matrix_`` is its binarised view, which
# scipy draws. A merge's height is the mean distance between the clusters it
# joins (raised to the highest merge below it), so both trees share one scale.
fig, axes = plt.subplots(2, 1, figsize=(10, 6))
panels = [("average linkage", vanilla), ("fair (polylog)", polylog)]
for ax, (title, est) in zip(axes, panels, strict=True):
    dn = dendrogram(est.linkage_matrix_, ax=ax, no_labels=True, color_threshold=0,
                    above_threshold_color="grey")
    leaves = np.asarray(dn["leaves"])
    xs = 5 + 10 * np.arange(leaves.shape[0])
    ax.scatter(xs, np.zeros_like(xs), c=np.where(colour[leaves] == 0, "tab:red", "tab:blue"),
               s=12, zorder=3)
    ax.set_title(title)
    ax.set_ylabel("merge distance")
fig.tight_layout()

# %%
# Group proportions of every cluster above the threshold
# ------------------------------------------------------
# The vertical line is the global proportion of red points.
fig, ax = plt.subplots(figsize=(7, 3.5))
bins = np.linspace(0, 1, 21)
for name, est in [("average linkage", vanilla), ("polylog", polylog), ("reduction", reduction)]:
    fair = cluster_fairness(est.tree_, names, min_size=threshold)
    red = list(fair["groups"]).index("red")
    ax.hist(fair["proportions"][fair["evaluated"], red], bins=bins, alpha=0.5, label=name)
ax.axvline(np.mean(names == "red"), color="k")
ax.set_xlabel(f"proportion of red in clusters of size >= {threshold}")
ax.set_ylabel("clusters")
ax.legend()
fig.tight_layout()

# %%
# Routing ``sensitive_features`` through a Pipeline
# --------------------------------------------------
# Without metadata routing, prefix the step name; with routing enabled, request
# the key with ``set_fit_request``.
import sklearn  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

pipe = make_pipeline(StandardScaler(), FairHierarchicalClustering(h=16))
pipe.fit(X, fairhierarchicalclustering__sensitive_features=names)
with sklearn.config_context(enable_metadata_routing=True):
    est = FairHierarchicalClustering(h=16).set_fit_request(sensitive_features=True)
    make_pipeline(StandardScaler(), est).fit(X, sensitive_features=names)
print(f"fairness violation after scaling: {est.fairness_violation_:.3f}")
