# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of RobustSingleIndexRegressor against scikit-learn robust regressors.

Same data for every method, one process. Rows (link, noise, eps, attack); columns:
parameter error ||coef - beta*|| (min over +-beta* for even links) of ours (default
"filter" and "huber" aggregators), the non-robust variant, the oracle (init at
beta*, plain GD on the clean rows only), and each scikit-learn linear regressor
turned into a SIM by the estimator's trimmed 1-D scale fit along its direction;
fit seconds per method.

``Ours`` runs at its defaults except ``contamination = max(0.1, eps)`` (an upper
bound on eps, as the estimator expects). Default: the spec's Table 1 setting (n = 1e4,
d = 50, t(2.5) noise, sigma = 0.5; GeLU, Swish, ReLU, tanh; ``--seeds`` seeds, 3 by
default), with a table of the issue's targets at eps = 0.1 (worst seed): ours at most
2x the clean oracle, and Huber+1D at least 3x ours under hijack. ``--full``: six
links, Gaussian and t(2.5) noise, all six attacks, eps up to 0.2; ``--linear`` picks
the linear peers. ``--quick``: smoke run. ``--scaling``: fit seconds for n in {1e4,
1e5, 1e6} at d = 50 and their ratio to one ``X @ w`` pass (``robust_sim_scaling.csv``);
``--scaling-only`` skips the table.

Run: ``python benchmarks/robust_sim.py [--quick|--full] [--scaling|--scaling-only] [--out DIR]``.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import (
    HuberRegressor,
    LinearRegression,
    QuantileRegressor,
    RANSACRegressor,
    TheilSenRegressor,
)
from skpapers.linear_model._single_index.links import resolve_link

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor
from skpapers.linear_model._single_index.estimator import _search_1d

NON_ROBUST = dict(
    contamination=0, aggregator="mean", whiten=None, spectral_clip=None, init="spectral"
)
LINEAR = {
    "OLS+1D": lambda s: LinearRegression(),
    "Huber+1D": lambda s: HuberRegressor(max_iter=500),
    "RANSAC+1D": lambda s: RANSACRegressor(random_state=s),
    "TheilSen+1D": lambda s: TheilSenRegressor(random_state=s, max_subpopulation=2000),
    "Quantile+1D": lambda s: QuantileRegressor(quantile=0.5, alpha=0, solver="highs"),
}


def _err(coef, truth, even):
    e = np.linalg.norm(coef - truth)
    return min(e, np.linalg.norm(coef + truth)) if even else e


def run_cell(link, noise, eps, attack, n, d, seed, linear):
    X, y, truth, outliers = make_contaminated_sim(n, d, link, noise, eps, attack, random_state=seed)
    lk = resolve_link(link)
    row = {"link": link, "noise": str(noise), "eps": eps, "attack": attack, "n": n, "d": d,
           "seed": seed}
    bound = max(0.1, eps)  # contamination is an upper bound on eps (0.1 = the default)
    fits = {
        "Ours": (dict(contamination=bound), X, y),
        "Ours-huber": (dict(contamination=bound, aggregator="huber"), X, y),
        "NonRobust": (NON_ROBUST, X, y),
        "Oracle": (dict(contamination=0, aggregator="mean", whiten=None, init=truth),
                   X[~outliers], y[~outliers]),
    }
    for name, (params, Xf, yf) in fits.items():
        t0 = time.perf_counter()
        est = RobustSingleIndexRegressor(link, random_state=seed, **params).fit(Xf, yf)
        row[f"{name} s"] = time.perf_counter() - t0
        row[name] = _err(est.coef_, truth, lk.is_even)
    for name, make in LINEAR.items():
        if name not in linear or (name == "TheilSen+1D" and d > 50):
            continue
        t0 = time.perf_counter()
        w = np.ravel(make(seed).fit(X, y).coef_ if name != "RANSAC+1D"
                     else make(seed).fit(X, y).estimator_.coef_)
        w = w / np.linalg.norm(w)
        t, _ = _search_1d(X @ w, y, lk.f, bound, lk.is_even)
        row[f"{name} s"] = time.perf_counter() - t0
        row[name] = _err(t * w, truth, lk.is_even)
    return row


def _targets(table, eps):
    """Issue targets per (link, noise, attack) at the largest eps, worst seed.

    Ours at most 2x the clean oracle; Huber+1D at least 3x ours under hijack.
    """
    cells = table[table["eps"] == eps].assign(
        **{"Ours/Oracle": lambda t: t["Ours"] / t["Oracle"]}
    )
    if "Huber+1D" in cells:
        cells = cells.assign(**{"Huber+1D/Ours": lambda t: t["Huber+1D"] / t["Ours"]})
    agg = {"Ours": "max", "Oracle": "max", "Ours/Oracle": "max"}
    if "Huber+1D" in cells:
        agg.update({"Huber+1D": "min", "Huber+1D/Ours": "min"})
    out = cells.groupby(["link", "noise", "attack"], sort=False).agg(agg).reset_index()
    out["<= 2x oracle"] = out["Ours/Oracle"] <= 2.0
    if "Huber+1D" in cells:  # the issue sets this target under hijack only
        met = (out["Huber+1D/Ours"] >= 3.0).astype(object)
        met[out["attack"] != "hijack"] = ""
        out[">= 3x below Huber+1D (hijack)"] = met
    return out.round(3)


def _markdown(df):
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def scaling(ns, d=50, seed=0):
    rows = []
    for n in ns:
        X, y, truth, _ = make_contaminated_sim(n, d, "gelu", 0.5, 0.1, "hijack", random_state=seed)
        w = np.ones(d)
        passes = []
        for _ in range(20):
            t0 = time.perf_counter()
            X @ w
            passes.append(time.perf_counter() - t0)
        one = float(np.median(passes))
        for whiten in ("auto", "diag"):
            est = RobustSingleIndexRegressor(whiten=whiten, random_state=seed)
            t0 = time.perf_counter()
            est.fit(X, y)
            sec = time.perf_counter() - t0
            rows.append({"n": n, "d": d, "whiten": whiten, "fit s": sec, "n_iter": est.n_iter_,
                         "ns per n*d": 1e9 * sec / (n * d), "X@w pass ms": 1e3 * one,
                         "ratio to one pass": sec / one,
                         "error": np.linalg.norm(est.coef_ - truth)})
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--scaling-only", action="store_true", help="skip the error table")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per cell")
    parser.add_argument("--linear", help="comma-separated linear peers (default: the grid's)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.scaling or args.scaling_only:
        ns = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
        sc = scaling(ns).round(4)
        sc.to_csv(out / "robust_sim_scaling.csv", index=False)
        text = "## Scaling (GeLU, hijack eps=0.1, d=50)\n" + _markdown(sc)
        (out / "robust_sim_scaling.md").write_text(text + "\n")
        print(text)
    if args.scaling_only:
        return
    if args.quick:
        n, d, links, noises, attacks = 2000, 20, ["gelu"], [(2.5, 0.5)], ["hijack"]
        epss, linear = [0.0, 0.1], ["OLS+1D", "Huber+1D"]
    elif args.full:
        n, d = 10_000, 50
        links = ["gelu", "swish", "tanh", "sigmoid", "relu", "quadratic"]
        noises = [0.5, (2.5, 0.5)]
        attacks = ["labels", "hijack", "gradient", "leverage", "mimic", "random"]
        epss, linear = [0.0, 0.05, 0.1, 0.2], list(LINEAR)
    else:  # spec Table 1 setting
        n, d, links, noises = 10_000, 50, ["gelu", "swish", "relu", "tanh"], [(2.5, 0.5)]
        attacks, epss = ["hijack", "labels"], [0.0, 0.05, 0.1]
        linear = list(LINEAR)
    if args.linear is not None:
        linear = [name for name in args.linear.split(",") if name]
        unknown = sorted(set(linear) - set(LINEAR))
        if unknown:
            parser.error(f"unknown linear peers {unknown}; choose from {sorted(LINEAR)}")
    rows = []
    for link in links:
        for noise in noises:
            for attack in attacks:
                for eps in epss:
                    if eps == 0 and attack != attacks[0]:
                        continue
                    for seed in range(args.seeds):
                        rows.append(run_cell(link, noise, eps, attack, n, d, seed, linear))
                        print(link, attack, eps, seed, f"ours {rows[-1]['Ours']:.3f}",
                              flush=True)
    table = pd.DataFrame(rows)
    keys = ("link", "noise", "eps", "attack", "n", "d", "seed")
    err_cols = [c for c in table.columns if c not in keys and not c.endswith(" s")]
    sec_cols = [c for c in table.columns if c.endswith(" s")]
    tag = "quick" if args.quick else ("full" if args.full else "table1")
    errors = table[["link", "noise", "eps", "attack", "seed", *err_cols]].round(3)
    seconds = table[["link", "eps", "attack", "seed", *sec_cols]].round(3)
    target_eps = 0.1 if 0.1 in epss else max(epss)
    targets = _targets(table, target_eps)
    targets.to_csv(out / f"robust_sim_{tag}_targets.csv", index=False)
    errors.to_csv(out / f"robust_sim_{tag}_errors.csv", index=False)
    seconds.to_csv(out / f"robust_sim_{tag}_seconds.csv", index=False)
    md = [f"## Targets at eps = {target_eps} (worst seed)", _markdown(targets), "",
          "## Errors ||coef - beta*||", _markdown(errors), "",
          "## Fit seconds", _markdown(seconds)]
    text = "\n".join(md)
    (out / f"robust_sim_{tag}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
