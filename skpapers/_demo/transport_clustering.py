# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Demo: transport clustering of planted shifted Gaussians (n = m = 1000, K = 20)."""

import time
import warnings

import numpy as np

TITLE = "Transport clustering: low-rank OT via clustering (Schmidt et al., ICML 2026)"


def run():
    """Fit TC on shifted Gaussians; return (metric, value, expected) rows."""
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist
    from sklearn.metrics import adjusted_mutual_info_score

    from skpapers.cluster import TransportClustering
    from skpapers.datasets import make_shifted_gaussians
    from skpapers.metrics import lowrank_ot_cost

    X, Y, lx, ly = make_shifted_gaussians(1000, n_clusters=20, sigma=0.2, random_state=1)
    C = cdist(X, Y, "sqeuclidean")
    r, c = linear_sum_assignment(C)
    ot_cost = C[r, c].mean()
    start = time.perf_counter()
    tc = TransportClustering(20, random_state=0).fit(X, X_target=Y)
    seconds = time.perf_counter() - start
    P = tc.transport_plan()
    marg = np.abs(P.sum(1) - 1e-3).sum() + np.abs(P.sum(0) - 1e-3).sum()
    rows = [
        ("TC cost / full-rank OT cost (K=20, sigma=0.2)", tc.cost_ / ot_cost, ">= 1 (lower bound)"),
        ("AMI sources vs planted", adjusted_mutual_info_score(lx, tc.labels_), ">= 0.9"),
        ("AMI targets vs planted", adjusted_mutual_info_score(ly, tc.target_labels_), ">= 0.9"),
        ("marginal error |P1-a|_1 + |P^T1-b|_1", marg, "<= 1e-8"),
        ("TC seconds (exact registration + GKMS)", seconds, "a few seconds"),
    ]
    try:
        import ot
    except ImportError:  # pragma: no cover - POT is optional
        rows.append(("TC cost / POT lowrank_sinkhorn cost", float("nan"), "POT not installed"))
    else:
        s = np.sqrt(C.max())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # POT's Dykstra warning
            Q, R, g = ot.lowrank_sinkhorn(X / s, Y / s, rank=20, rescale_cost=False, seed_init=0)
        pot = lowrank_ot_cost(C, np.asarray(Q), np.asarray(R), np.asarray(g))
        rows.append(
            ("TC cost / POT lowrank_sinkhorn cost", tc.cost_ / pot, "<= 0.95 (paper: -23%)")
        )
    Z = X[:300]
    self_tc = TransportClustering(5, random_state=0).fit(Z)
    centers = np.array([Z[self_tc.labels_ == k].mean(0) for k in range(5)])
    inertia = np.sum((Z - centers[self_tc.labels_]) ** 2)
    rows.append(
        (
            "self-transport cost_ / (2 inertia / n)",
            self_tc.cost_ / (2 * inertia / 300),
            "1 (K-means)",
        )
    )
    return [(name, float(value), expected) for name, value, expected in rows]
