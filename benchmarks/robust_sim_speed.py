# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit time of RobustSingleIndexRegressor against HuberRegressor, side by side.

GeLU link, "hijack" attack at eps = 0.1, d = 50, n in {1e4, 1e5, 1e6} (``--quick``:
up to 1e5). For each n, one data set (float64, C order) is fitted by
``RobustSingleIndexRegressor`` at its defaults and by scikit-learn's
``HuberRegressor`` at its defaults, alternately, ``--repeats`` times each (the
median is reported, and the ratio of the medians, since the machine is shared);
also the nanoseconds per ``n d`` of our fit, its iterations and its error
``||coef - beta*||``.

One data set per n, drawn with seed ``--first-seed`` (default 0; ``--seeds`` is not
used: speed is compared side by side on one data set).

Run: ``python benchmarks/robust_sim_speed.py [--quick] [--repeats R] [--first-seed S]``.
"""

import warnings

import numpy as np
import pandas as pd
from _harness import Report, parser, seed_list, timed
from sklearn.linear_model import HuberRegressor

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--sizes", default="10000,100000,1000000")
    args = p.parse_args(argv)
    sizes = [10_000, 100_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    warnings.simplefilter("ignore")
    d, rows = 50, []
    seed = seed_list(args)[0]
    for n in sizes:
        X, y, truth, _ = make_contaminated_sim(n, d, "gelu", 0.5, 0.1, "hijack", random_state=seed)
        ours, huber = [], []
        for _ in range(args.repeats):
            est, sec = timed(RobustSingleIndexRegressor(random_state=seed).fit, X, y)
            ours.append(sec)
            _, sec = timed(HuberRegressor().fit, X, y)
            huber.append(sec)
        ours, huber = float(np.median(ours)), float(np.median(huber))
        rows.append({
            "n": n, "d": d, "seed": seed, "ours s": ours, "Huber s": huber,
            "ours / Huber": ours / huber,
            "ours ns per n*d": 1e9 * ours / (n * d),
            "Huber ns per n*d": 1e9 * huber / (n * d),
            "n_iter": est.n_iter_, "error": float(np.linalg.norm(est.coef_ - truth)),
        })
        print(rows[-1], flush=True)
        del X, y
    table = pd.DataFrame(rows).round(4)
    report = Report("robust_sim_speed", "Robust single-index regression: fit time",
                    out=args.out)
    report.section("S1", "Fit seconds, ours against HuberRegressor", table,
                   note=f"GeLU, hijack eps = 0.1, d = 50, seed {seed}; median of {args.repeats} "
                        "alternating fits per method; both at their defaults.")
    report.write()


if __name__ == "__main__":
    main()
