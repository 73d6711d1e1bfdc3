# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Scaling of TransportClustering: wall time and peak memory up to n = m = 1e6.

One fit per row, each in a fresh subprocess (peak RSS = VmHWM of that process,
which includes the interpreter and the data; ``n(K+d) float64 MB`` is the size
of one n x (K + d) array for comparison). Data: ``make_blobs``-style Gaussian
clouds in d = 50 with 15 planted clusters, K = 50, factored squared Euclidean
cost; ``registration="auto"`` is exact while n^2 <= 2.5e7, else hierarchical.
Every row also times ``KMeans(K, n_init=1)`` on the sources in the same process
before the fit (``cpu / KMeans cpu``, the K-means floor of the issue: the fit is
one registration and two clusterings). Besides the wall time, every row gives
the process CPU seconds (all threads)
and the wall and CPU seconds of each stage (registration, clustering of the
sources, of the targets; above 65,536 points the two "clusterings" are the
sides' starts and "hardening" the hardening of the cheaper one): on a shared
machine the CPU seconds are the load-independent measure, and the wall time on
two idle cores is at least half of them.

One data set per size: the seed is ``--first-seed`` (default 0; ``--seeds`` is not used,
this is a timing table).

Run: ``python benchmarks/transport_clustering_scaling.py [--quick] [--sizes 1000,1000000]
[--first-seed S]``.
"""

import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
from _harness import Report, parser, peak_rss_mb, seed_list, timed

K, D = 50, 50


def worker(n, registration, seed):
    """One fit in this (fresh) process; prints one JSON line."""
    from sklearn.cluster import KMeans
    from transport_clustering import gaussian_clouds

    from skpapers.cluster import TransportClustering

    X, Y, _, _ = gaussian_clouds(n, D, seed)
    before = peak_rss_mb()
    # the K-means floor: one K-means of the sources, same data, same process
    cpu = time.process_time()
    kmeans = KMeans(K, n_init=1, random_state=seed).fit(X)
    kmeans_cpu = time.process_time() - cpu
    logging.getLogger("skpapers.transport").addHandler(stages := StageLog())
    cpu = time.process_time()
    est, seconds = timed(
        TransportClustering(K, registration=registration, random_state=seed, verbose=1).fit,
        X, X_target=Y)
    import skpapers

    assert Path(skpapers.__file__).parents[1] == Path(__file__).resolve().parents[1]
    print(json.dumps({
        "n": n, "registration": registration, "seed": seed, "seconds": seconds,
        "cpu_seconds": (fit_cpu := time.process_time() - cpu), **stages.seconds(),
        "KMeans(n_init=1) cpu s": kmeans_cpu, "cpu / KMeans cpu": fit_cpu / kmeans_cpu,
        "KMeans 2 x inertia / n": 2 * kmeans.inertia_ / n,
        "load_1min_after": os.getloadavg()[0], "cost": est.cost_,
        "registration_cost": est.registration_cost_, "n_iter": est.n_iter_,
        "rss_before_fit_MB": before, "peak_rss_MB": peak_rss_mb(),
        "n(K+d) float64 MB": n * (K + D) * 8 / 2**20,
    }))


class StageLog(logging.Handler):
    """Wall and CPU seconds of the fit at its stage lines (verbose=1)."""

    # above 65,536 points: "start of the sources / targets done", then "hardening of ... done"
    KEYS = (("registration done", "registration"), ("hardening of the", "hardening"),
            ("of the sources done", "sources"), ("of the targets done", "targets"))

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []
        self.cpu0 = time.process_time()

    def emit(self, record):
        self.lines.append((record.getMessage(), time.process_time() - self.cpu0))

    def seconds(self):
        """Wall and CPU seconds spent in each stage (differences of the stage lines)."""
        out, wall0, cpu0 = {}, 0.0, 0.0
        for line, cpu in self.lines:
            for key, name in self.KEYS:
                found = re.search(r"\(([0-9.]+) s\)$", line)
                if key in line and found:
                    wall = float(found.group(1))
                    out[f"{name} s"], out[f"{name} cpu s"] = wall - wall0, cpu - cpu0
                    wall0, cpu0 = wall, cpu
                    break
        return out


def main():
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--sizes", default=None, help="comma-separated n (default by mode)")
    p.add_argument("--worker", nargs=3, help=argparse_suppress())
    args = p.parse_args()
    if args.worker:
        worker(int(args.worker[0]), args.worker[1], int(args.worker[2]))
        return
    sizes = ([int(s) for s in args.sizes.split(",")] if args.sizes else
             [1000, 10_000] if args.quick else [1000, 10_000, 100_000, 1_000_000])
    runs = [(n, "auto") for n in sizes] + [(n, "hierarchical") for n in sizes if n <= 5000]
    seed = seed_list(args)[0]
    rows = []
    for n, reg in sorted(runs):
        # the worker imports the skpapers next to this folder, not an installed copy
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")]))}
        res = subprocess.run([sys.executable, __file__, "--worker", str(n), reg, str(seed)],
                             capture_output=True, text=True, timeout=7200, env=env)
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]) if res.returncode == 0
                    else {"n": n, "registration": reg, "error": res.stderr[-300:]})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows).round(4)
    report = Report("transport_clustering_scaling", "Transport clustering scaling", args.out)
    report.section("T9", "Wall time and peak memory", table, raw=rows, note=(
        f"Gaussian clouds, d = {D}, K = {K}, seed {seed}, one run per row in a fresh "
        "subprocess."))
    report.write()


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
