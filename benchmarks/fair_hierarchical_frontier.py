# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Cost-fairness frontier of FairHierarchicalClustering on Census (Adult) and Bank.

For each method and a grid of (h, k, c) (epsilon = 1 / (c log2 n), clipped
into its valid range), one point per setting: the Dasgupta cost ratio to
average linkage against the largest deviation of a group's share from its
global share (mean over seeds) over the clusters of at least the default setting's size threshold
(``max(h, ceil(1/(2 epsilon)))`` with h = 4, c = 4: 20 at n = 1024), the same
for every point; ``own_violation`` is each setting's ``fairness_violation_`` at
its own threshold. Average linkage is the point (its deviation at the default
threshold, 1). The base tree (scipy average linkage on ``max(S) - S``) is built
once per subsample and passed as ``linkage=``. Settings that a data set does
not allow (a group smaller than ``h``) are skipped.

Writes ``results/fair_hierarchical_frontier.{md,csv}`` and the figure
``results/fair_hierarchical_frontier.png``.

Run: ``python benchmarks/fair_hierarchical_frontier.py [--quick] [--seeds S] [--first-seed S0]``.
"""

import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _harness import Report, parser, seed_list, seed_span, summarise  # noqa: E402
from scipy.cluster.hierarchy import linkage  # noqa: E402
from scipy.spatial.distance import pdist  # noqa: E402

from skpapers.cluster import FairHierarchicalClustering  # noqa: E402
from skpapers.datasets import load_adult, load_bank, stratified_subsample  # noqa: E402
from skpapers.metrics import cluster_fairness  # noqa: E402

DATASETS = {
    "Census race (5 groups)": lambda: load_adult(sensitive="race", all_groups=True),
    "Bank education (4 groups)": lambda: load_bank(sensitive="education"),
}
HK = [(4, 2), (8, 2), (8, 4), (16, 2), (16, 4)]
CS = [1, 2, 4, 8]


def grid(quick):
    hk, cs = (HK[:2], CS[2:3]) if quick else (HK, CS)
    return [(m, h, k, c) for m in ("polylog", "reduction") for h, k in hk for c in cs]


def points(X, s, seed, settings):
    d = pdist(X)
    np.add(d, 1.0, out=d)
    np.reciprocal(d, out=d)
    np.subtract(d.max(), d, out=d)
    Z = linkage(d, method="average")
    del d
    default = FairHierarchicalClustering(linkage=Z, distance_scale=1.0)  # raw units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        default.fit(X, sensitive_features=s)
    common = default.fairness_threshold_  # one size threshold for every point
    rows = []
    for method, h, k, c in settings:
        est = FairHierarchicalClustering(
            method=method, h=h, k=k, c=c, linkage=Z, distance_scale=1.0
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                est.fit(X, sensitive_features=s)
        except ValueError:  # a group smaller than h
            continue
        rows.append({"seed": seed, "method": method, "h": h, "k": k, "c": c,
                     "epsilon": est.epsilon_, "threshold": est.fairness_threshold_,
                     "cost_ratio": est.cost_ratio_, "own_violation": est.fairness_violation_,
                     "violation": cluster_fairness(est.tree_, s, min_size=common)["violation"]})
    van = cluster_fairness(Z, s, min_size=common)["violation"]
    rows.append({"seed": seed, "method": "average linkage", "h": 0, "k": 0, "c": 0,
                 "epsilon": default.epsilon_, "threshold": default.fairness_threshold_,
                 "cost_ratio": 1.0, "own_violation": van, "violation": van})
    return rows


def figure(raw, path):
    mean = raw.groupby(["dataset", "method", "h", "k", "c"], sort=False)[
        ["cost_ratio", "violation"]].mean().reset_index()
    names = list(dict.fromkeys(mean["dataset"]))
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 4.2), squeeze=False)
    style = {"polylog": ("o", "C0"), "reduction": ("s", "C1"), "average linkage": ("*", "k")}
    threshold = int(raw.loc[raw["method"] == "average linkage", "threshold"].iloc[0])
    for ax, name in zip(axes[0], names, strict=True):
        sub = mean[mean["dataset"] == name]
        for method, (marker, colour) in style.items():
            pts = sub[sub["method"] == method]
            ax.scatter(pts["violation"], pts["cost_ratio"], marker=marker, c=colour,
                       s=90 if method == "average linkage" else 30, label=method)
            if method != "average linkage":
                for row in pts.itertuples():
                    if row.c == 4:
                        ax.annotate(f"h={row.h},k={row.k}", (row.violation, row.cost_ratio),
                                    fontsize=7, xytext=(3, 3), textcoords="offset points")
        order = sub.sort_values(["violation", "cost_ratio"])
        front = order[order["cost_ratio"] <= order["cost_ratio"].cummin()]
        ax.step(front["violation"], front["cost_ratio"], where="post", c="0.6", lw=1,
                zorder=0, label="frontier")
        ax.set_title(name)
        ax.set_xlabel(f"largest deviation of a group's share, clusters >= {threshold}")
        ax.set_ylabel("Dasgupta cost / average linkage")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = parser(__doc__.splitlines()[2])
    p.add_argument("--n", type=int, default=1024, help="subsample size (default 1024)")
    args = p.parse_args()
    seeds = seed_list(args)[:1] if args.quick else seed_list(args)
    raw = []
    for name, loader in DATASETS.items():
        X_all, s_all = loader()
        for seed in seeds:
            X, s, _ = stratified_subsample(X_all, s_all, args.n, random_state=seed)
            for row in points(np.asarray(X, dtype=np.float64), s, seed, grid(args.quick)):
                raw.append({"dataset": name, "n": args.n, **row})
        print(f"done {name}", flush=True)
    raw = pd.DataFrame(raw)
    table = summarise(raw, keys=["dataset", "method", "h", "k", "c"],
                      values=["epsilon", "threshold", "cost_ratio", "own_violation",
                              "violation"], digits=3)
    report = Report("fair_hierarchical_frontier", "Fair hierarchical clustering: frontier",
                    args.out)
    report.section("P1", f"Cost ratio against largest deviation (n = {args.n})", table,
                   raw=raw, note=f"Seeds {seed_span(seeds)}; epsilon = 1/(c log2 n), clipped.")
    report.write()
    figure(raw, report.out / "fair_hierarchical_frontier.png")


if __name__ == "__main__":
    main()
