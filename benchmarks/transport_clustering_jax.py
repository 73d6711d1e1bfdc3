# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""TransportClustering against the JAX peers, with every plan made feasible.

Runs on identical inputs, in one process, back to back: ours (defaults), POT
``lowrank_sinkhorn`` (inits "random" and "kmeans"), KMeans+LC, ott-jax
``LRSinkhorn`` (epsilon 0) and the reference implementation of transport
clustering by the method's authors (their ``transport_cluster`` at its default
settings: random initialisation, entropic registration at epsilon 1e-5 with at
most 10,000 Sinkhorn iterations, 2500 mirror-descent iterations, both
directions, float32 cost normalised by its maximum, as their own driver does).

JAX and ott-jax are an optional extra (``pip install skpapers[jax]``); without
them the JAX peers are skipped with a note. The authors' code is not
distributed with skpapers: point ``--authors`` (or the environment variable
``SKPAPERS_TC_AUTHORS``) at a checkout of it; without it that peer is skipped
with a note. Its modules import torch, seaborn and loguru at module level for
code paths not used here; missing ones are replaced by inert stand-ins.

Scoring. Every plan ``P = Q diag(1/g) R^T`` is scored by the one function of
``transport_clustering_peers.py``: the primal cost ``<C, P>`` and the l1
marginal error ``||P 1 - a||_1 + ||P^T 1 - b||_1``. A plan whose marginal
error exceeds 1e-9 is also made feasible, keeping its rank, and scored again
("feasible cost"):

1. rescaling: the factored plan is rescaled, ``Q <- diag(a / P 1) Q`` then
   ``R <- diag(b / P^T 1) R`` (alternate Sinkhorn scaling of P done on the
   factors, at most 1000 alternations or l1 error 1e-13); then
2. rounding: the factors are rewritten with one inner marginal
   (``Q diag(R^T 1 / g)``, ``R diag(Q^T 1 / g)``, ``g' = (Q^T 1)(R^T 1) / g``,
   the same plan), and each factor is rounded exactly onto its transport
   polytope, ``Q`` onto ``Pi(a, g')`` and ``R`` onto ``Pi(b, g')``, by the
   rounding of Altschuler, Weed and Rigollet (2017, Algorithm 2): shrink the
   columns above their target, shrink the rows above theirs, add the outer
   product of the remaining deficits. The result has nonnegative rank at most
   K and marginals exact up to rounding errors (~1e-16).

Methods already feasible (marginal error <= 1e-9) keep their cost.
``feasible/best peer`` divides a method's feasible cost by the cheapest
feasible cost among the other methods on the same instance.

Cells: Gaussian clouds (15 planted clusters; n = m = 1000, d in {2, 10, 50},
K in {10, 25, 50}; table J) and two moons to eight Gaussians (n = m = 1000,
noise 0.1, the same K; table M); ``--n 1000,2000`` adds n = m = 2000, ``--K``
and ``--d`` choose the ranks and dimensions.

Run: ``SKPAPERS_TC_AUTHORS=<checkout> python benchmarks/transport_clustering_jax.py
[--quick] [--seeds S] [--first-seed S0] [--only J,M] [--authors DIR] [--n 1000,2000]
[--d 2,10,50]
[--K 10,25,50]``.
"""

import importlib
import importlib.util
import os
import sys
import time
import types
from pathlib import Path

import numpy as np
import ot
import pandas as pd
from _harness import Report, parser, seed_list, seed_span, summarise
from transport_clustering import gaussian_clouds
from transport_clustering_peers import HAS_OTT, kmeans_lc, ott_lr, pot, score, tc

from skpapers.datasets import make_moons_to_gaussians
from skpapers.metrics import lowrank_ot_cost

TABLES = ("J", "M")
FEASIBLE_TOL = 1e-9
OURS = "TC"
COLS = ["cost", "marg_err", "feasible cost", "feasible marg_err", "feasible/best peer",
        "seconds"]


# --- feasibility -----------------------------------------------------------
def canonical(Q, R, g):
    """The same plan with one inner marginal: Q^T 1 = R^T 1 = g'."""
    q, r = Q.sum(0), R.sum(0)
    keep = (q > 0) & (r > 0)
    Q, R, g, q, r = Q[:, keep], R[:, keep], g[keep], q[keep], r[keep]
    return Q * (r / g), R * (q / g), q * r / g


def round_to(F, rows, cols):
    """Altschuler et al.'s exact rounding of F >= 0 onto {F 1 = rows, F^T 1 = cols}."""
    F = F * np.minimum(1.0, np.divide(cols, F.sum(0), out=np.ones_like(cols),
                                      where=F.sum(0) > 0))
    s = F.sum(1)
    F = F * np.minimum(1.0, np.divide(rows, s, out=np.ones_like(rows), where=s > 0))[:, None]
    er, ec = rows - F.sum(1), cols - F.sum(0)
    total = ec.sum()
    return F + np.outer(er, ec) / total if total > 0 else F


def make_feasible(Q, R, g, a, b, max_iter=1000, tol=1e-13):
    """Rescale the factored plan towards (a, b), then round its factors exactly."""
    Q, R = Q.copy(), R.copy()
    for _ in range(max_iter):
        row = Q @ (R.sum(0) / g)
        Q *= np.divide(a, row, out=np.ones_like(a), where=row > 0)[:, None]
        col = R @ (Q.sum(0) / g)
        R *= np.divide(b, col, out=np.ones_like(b), where=col > 0)[:, None]
        if np.abs(Q @ (R.sum(0) / g) - a).sum() < tol:
            break
    Q, R, g = canonical(Q, R, g)
    g = g / g.sum()
    return round_to(Q, a, g), round_to(R, b, g), g


# --- optional peers ----------------------------------------------------------
class _Inert(types.ModuleType):
    """Stand-in for a module the authors' code imports but the path run here never uses."""

    def __getattr__(self, name):
        return _Inert(name)

    def __call__(self, *args, **kwargs):
        return self


def load_authors(path):
    """Import the authors' ``tc`` module from a checkout; None (with a reason) if absent."""
    if not path:
        return None, "set SKPAPERS_TC_AUTHORS or --authors to a checkout of the authors' code"
    src = Path(path) / "src"
    if not (src / "tc.py").exists():
        return None, f"no src/tc.py under the given --authors folder ({path})"
    if not HAS_OTT:
        return None, "JAX and ott-jax are not installed"
    stubbed = []
    for name in ("torch", "seaborn", "loguru"):
        if importlib.util.find_spec(name) is None:
            sys.modules[name] = _Inert(name)
            stubbed.append(name)
    sys.path.insert(0, str(src))
    return importlib.import_module("tc"), (f"stand-ins for {', '.join(stubbed)}" if stubbed
                                           else "")


def authors(module):
    """The authors' ``transport_cluster`` at its defaults, on the max-normalised float32 cost."""

    def fit(X, Y, K, seed, s, a=None, b=None):
        import jax.numpy as jnp

        C = jnp.asarray(ot.dist(X, Y) / s, dtype=jnp.float32)
        Q, g, R = module.transport_cluster(C, K, random_state=seed)
        Q, R, g = (np.asarray(v, dtype=np.float64) for v in (Q, R, g))
        return Q, R, g, Q.argmax(1), R.argmax(1), {}

    return fit


def methods(author_module):
    out = {OURS: tc(), "POT kmeans": pot("kmeans"), "POT random": pot("random"),
           "KMeans+LC": kmeans_lc}
    if HAS_OTT:
        out["ott-jax LRSinkhorn"] = ott_lr()
    if author_module is not None:
        out["authors' TC"] = authors(author_module)
    return out


# --- runs ------------------------------------------------------------------
def run_instance(X, Y, K, seed, fits, **keys):
    """Every method on one instance; raw and feasible costs side by side."""
    C = ot.dist(X, Y)
    a, b = np.full(len(X), 1 / len(X)), np.full(len(Y), 1 / len(Y))
    s = float(C.max())
    rows = []
    for name, fit in fits.items():
        t0 = time.perf_counter()
        Q, R, g, *_ = fit(X, Y, K, seed, s)
        row = {**keys, "K": K, "seed": seed, "method": name,
               "seconds": time.perf_counter() - t0, **score(C, Q, R, g, a, b)}
        if row["marg_err"] > FEASIBLE_TOL:
            Qf, Rf, gf = make_feasible(Q, R, g, a, b)
            row["feasible cost"] = lowrank_ot_cost(C, Qf, Rf, gf)
            row["feasible marg_err"] = score(C, Qf, Rf, gf, a, b)["marg_err"]
            row["feasible rank"] = int(gf.shape[0])
        else:
            row["feasible cost"], row["feasible marg_err"] = row["cost"], row["marg_err"]
            row["feasible rank"] = int(g.shape[0])
        print(f"  {keys} K={K} seed={seed} {name}: cost {row['cost']:.5g} "
              f"err {row['marg_err']:.1e} feasible {row['feasible cost']:.5g} "
              f"{row['seconds']:.1f} s", flush=True)
        rows.append(row)
    return rows


def add_ratio(df, keys):
    """``feasible/best peer``: a method's feasible cost over the cheapest other method's."""
    inst = [*keys, "K", "seed"]
    out = []
    for _, group in df.groupby(inst, sort=False):
        costs = group["feasible cost"].to_numpy()
        best = [np.delete(costs, i).min() for i in range(len(costs))]
        out.append(group.assign(**{"feasible/best peer": costs / np.array(best)}))
    return pd.concat(out)


def cell_summary(raw, keys):
    """One row per cell: our feasible cost over the best feasible peer (mean, max over seeds)."""
    ours = raw[raw.method == OURS]
    peer = raw[raw.method != OURS]
    out = ours.groupby(keys)["feasible/best peer"].agg(["mean", "max"]).add_prefix("TC/best ")
    best = peer.loc[peer.groupby([*keys, "seed"])["feasible cost"].idxmin()]
    out["best peer (per seed)"] = best.groupby(keys)["method"].agg(
        lambda m: ", ".join(sorted(set(m))))
    out["peers marg_err max"] = peer.groupby(keys)["marg_err"].max()
    out["peers marg_err max"] = out["peers marg_err max"].map("{:.1e}".format)
    return out.reset_index().round(4)


def run_cells(cells, seeds, fits, path):
    """Seed by seed over the cells; the raw rows are saved after every instance."""
    rows = []
    for seed in seeds:
        for keys, make, Ks in cells:
            X, Y = make(seed)
            for K in Ks:
                rows += run_instance(X, Y, K, seed, fits, **keys)
                pd.DataFrame(rows).to_csv(path, index=False)
    return pd.DataFrame(rows).reset_index(drop=True)


def sections(report, key, raw, note):
    """Tables J/JS or M/MS from the raw rows."""
    keys = ["n", "d"] if key == "J" else ["n", "noise"]
    raw = add_ratio(raw.drop(columns="feasible/best peer", errors="ignore"), keys)
    title = TITLES[key]
    report.section(key, title, summarise(raw, [*keys, "K", "method"], COLS), raw=raw,
                   note=note)
    report.section(key + "S", f"{title}, ours over the best feasible peer",
                   cell_summary(raw, [*keys, "K"]), note=note)


TITLES = {"J": "Gaussian clouds (15 planted clusters)", "M": "Two moons to eight Gaussians"}


def main():
    p = parser(__doc__.splitlines()[0], TABLES)
    p.add_argument("--authors", default=os.environ.get("SKPAPERS_TC_AUTHORS"),
                   help="checkout of the authors' code (default: $SKPAPERS_TC_AUTHORS)")
    p.add_argument("--n", default="1000", help="comma-separated n = m (default 1000)")
    p.add_argument("--d", default="2,10,50", help="comma-separated dimensions of table J")
    p.add_argument("--K", default="10,25,50", help="comma-separated ranks (default 10,25,50)")
    p.add_argument("--summary-only", action="store_true",
                   help="rebuild the tables from the stored raw rows (e.g. of a stopped run)")
    args = p.parse_args()
    seeds = tuple(seed_list(args)[:2] if args.quick else seed_list(args))  # quick: 2 seeds
    ns = (200,) if args.quick else tuple(int(v) for v in args.n.split(","))
    ds = (2,) if args.quick else tuple(int(v) for v in args.d.split(","))
    Ks = (10,) if args.quick else tuple(int(v) for v in args.K.split(","))
    module, why = load_authors(args.authors)
    fits = methods(module)
    notes = [] if HAS_OTT else ["ott-jax LRSinkhorn skipped: JAX and ott-jax are not installed."]
    if module is None:
        notes.append(f"Authors' TC skipped: {why}.")
    else:
        notes.append("Authors' TC at its defaults (random init, Sinkhorn epsilon 1e-5 and at "
                     "most 10,000 iterations, 2500 mirror-descent iterations, float32)"
                     + (f"; {why}" if why else "") + ".")
    notes.append(f"Methods: {', '.join(fits)}. Feasible cost: plans with "
                 f"marginal error > {FEASIBLE_TOL:g} rescaled then rounded exactly (see the "
                 "script's docstring); feasible/best peer = a method's feasible cost over the "
                 "cheapest other method's on the same instance."
                 + (" JAX in float32 (its default)." if HAS_OTT else ""))
    report = Report("transport_jax", "Transport clustering against the JAX peers", args.out)
    data = {"J": "make_blobs clouds as in transport_clustering.py. ",
            "M": "make_moons_to_gaussians, noise 0.1. "}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for key in [t.strip().upper() for t in args.only.split(",") if t.strip()]:
        path = Path(args.out) / f"transport_jax_{key.lower()}_raw.csv"
        if args.summary_only:
            raw = pd.read_csv(path)
            done = seed_span(raw.seed.unique())
            note = (f"Rebuilt from the stored raw rows (seeds {done}; "
                    "see the runs column). " + data[key] + " ".join(notes))
            sections(report, key, raw, note)
            continue
        if key == "J":
            cells = [({"n": n, "d": d}, lambda s, n=n, d=d: gaussian_clouds(n, d, s)[:2], Ks)
                     for n in ns for d in ds]
        else:
            cells = [({"n": n, "noise": 0.1}, lambda s, n=n: make_moons_to_gaussians(
                n, noise=0.1, random_state=s)[:2], Ks) for n in ns]
        raw = run_cells(cells, seeds, fits, path)
        sections(report, key, raw, f"Seeds {seed_span(seeds)}. " + data[key] + " ".join(notes))
    report.write()


if __name__ == "__main__":
    main()
