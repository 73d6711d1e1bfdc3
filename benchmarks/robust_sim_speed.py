# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit time of RobustSingleIndexRegressor against HuberRegressor, side by side.

GeLU link, "hijack" attack at eps = 0.1, d = 50, n in {1e4, 1e5, 1e6} (``--sizes``;
``--quick``: 1e4 and 1e5, two data sets). For each n and each of ``--seeds`` data
sets (float64, C order, seeds from ``--first-seed`` on), the data set is fitted by
``RobustSingleIndexRegressor`` at its defaults and by scikit-learn's
``HuberRegressor`` at its defaults, alternately, ``--repeats`` times each. Per data
set, the median CPU seconds (``time.process_time``, all threads of this process)
and wall seconds of each method and their ratios, side by side on the same data;
also our fit's iterations and error ``||coef - beta*||``. Table S1 gives, per n,
the mean ± sd of the ratios and CPU seconds over the data sets and the worst
data set's ratios; the raw file one row per data set, every column.

Run: ``OMP_NUM_THREADS=1 python benchmarks/robust_sim_speed.py [--quick]
[--sizes N,N] [--repeats R] [--seeds K] [--first-seed S]``.
"""

import warnings

import numpy as np
from _harness import Report, clocked, parser, seed_list, summarise
from sklearn.linear_model import HuberRegressor

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor


def _side_by_side(X, y, seed, repeats):
    """Median (CPU, wall) seconds of ours and of HuberRegressor, fitted alternately."""
    ours, huber = [], []
    for _ in range(repeats):
        est, wall, cpu = clocked(RobustSingleIndexRegressor(random_state=seed).fit, X, y)
        ours.append((cpu, wall))
        _, wall, cpu = clocked(HuberRegressor().fit, X, y)
        huber.append((cpu, wall))
    return est, np.median(ours, axis=0), np.median(huber, axis=0)


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sizes", default="10000,100000,1000000")
    args = p.parse_args(argv)
    sizes = [10_000, 100_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    seeds = seed_list(args)[:2] if args.quick else seed_list(args)
    warnings.simplefilter("ignore")
    d, rows = 50, []
    for n in sizes:
        for seed in seeds:
            X, y, truth, _ = make_contaminated_sim(
                n, d, "gelu", 0.5, 0.1, "hijack", random_state=seed
            )
            est, ours, huber = _side_by_side(X, y, seed, args.repeats)
            rows.append({
                "n": n, "d": d, "seed": seed,
                "ours / Huber (CPU)": ours[0] / huber[0],
                "ours / Huber (wall)": ours[1] / huber[1],
                "ours CPU seconds": ours[0], "Huber CPU seconds": huber[0],
                "ours wall seconds": ours[1], "Huber wall seconds": huber[1],
                "n_iter": est.n_iter_, "error": float(np.linalg.norm(est.coef_ - truth)),
            })
            print(rows[-1], flush=True)
            del X, y
    values = ["ours / Huber (CPU)", "ours / Huber (wall)", "ours CPU seconds",
              "Huber CPU seconds"]  # the raw file also has the wall seconds and errors
    table = summarise(rows, ["n", "d"], values)
    report = Report("robust_sim_speed", "Robust single-index regression: fit time",
                    out=args.out)
    report.section(
        "S1", "Fit seconds, ours against HuberRegressor", table, raw=rows,
        note=f"GeLU, hijack eps = 0.1, d = 50; per data set the median of {args.repeats} "
             "alternating fits per method, both at their defaults; ratios taken per "
             "data set, on the same data.",
    )
    report.write()


if __name__ == "__main__":
    main()
