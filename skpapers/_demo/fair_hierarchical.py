# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Demo: a hierarchy whose clusters mix the groups as the whole data set does."""

import numpy as np

from skpapers._demo import Report, execute

TITLE = "FairHierarchicalClustering: a hierarchy whose clusters mix the groups"
PROBLEM = (
    "When the natural clusters follow a protected attribute, every cluster of "
    "a plain hierarchy is one group; this hierarchy keeps each group's share in "
    "every large enough cluster close to its share in the data, at a small "
    "price in clustering cost."
)
CODE = """
import numpy as np
from sklearn.datasets import make_blobs
from skpapers.cluster import FairHierarchicalClustering

X, blob = make_blobs([360, 152], random_state=0)
group = np.where(np.random.default_rng(0).random(len(X)) < 0.1, 1 - blob, blob)
fair = FairHierarchicalClustering(n_clusters=4, h=16, k=2)
labels = fair.fit_predict(X, sensitive_features=group)
tree = fair.tree_  # the whole hierarchy
"""


def _shares(labels, group):
    return np.array([group[labels == k].mean() for k in np.unique(labels)])


def run():
    """Fit a plain and a fair hierarchy; compare the groups' shares per cluster."""
    from sklearn.cluster import AgglomerativeClustering

    ns, raised = execute(CODE)
    X, group = ns["X"], ns["group"]
    fair = ns["fair"]
    plain = AgglomerativeClustering(n_clusters=4, linkage="average").fit(X)
    overall = group.mean()
    share = {"plain average linkage": _shares(plain.labels_, group),
             "FairHierarchicalClustering": _shares(fair.labels_, group)}

    def plot(fig):
        axes = fig.subplots(1, 2, sharey=True)
        for ax, (name, values) in zip(axes, share.items(), strict=True):
            ax.bar(np.arange(len(values)), values, color="tab:blue")
            ax.axhline(overall, color="tab:red", linestyle="--",
                       label=f"share in the data ({overall:.0%})")
            ax.set_title(name, fontsize=10)
            ax.set_xlabel("cluster (top 4 of the hierarchy)")
            ax.set_xticks(np.arange(len(values)))
        axes[0].set_ylabel("share of group 1 in the cluster")
        axes[1].legend(loc="upper center", fontsize=9)
        fig.suptitle("Group 1's share in each of the top 4 clusters")

    def spread(values):
        return f"{values.min():.0%} to {values.max():.0%}"

    return Report(
        data=(
            f"{len(X)} points in 2 well-separated blobs; a two-valued group "
            f"attribute (group 1: {overall:.0%} of the points) that mostly follows "
            "the blobs."
        ),
        did=(
            "built a full hierarchy (a binary tree over the points) in which every "
            f"cluster of at least {fair.fairness_threshold_} points holds each group "
            "close to its overall share; cut it into 4 clusters."
        ),
        results=[
            f"group 1's share per cluster (4 clusters): "
            f"{spread(share['FairHierarchicalClustering'])} vs "
            f"{spread(share['plain average linkage'])} for plain average linkage",
            f"largest deviation from the overall share, over all clusters of "
            f"{fair.fairness_threshold_}+ points: {fair.fairness_violation_:.2f}",
            f"price: clustering cost (Dasgupta) {fair.cost_ratio_:.2f} times "
            "the plain average-linkage hierarchy's",
        ],
        plot=plot,
        warnings=raised,
    )
