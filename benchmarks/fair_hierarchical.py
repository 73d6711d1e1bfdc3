# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of FairHierarchicalClustering on Census (Adult) and Bank subsamples.

For every data set, n and seed (stratified subsample keeping the global group
ratio, as in the authors' code) it measures, in one process and on the same
subsample:

* the Dasgupta cost ratio to average linkage of the ``"reduction"`` tree
  (c, h, k) = (4, 4, 2) and of the ``"polylog"`` trees h in {4, 8}, k = 2,
  epsilon = 1/(4 log2 n), plus the star tree's ratio (the scale of the ratios);
* the fairness violation max |p_l(C) - c_l| and the min balance
  min p_l(C) / c_l over clusters of size >= max(h, 1/(2 epsilon)), for the
  vanilla and the fair trees;
* seconds per phase: similarity (condensed max(S) - S), base linkage
  (fastcluster, as the estimator uses), scipy average linkage alone, each fair
  operator pipeline, and one Dasgupta cost evaluation;
* the tracemalloc peak of a whole ``fit`` against the size of a float32 and a
  float64 condensed matrix.

Run: ``python benchmarks/fair_hierarchical.py [--quick] [--out DIR]``.
"""

import argparse
import math
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import linkage as scipy_linkage

from skpapers.cluster import FairHierarchicalClustering
from skpapers.cluster._fair_hierarchical.similarity import (
    base_linkage,
    condensed_distance,
    similarity_rows,
)
from skpapers.cluster._fair_hierarchical.tree_operators import (
    WorkTree,
    fair_hc,
    make_fair,
    rebalance_tree,
    refine_rebalance_tree,
)
from skpapers.datasets import load_adult, load_bank, stratified_subsample
from skpapers.utils._hierarchy import (
    HierarchyTree,
    as_hierarchy,
    cost_from_rows,
    encode_groups,
    fairness_from_counts,
    group_counts,
)

DATASETS = {
    "census-sex": lambda: load_adult(sensitive="sex"),
    "census-race": lambda: load_adult(sensitive="race"),
    "bank-marital": lambda: load_bank(sensitive="marital"),
    "bank-age": lambda: load_bank(sensitive="age"),
}
FAIR = {  # name -> (method, h, k)
    "reduction(4,4,2)": ("reduction", 4, 2),
    "polylog h=4": ("polylog", 4, 2),
    "polylog h=8": ("polylog", 8, 2),
}


def _fair_tree(base, codes, n_groups, method, h, k, eps, n):
    work = WorkTree(base, codes, n_groups)
    if method == "polylog":
        make_fair(work, h, k, eps, 10 * h * math.ceil(math.log2(n)))
    else:
        rebalance_tree(work)
        refine_rebalance_tree(work, eps)
        fair_hc(work, h, k)
    return work.to_hierarchy()


def run_one(X, s, seed):
    """All measurements on one subsample; returns a list of row dicts."""
    n = X.shape[0]
    codes, groups = encode_groups(s)
    eps = 1 / (4 * math.log2(n))
    t0 = time.perf_counter()
    d = condensed_distance(X, "inverse_distance")
    t_sim = time.perf_counter() - t0
    d_scipy = d.copy()
    t0 = time.perf_counter()
    Z_scipy = scipy_linkage(d_scipy, "average")
    t_scipy = time.perf_counter() - t0
    del d_scipy, Z_scipy
    t0 = time.perf_counter()
    Z = base_linkage(d, "average")
    t_fast = time.perf_counter() - t0
    del d
    base = as_hierarchy(Z)
    rows_fn = similarity_rows(X, "inverse_distance")
    t0 = time.perf_counter()
    base_cost = cost_from_rows(base, rows_fn)
    t_cost = time.perf_counter() - t0
    star = _star(n)
    star_cost = cost_from_rows(star, rows_fn)
    out = []
    for name, (method, h, k) in FAIR.items():
        threshold = max(h, math.ceil(1 / (2 * eps)))
        t0 = time.perf_counter()
        tree = _fair_tree(base, codes, groups.shape[0], method, h, k, eps, n)
        t_ops = time.perf_counter() - t0
        cost = cost_from_rows(tree, rows_fn)
        fair = fairness_from_counts(tree.group_counts, threshold)
        van = fairness_from_counts(group_counts(base, codes, groups.shape[0]), threshold)
        out.append(
            {
                "seed": seed,
                "n": n,
                "tree": name,
                "threshold": threshold,
                "cost_ratio": cost / base_cost,
                "star_ratio": star_cost / base_cost,
                "violation": fair["violation"],
                "min_balance": fair["min_balance"],
                "vanilla_violation": van["violation"],
                "vanilla_min_balance": van["min_balance"],
                "t_similarity": t_sim,
                "t_fastcluster": t_fast,
                "t_scipy": t_scipy,
                "t_fair_ops": t_ops,
                "t_cost_eval": t_cost,
            }
        )
    return out


def _star(n):
    """The star tree (root with all leaves), the trivial upper scale of the cost."""
    return HierarchyTree(np.r_[np.full(n, n), -1], np.r_[np.zeros(n + 1, int), n], np.arange(n))


def memory_peak(X, s):
    """Tracemalloc peak (MB) of one fit, and condensed matrix sizes (MB)."""
    n = X.shape[0]
    tracemalloc.start()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        FairHierarchicalClustering(h=8).fit(X, sensitive_features=s)
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    pairs = n * (n - 1) / 2
    return {
        "n": n,
        "peak_fit_MB": peak / 2**20,
        "float32_condensed_MB": 4 * pairs / 2**20,
        "float64_condensed_MB": 8 * pairs / 2**20,
        "fit_seconds_traced": seconds,
    }


def _mean_std(df, col):
    g = df.groupby(["dataset", "n", "tree"], sort=False)[col]
    return g.mean(), g.std().fillna(0.0)


def _markdown(df):
    """A DataFrame as a Markdown table (no tabulate dependency)."""
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(map(str, row)) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _fmt(m, s, digits=3):
    return f"{m:.{digits}f} ± {s:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: n=128, 2 seeds")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.quick:
        grid = {128: 2}
    else:  # n -> number of seeds (reduced at the largest n to fit ~15 minutes)
        grid = {128: 10, 256: 10, 512: 10, 1024: 10, 2048: 10, 4096: 3, 8192: 3}
    rows, mem = [], []
    for name, loader in DATASETS.items():
        X_all, s_all = loader()
        for n, n_seeds in grid.items():
            if n > X_all.shape[0]:
                continue
            for seed in range(n_seeds):
                X, s, _ = stratified_subsample(X_all, s_all, n, random_state=seed)
                for row in run_one(np.asarray(X, dtype=np.float64), s, seed):
                    row["dataset"] = name
                    rows.append(row)
            print(f"done {name} n={n}", flush=True)
        if name == "census-sex":
            for n in grid:
                X, s, _ = stratified_subsample(X_all, s_all, n, random_state=0)
                mem.append(memory_peak(np.asarray(X, dtype=np.float64), s))
    df = pd.DataFrame(rows)
    df.to_csv(out / "fair_hierarchical_raw.csv", index=False)

    # F1: cost ratio and fairness
    seeds = df.groupby(["dataset", "n", "tree"], sort=False)["seed"].nunique()
    stats = {c: _mean_std(df, c) for c in
             ["cost_ratio", "star_ratio", "violation", "min_balance",
              "vanilla_violation", "vanilla_min_balance"]}
    main_rows = []
    for key in seeds.index:
        dataset, n, tree = key
        main_rows.append({
            "dataset": dataset, "n": n, "seeds": int(seeds[key]), "tree": tree,
            "cluster size >=": int(df[(df.dataset == dataset) & (df.n == n)
                                      & (df.tree == tree)].threshold.iloc[0]),
            "cost ratio": _fmt(*(stats["cost_ratio"][i][key] for i in (0, 1))),
            "star ratio": _fmt(*(stats["star_ratio"][i][key] for i in (0, 1))),
            "violation fair": _fmt(*(stats["violation"][i][key] for i in (0, 1))),
            "violation avg-link": _fmt(*(stats["vanilla_violation"][i][key] for i in (0, 1))),
            "min balance fair": _fmt(*(stats["min_balance"][i][key] for i in (0, 1))),
            "min balance avg-link": _fmt(
                *(stats["vanilla_min_balance"][i][key] for i in (0, 1))),
        })
    main_df = pd.DataFrame(main_rows)

    # F5: seconds per phase (mean over seeds and data sets), fair ops vs linkage
    t = df.groupby(["n", "tree"], sort=True)[
        ["t_similarity", "t_fastcluster", "t_scipy", "t_fair_ops", "t_cost_eval"]].mean()
    t["fair ops / fastcluster"] = t["t_fair_ops"] / t["t_fastcluster"]
    time_df = t.reset_index().round(4)
    time_df.columns = ["n", "tree", "similarity s", "fastcluster avg-link s",
                       "scipy avg-link s", "fair operators s", "one cost eval s",
                       "fair ops / fastcluster"]
    mem_df = pd.DataFrame(mem).round(2)

    main_df.to_csv(out / "fair_hierarchical_main.csv", index=False)
    time_df.to_csv(out / "fair_hierarchical_time.csv", index=False)
    mem_df.to_csv(out / "fair_hierarchical_memory.csv", index=False)
    grid_note = ", ".join(f"n={n}: {s} seeds" for n, s in grid.items())
    md = [
        "# Fair hierarchical clustering benchmark",
        "",
        f"Stratified subsamples, seeds 0.. ({grid_note}); Bank has 4,521 rows, so "
        "n <= 4096 there. Similarity 1/(1+d) on unscaled features, average linkage "
        "base tree (fastcluster). mean ± std over seeds.",
        "",
        "## Cost ratio to average linkage and fairness",
        "",
        _markdown(main_df),
        "",
        "## Seconds per phase (mean over data sets and seeds)",
        "",
        _markdown(time_df),
        "",
        "## Memory (tracemalloc peak of one fit, h=8, Census-sex)",
        "",
        _markdown(mem_df),
        "",
    ]
    text = "\n".join(md)
    (out / "fair_hierarchical_results.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
