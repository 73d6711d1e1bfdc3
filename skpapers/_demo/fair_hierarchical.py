# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Demo: fair hierarchical clustering on coloured blobs (colour tied to the blob)."""

import warnings

import numpy as np
from sklearn.datasets import make_blobs

TITLE = "Fair hierarchical clustering (Knittel et al., NeurIPS 2023 / ICML 2023)"


def _coloured_blobs(n=512, proportions=(0.7, 0.3), seed=0):
    rng = np.random.default_rng(seed)
    sizes = np.round(np.asarray(proportions) * n).astype(int)
    sizes[-1] = n - sizes[:-1].sum()
    X, colour = make_blobs(list(sizes), random_state=seed)
    flip = rng.random(n) < 0.1
    colour[flip] = rng.choice(len(proportions), flip.sum(), p=proportions)
    return X, colour


def run():
    """Fit the vanilla and both fair trees; return (metric, value, expected) rows."""
    from skpapers.cluster import FairHierarchicalClustering
    from skpapers.exceptions import SensitiveFeaturesWarning
    from skpapers.metrics import cluster_fairness

    X, colour = _coloured_blobs()
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SensitiveFeaturesWarning)
        vanilla = FairHierarchicalClustering().fit(X)
    for method, h in (("polylog", 16), ("reduction", 8)):
        est = FairHierarchicalClustering(method=method, h=h, k=2).fit(
            X, sensitive_features=colour
        )
        threshold = est.fairness_threshold_
        base = cluster_fairness(vanilla.tree_, colour, min_size=threshold)["violation"]
        if method == "polylog":
            rows.append(
                (f"avg-link violation, clusters >= {threshold} (n=512, 70/30)", base,
                 "large: colour follows the blobs (>= 0.5)")
            )
        rows.append(
            (f"{method} h={h} k=2 fairness violation", est.fairness_violation_,
             "<= 0.2 (max |p(C) - c| over clusters >= threshold)")
        )
        rows.append((f"{method} h={h} k=2 min balance", est.min_balance_, ">= 0.5"))
        rows.append(
            (f"{method} h={h} k=2 cost ratio to avg-link", est.cost_ratio_,
             "close to 1 (<= 1.5 here)")
        )
    return rows
