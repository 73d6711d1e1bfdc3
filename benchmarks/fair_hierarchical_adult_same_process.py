# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""All of Census (UCI Adult, race, 5 groups): fair fits against the plain fit, side by side.

The machine is shared, so absolute seconds say little; this script measures
ratios. In one process, on the same data, it runs in turn:

* ``plain fit``: ``FairHierarchicalClustering().fit(X)`` without sensitive
  features, i.e. the vanilla average-linkage tree (similarity, base linkage,
  its Dasgupta cost);
* the fair fits of ``FITS`` (same similarity and base linkage, then the
  fairness operators and the cost of the fair tree).

Each repeat runs every fit once, the order rotated from one repeat to the next
(so no fit always comes first); a fit's time is divided by the plain fit's time
of the same repeat, and the table gives the median of those ratios over the
repeats, with their range, for wall-clock and CPU (process) time. Peak memory
is measured per fit by ``benchmarks/fair_hierarchical_adult.py`` (one fit per
fresh process).

Run: ``python benchmarks/fair_hierarchical_adult_same_process.py [--repeats 3]
[--quick]`` (``--quick``: n = 4,096).
"""

import time
import warnings

import numpy as np
import pandas as pd
from _harness import Report, parser

from skpapers.cluster import FairHierarchicalClustering
from skpapers.datasets import load_adult, stratified_subsample

FITS = {  # row name -> estimator parameters (None: the plain fit, no groups)
    "plain fit (average linkage)": None,
    "reduction h=8, k=2": {"method": "reduction", "h": 8, "k": 2},
    "reduction h=4, k=2": {"method": "reduction", "h": 4, "k": 2},
    "polylog h=4, k=2 (default)": {"method": "polylog", "h": 4, "k": 2},
}


def fit_once(X, s, params):
    """One fit; return (wall seconds, CPU seconds, fitted estimator)."""
    # distance_scale=1.0: the papers' similarity on the raw features
    est = FairHierarchicalClustering(distance_scale=1.0, **(params or {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # plain fit: no sensitive features
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(X, sensitive_features=None if params is None else s)
        return time.perf_counter() - t0, time.process_time() - c0, est


def main():
    p = parser(__doc__.splitlines()[2])
    p.add_argument("--repeats", type=int, default=3, help="rounds of all fits (default 3)")
    args = p.parse_args()
    X, s = load_adult(sensitive="race", all_groups=True)
    if args.quick:
        X, s, _ = stratified_subsample(X, s, 4096, random_state=0)
    names = list(FITS)
    rows = []
    for rep in range(args.repeats):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            wall, cpu, est = fit_once(X, s, FITS[name])
            rows.append(
                {
                    "repeat": rep,
                    "fit": name,
                    "seconds": wall,
                    "cpu_seconds": cpu,
                    "cost_ratio": est.cost_ratio_,
                    "violation": est.fairness_violation_ if FITS[name] else np.nan,
                }
            )
            print(rows[-1], flush=True)
    raw = pd.DataFrame(rows)
    plain = raw[raw["fit"] == names[0]].set_index("repeat")
    out = []
    for name in names:
        sub = raw[raw["fit"] == name].set_index("repeat")
        wall = sub["seconds"] / plain["seconds"]
        cpu = sub["cpu_seconds"] / plain["cpu_seconds"]
        out.append(
            {
                "fit": name,
                "wall / plain (median)": f"{wall.median():.2f}",
                "wall / plain (range)": f"{wall.min():.2f}-{wall.max():.2f}",
                "cpu / plain (median)": f"{cpu.median():.2f}",
                "cpu / plain (range)": f"{cpu.min():.2f}-{cpu.max():.2f}",
                "plain fit seconds (median)": f"{plain['seconds'].median():.1f}",
                "cost_ratio": f"{sub['cost_ratio'].iloc[0]:.4f}",
                "violation": f"{sub['violation'].iloc[0]:.4f}",
                "repeats": len(sub),
            }
        )
    note = (
        f"n = {X.shape[0]}, race with 5 groups, unscaled features (distance_scale=1.0), "
        "similarity 1/(1+d), epsilon = 1/(4 log2 n). One process; each repeat runs every "
        "fit once in a rotated order; ratios are a fit's time over the plain fit's time "
        "in the same repeat (median and range over the repeats). The trees are "
        "deterministic (random_state=None), so cost ratio and violation are the same in "
        "every repeat."
    )
    report = Report(
        "fair_hierarchical_adult_same_process",
        "Fair hierarchical clustering on all of Adult: time against the plain fit",
        args.out,
    )
    report.section(
        "S1", "Fit time over the plain fit's, same process", pd.DataFrame(out), raw=rows, note=note
    )
    print(report.write())


if __name__ == "__main__":
    main()
