# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""All of Census (UCI Adult, n = 30,162): fair trees end to end against average linkage.

Each row is one fit in a fresh subprocess, so its peak resident set size
(VmHWM) is that fit's alone (data loading included):

* ``average linkage``: ``FairHierarchicalClustering().fit(X)`` without
  sensitive features, i.e. the vanilla tree alone (similarity, base linkage,
  its Dasgupta cost); its fairness is measured afterwards with
  ``cluster_fairness`` at the fair fit's size threshold;
* ``polylog`` / ``reduction``: the fair fit end to end (similarity, base
  linkage, fairness operators, the cost of both trees and the fairness).

Peak memory is compared with the size of one float64 condensed distance
matrix, n(n-1)/2 entries (3.6 GB at n = 30,162). The base linkage uses
fastcluster when installed (it works in place on the condensed matrix);
scipy's linkage copies its input, which doubles the peak.

Run: ``python benchmarks/fair_hierarchical_adult.py [--quick]`` (``--quick``:
n = 4,096).
"""

import json
import subprocess
import sys
import time
import warnings

from _harness import Report, parser, peak_rss_mb, timed

FITS = {  # row name -> estimator parameters (None: vanilla tree, no groups)
    "average linkage": None,
    "polylog h=4, k=2 (default)": {"method": "polylog", "h": 4, "k": 2},
    "polylog h=8, k=2": {"method": "polylog", "h": 8, "k": 2},
    "reduction h=4, k=2": {"method": "reduction", "h": 4, "k": 2},
    "reduction h=8, k=2": {"method": "reduction", "h": 8, "k": 2},
}
ATTRIBUTES = {"sex": False, "race (5 groups)": True}


def child(attribute, params, n):
    """One fit (run inside the subprocess); prints a JSON record."""
    import numpy as np

    from skpapers.cluster import FairHierarchicalClustering
    from skpapers.datasets import load_adult, stratified_subsample
    from skpapers.metrics import cluster_fairness

    X, s = load_adult(sensitive=attribute.split()[0], all_groups=ATTRIBUTES[attribute])
    if n < X.shape[0]:
        X, s, _ = stratified_subsample(X, s, n, random_state=0)
    loaded_mb = peak_rss_mb()  # imports and data, before the fit
    # distance_scale=1.0: the papers' similarity on the raw features
    est = FairHierarchicalClustering(distance_scale=1.0, **(params or {"h": 8}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # vanilla fit: no sensitive features
        cpu = time.process_time()
        _, seconds = timed(est.fit, X, sensitive_features=None if params is None else s)
        cpu = time.process_time() - cpu
    if params is None:  # fairness of average linkage at the polylog h=8 threshold
        threshold = est.fairness_threshold_
        fair = cluster_fairness(est.tree_, s, min_size=threshold)
        violation, balance = fair["violation"], fair["min_balance"]
    else:
        threshold, violation, balance = (
            est.fairness_threshold_, est.fairness_violation_, est.min_balance_)
    n = X.shape[0]
    print(json.dumps({
        "n": n, "seconds": seconds, "cpu_seconds": cpu, "peak_rss_MB": peak_rss_mb(),
        "before_fit_MB": loaded_mb,
        "condensed_float64_MB": 8 * n * (n - 1) / 2 / 2**20,
        "cost_ratio": est.cost_ratio_, "threshold": int(threshold),
        "violation": violation, "min_balance": balance,
        "groups": int(np.unique(s).shape[0]),
    }))


def main():
    p = parser(__doc__.splitlines()[2])
    args = p.parse_args()
    n = 4096 if args.quick else 30_162
    rows = []
    for attribute in ATTRIBUTES:
        for name, params in FITS.items():
            cmd = [sys.executable, __file__, "--child", attribute, json.dumps(params), str(n)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                print(out.stderr, file=sys.stderr)
                raise SystemExit(f"fit failed: {attribute} {name}")
            record = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append({"attribute": attribute, "tree": name, **record})
            print(rows[-1], flush=True)
    import pandas as pd

    table = pd.DataFrame(rows)
    table["fit peak / condensed"] = (
        (table["peak_rss_MB"] - table["before_fit_MB"]) / table["condensed_float64_MB"])
    table = table.round(4)
    note = (
        "One fit per row, each in a fresh subprocess (peak RSS = VmHWM of that "
        "process, data loading included; 'fit peak / condensed' = (peak - RSS before "
        "the fit) / one float64 condensed matrix). Unscaled features, similarity 1/(1+d), "
        "epsilon = 1/(4 log2 n). Average linkage: the vanilla tree alone; its "
        "violation is measured at the polylog h=8 threshold. Machine shared with "
        "other jobs: wall seconds depend on the load; cpu_seconds (process time of the "
        "fit) is the work done."
    )
    report = Report("fair_hierarchical_adult", "Fair hierarchical clustering on all of Adult",
                    args.out)
    report.section("A1", f"All of Adult (n = {n})", table, note=note)
    print(report.write())


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
