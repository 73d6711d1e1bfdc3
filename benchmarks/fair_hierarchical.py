# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of FairHierarchicalClustering on Census (Adult) and Bank subsamples.

For every data set, n and seed (a stratified subsample keeping the global group
ratio, as in the authors' code) it builds the base tree once (scipy average
linkage on ``max(S) - S`` with ``S = 1 / (1 + d)`` on the unscaled features)
and passes it as ``linkage=`` to every fair fit, so all trees of a row share
the same vanilla tree. Measured, in one process and on the same subsample:

* the Dasgupta cost ratio to average linkage (``cost_ratio_``) and the star
  tree's ratio (the scale of the ratios on dense similarity graphs);
* the fairness violation max |p_l(C) - c_l| and the min balance min p_l(C) / c_l
  over clusters of at least ``fairness_threshold_`` samples, for the fair trees
  and for average linkage on the same threshold;
* seconds: similarity + scipy average linkage, and each fair fit given the
  base tree (fair operators plus two cost evaluations).

Tables: ``F1`` two groups (Census sex and race, Bank marital and age, the
papers' settings), ``M1`` several groups (Census race with its five
categories, Bank marital with three, Bank education with four).
``--label NAME`` stores the tables under ``F1-NAME`` / ``M1-NAME`` (e.g. to
keep the numbers of an earlier version side by side).

Run: ``python benchmarks/fair_hierarchical.py [--quick] [--seeds S] [--first-seed S0]
[--only F1,M1]``.
"""

import warnings

import numpy as np
from _harness import Report, parser, seed_list, seed_span, summarise, timed
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import pdist

from skpapers.cluster import FairHierarchicalClustering
from skpapers.datasets import load_adult, load_bank, stratified_subsample
from skpapers.metrics import cluster_fairness

TWO_GROUPS = {
    "census-sex": lambda: load_adult(sensitive="sex"),
    "census-race": lambda: load_adult(sensitive="race"),
    "bank-marital": lambda: load_bank(sensitive="marital"),
    "bank-age": lambda: load_bank(sensitive="age"),
}
MANY_GROUPS = {
    "census-race (5)": lambda: load_adult(sensitive="race", all_groups=True),
    "bank-marital (3)": lambda: load_bank(sensitive="marital", all_groups=True),
    "bank-education (4)": lambda: load_bank(sensitive="education"),
}
TREES = {  # name -> estimator parameters
    "reduction h=4": {"method": "reduction", "h": 4, "k": 2},
    "polylog h=4": {"method": "polylog", "h": 4, "k": 2},
    "polylog h=8": {"method": "polylog", "h": 8, "k": 2},
}
GRIDS = {
    "F1": {"quick": [256], "default": [256, 1024, 4096]},
    "M1": {"quick": [1024], "default": [1024, 2048, 4096]},  # n = 512: 4 "other" < h = 8
}


def base_tree(X):
    """Average linkage on max(S) - S, S = 1/(1+d); also the sum of S over pairs."""
    d = pdist(X)
    np.add(d, 1.0, out=d)
    np.reciprocal(d, out=d)
    total = float(d.sum())
    np.subtract(d.max(), d, out=d)
    return linkage(d, method="average"), total


def run_one(X, s, seed, trees):
    """All trees on one subsample; one row per tree."""
    n = X.shape[0]
    (Z, total), t_base = timed(base_tree, X)
    rows = []
    for name, params in trees.items():
        est = FairHierarchicalClustering(linkage=Z, distance_scale=1.0, **params)  # raw units
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # small groups: 1/epsilon warning
            _, seconds = timed(est.fit, X, sensitive_features=s)
        van = cluster_fairness(Z, s, min_size=est.fairness_threshold_)
        rows.append({
            "seed": seed, "n": n, "tree": name, "threshold": est.fairness_threshold_,
            "cost_ratio": est.cost_ratio_, "star_ratio": n * total / est.base_cost_,
            "violation": est.fairness_violation_, "avg_link_violation": van["violation"],
            "min_balance": est.min_balance_, "avg_link_min_balance": van["min_balance"],
            "t_base_linkage": t_base, "t_fair_fit": seconds,
        })
    return rows


def run_table(datasets, sizes, seeds, trees):
    rows = []
    for name, loader in datasets.items():
        X_all, s_all = loader()
        for n in sizes:
            if n > X_all.shape[0]:
                continue
            for seed in seeds:
                X, s, _ = stratified_subsample(X_all, s_all, n, random_state=seed)
                for row in run_one(np.asarray(X, dtype=np.float64), s, seed, trees):
                    rows.append({"dataset": name, **row})
            print(f"done {name} n={n}", flush=True)
    return rows


VALUES = ["cost_ratio", "star_ratio", "violation", "avg_link_violation",
          "min_balance", "avg_link_min_balance", "t_base_linkage", "t_fair_fit"]
HIGHER = ["min_balance", "avg_link_min_balance"]  # worst seed: the smallest balance
TIMINGS = ["t_base_linkage", "t_fair_fit"]


def main():
    p = parser(__doc__.splitlines()[2], tables=("F1", "M1"))
    p.add_argument("--label", default="", help="suffix of the table ids (e.g. 'before')")
    args = p.parse_args()
    mode = "quick" if args.quick else "default"
    seeds = seed_list(args)[:2] if args.quick else seed_list(args)
    report = Report("fair_hierarchical", "Fair hierarchical clustering benchmark", args.out)
    suffix = f"-{args.label}" if args.label else ""
    note = (
        f"Stratified subsamples (seeds {seed_span(seeds)}); similarity 1/(1+d) on unscaled "
        "features; base tree: scipy average linkage on max(S) - S, shared by every fair tree of a "
        "row. Violation = max over clusters of >= threshold samples and groups of "
        "|p_l(C) - c_l|; the avg-link columns use the same threshold. Bank has 4,521 "
        "rows. Epsilon = 1/(4 log2 n) (the default)."
    )
    tables = args.only.split(",")
    for key, datasets, title in (
        ("F1", TWO_GROUPS, "Two groups: cost ratio to average linkage and fairness"),
        ("M1", MANY_GROUPS, "Several groups: cost ratio to average linkage and fairness"),
    ):
        if key not in tables:
            continue
        rows = run_table(datasets, GRIDS[key][mode], seeds, TREES)
        table = summarise(rows, keys=["dataset", "n", "tree"], values=VALUES, digits=3,
                          higher_is_better=HIGHER, timings=TIMINGS)
        report.section(key + suffix, title, table, raw=rows, note=note)
    print(report.write())


if __name__ == "__main__":
    main()
