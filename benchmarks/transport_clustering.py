# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Cost of TransportClustering against low-rank OT peers, cell by cell.

Every table runs ours and the peers on the same data, in one process, back to
back, and scores every plan with one function: the primal cost
``<C, Q diag(1/g) R^T>`` next to its l1 marginal error (see
``transport_clustering_peers.py``). ``cost/best peer`` divides our cost by the
cheapest peer's on the same instance.

Tables:

* G  Gaussian clouds whose planted cluster count (15) differs from the rank K:
  n = m in {1000, 2000}, d in {2, 10, 50}, K in {10, 25, 50}.
* T1 Two moons to eight Gaussians.
* T4 Weighted, n != m: 1000 sources against 700 targets, random weights.
* W  Weighted, n != m, held-out families: Student-t noise, anisotropic, 3:1
  with log-normal weights.
* T8 Digits co-clustering (stratified halves of ``load_digits``, PCA 50).
* S  Self-transport against ``KMeans(n_init=10)``: cost (twice the K-means
  inertia over n for a hard plan) and CPU time, ratios per seed.

Run: ``python benchmarks/transport_clustering.py [--quick] [--seeds S] [--first-seed S0]
[--only G,S]``.
"""

import numpy as np
import pandas as pd
from _harness import Report, clocked, parser, seed_list, seed_span, summarise
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits, make_blobs
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split
from transport_clustering_peers import HAS_OTT, add_ratio_to_best, peers, run_instance, tc

from skpapers.cluster import transport_clustering
from skpapers.datasets import make_moons_to_gaussians

TABLES = ("G", "T1", "T4", "W", "T8", "S")
PLANTED = 15
COLS = ["cost", "cost/best peer", "marg_err", "seconds"]


def gaussian_clouds(n, d, seed, k0=PLANTED):
    """Sources and targets: k0 Gaussian clusters, each moved by its own shift."""
    rng = np.random.RandomState(seed)
    centers = rng.uniform(-10, 10, (k0, d))
    X, lx = make_blobs(n, centers=centers, random_state=rng)
    Y, ly = make_blobs(n, centers=centers + rng.normal(0, 1, (k0, d)), random_state=rng)
    return X, Y, lx, ly


def note_peers():
    return ("Peers: POT lowrank_sinkhorn (reg 0, inits kmeans and random), KMeans+LC"
            + (", ott-jax LRSinkhorn (epsilon 0)." if HAS_OTT else
               "; ott-jax LRSinkhorn skipped (JAX/ott-jax not installed)."))


def table_g(args, seeds):
    ns = (1000,) if args.quick else (1000, 2000)
    ds, Ks = ((2, 50), (10, 50)) if args.quick else ((2, 10, 50), (10, 25, 50))
    rows = []
    for n in ns:
        for d in ds:
            for seed in seeds:
                X, Y, _, _ = gaussian_clouds(n, d, seed)
                for K in Ks:
                    rows += run_instance(X, Y, K, seed, {"TC": tc(), **peers()}, n=n, d=d)
    raw = add_ratio_to_best(pd.DataFrame(rows), ["n", "d"])
    note = (f"Gaussian clouds: {PLANTED} planted clusters (make_blobs, centres U[-10, 10]^d, "
            "targets from the same clusters moved by N(0, 1) shifts), seeds "
            f"{seed_span(seeds)}. " + note_peers())
    return raw, summarise(raw, ["n", "d", "K", "method"], COLS), note


def cell_summary(raw, keys):
    """One row per cell: mean of our cost over the best peer's, marginal errors side by side."""
    ours = raw[raw.method == "TC"].groupby(keys)
    peer = raw[raw.method != "TC"]
    out = ours["cost/best peer"].agg(["mean", "max"]).add_prefix("TC/best peer ")
    out["TC marg_err max"] = ours["marg_err"].max()
    out["peers marg_err max"] = peer.groupby(keys)["marg_err"].max()
    best = peer.loc[peer.groupby([*keys, "seed"])["cost"].idxmin()]
    out["best peer (most often)"] = best.groupby(keys)["method"].agg(lambda s: s.mode()[0])
    for col in ("TC marg_err max", "peers marg_err max"):
        out[col] = out[col].map(lambda v: f"{v:.1e}")
    return out.reset_index().round(4)


def table_t1(args, seeds):
    n = 500 if args.quick else 1000
    rows = []
    for noise in (0.1, 0.5):
        for seed in seeds:
            X, Y, _, _ = make_moons_to_gaussians(n, noise=noise, random_state=seed)
            for K in (10, 50):
                rows += run_instance(X, Y, K, seed, {"TC": tc(), **peers()}, noise=noise)
    raw = add_ratio_to_best(pd.DataFrame(rows), ["noise"])
    note = f"make_moons_to_gaussians, n = m = {n}, seeds {seed_span(seeds)}. " + note_peers()
    return raw, summarise(raw, ["noise", "K", "method"], COLS), note


def table_t4(args, seeds):
    rows = []
    for seed in seeds:
        X, Y, _, _ = gaussian_clouds(1000, 10, seed)
        Y = Y[:700]
        rng = np.random.RandomState(seed)
        a, b = rng.uniform(0.5, 1.5, 1000), rng.uniform(0.5, 1.5, 700)
        for K in (10, 25):
            rows += run_instance(X, Y, K, seed, {"TC": tc(), **peers()}, a=a, b=b, m=700)
    raw = add_time_ratio(add_ratio_to_best(pd.DataFrame(rows), ["m"]), ["m"])
    note = ("Weighted Kantorovich case: 1000 sources against 700 targets of the Gaussian "
            "clouds (d = 10), weights U[0.5, 1.5] on both sides, seeds "
            f"{seed_span(seeds)}. time/POT kmeans: wall seconds over POT lowrank_sinkhorn "
            "(init='kmeans')'s on the same instance, back to back. " + note_peers())
    return raw, summarise(raw, ["m", "K", "method"], [*COLS, "time/POT kmeans"]), note


def add_time_ratio(df, keys, peer="POT kmeans"):
    """``time/POT kmeans``: our wall seconds over the peer's on the same instance."""
    inst = [*keys, "K", "seed"]
    ref = df[df.method == peer].set_index(inst)["seconds"].rename("peer_seconds")
    df = df.join(ref, on=inst)
    df["time/POT kmeans"] = df["seconds"] / df["peer_seconds"]
    return df.drop(columns="peer_seconds")


def held_out_family(name, seed):
    """Weighted, unequal-size instances of families not used while developing."""
    rng = np.random.RandomState(seed)
    if name == "student-t":  # heavy-tailed clouds, 1000 vs 700
        X, Y, _, _ = gaussian_clouds(1000, 10, seed)
        X += rng.standard_t(3, X.shape)
        Y = Y[:700] + rng.standard_t(3, (700, 10))
        return X, Y, rng.uniform(0.5, 1.5, 1000), rng.uniform(0.5, 1.5, 700)
    if name == "anisotropic":  # clouds through a random linear map, 1000 vs 700
        X, Y, _, _ = gaussian_clouds(1000, 10, seed)
        M = rng.standard_normal((10, 10))
        return X @ M, Y[:700] @ M, rng.uniform(0.5, 1.5, 1000), rng.uniform(0.5, 1.5, 700)
    # "3:1 log-normal": 900 sources against 300 targets, log-normal weights
    X, Y, _, _ = gaussian_clouds(900, 10, seed)
    return X, Y[:300], rng.lognormal(0, 1, 900), rng.lognormal(0, 1, 300)


def table_w(args, seeds):
    rows = []
    for family in ("student-t", "anisotropic", "3:1 log-normal"):
        for seed in seeds:
            X, Y, a, b = held_out_family(family, seed)
            rows += run_instance(X, Y, 10, seed, {"TC": tc(), **peers(lot=False)}, a=a, b=b,
                                 family=family)
    raw = add_time_ratio(add_ratio_to_best(pd.DataFrame(rows), ["family"]), ["family"])
    note = ("Held-out weighted families, K = 10: Student-t(3) noise added to the Gaussian "
            "clouds (1000 vs 700), clouds through a random linear map (1000 vs 700), 900 vs "
            "300 with log-normal(0, 1) weights; other cells U[0.5, 1.5] weights; seeds "
            f"{seed_span(seeds)}. time/POT kmeans: wall seconds over POT lowrank_sinkhorn "
            "(init='kmeans')'s on the same instance, back to back. " + note_peers())
    return raw, summarise(raw, ["family", "K", "method"], [*COLS, "time/POT kmeans"]), note


def table_t8(args, seeds):
    X, y = load_digits(return_X_y=True)
    A, B, ya, yb = train_test_split(X, y, stratify=y, test_size=0.5, random_state=123)
    pca = PCA(50, random_state=0).fit(A)
    A, B = pca.transform(A), pca.transform(B)
    rows = []
    for setup, Bv, ybv in (("899/898", B, yb), ("899/897", B[:-1], yb[:-1])):
        for seed in seeds:
            rows += run_instance(A, Bv, 10, seed, {"TC": tc(), **peers()},
                                 labels=(ya, ybv), cta=True, setup=setup)
    raw = add_ratio_to_best(pd.DataFrame(rows), ["setup"])
    note = ("load_digits, stratified halves (random_state=123), PCA(50) fit on one half, "
            f"K = 10, seeds {seed_span(seeds)}; CTA = class-transfer accuracy. " + note_peers())
    return raw, summarise(raw, ["setup", "method"], [*COLS, "CTA", "AMI A"],
                          higher_is_better=["CTA", "AMI A"]), note


def table_s(args, seeds, repeats=3):
    rows = []
    n = 500 if args.quick else 2000
    data = {
        "moons": lambda s: make_moons_to_gaussians(n, noise=0.1, random_state=s)[0],
        "clouds d=2": lambda s: gaussian_clouds(n, 2, s)[0],
        "clouds d=50": lambda s: gaussian_clouds(n, 50, s)[0],
    }
    for name, make in data.items():
        for seed in seeds:
            X = make(seed)
            for K in (10, 50):
                times = {"KMeans": [], "TC": []}
                for _ in range(repeats):  # alternating, CPU seconds of this process
                    km, _, cpu = clocked(KMeans(K, n_init=10, random_state=seed).fit, X)
                    times["KMeans"].append(cpu)
                    (_, _, _, res), _, cpu = clocked(
                        transport_clustering, X, n_clusters=K, random_state=seed)
                    times["TC"].append(cpu)
                ref = 2 * km.inertia_ / n
                rows.append({"data": name, "K": K, "seed": seed, "method": "TC",
                             "cost/KMeans cost": res.cost / ref,
                             "time/KMeans time": np.median(times["TC"])
                             / np.median(times["KMeans"])})
    raw = pd.DataFrame(rows)
    note = (f"Self-transport of n = {n} points; reference KMeans(n_init=10, random_state=seed): "
            "cost 2 x inertia_ / n (the cost of its hard plan Q = R), time its CPU seconds "
            f"in the same process (median of {repeats} alternating runs each); seeds "
            f"{seed_span(seeds)}.")
    return raw, summarise(raw, ["data", "K"], ["cost/KMeans cost", "time/KMeans time"]), note


FUNCS = {"G": table_g, "T1": table_t1, "T4": table_t4, "W": table_w, "T8": table_t8,
         "S": table_s}
TITLES = {"G": "Gaussian clouds (planted count != rank)", "T1": "Two moons to eight Gaussians",
          "T4": "Weighted, n != m (1000 vs 700)",
          "W": "Weighted, n != m, held-out families", "T8": "Digits co-clustering",
          "S": "Self-transport against KMeans"}


def main():
    p = parser(__doc__.splitlines()[0], TABLES)
    p.add_argument("--summary-only", action="store_true",
                   help="rebuild the per-cell summary GS from the stored raw G table")
    args = p.parse_args()
    seeds = tuple(seed_list(args)[:2] if args.quick else seed_list(args))  # quick: 2 seeds
    report = Report("transport_clustering", "Transport clustering: cost against peers", args.out)
    if args.summary_only:
        raw = pd.read_csv(f"{args.out}/transport_clustering_g_raw.csv")
        report.section("GS", "Gaussian clouds, ours over the best peer per cell",
                       cell_summary(raw, ["n", "d", "K"]),
                       note="Summary of the raw rows of table G.")
        report.write()
        return
    for key in [t.strip().upper() for t in args.only.split(",") if t.strip()]:
        raw, table, note = FUNCS[key](args, seeds)
        report.section(key, TITLES[key], table, raw=raw, note=note)
        if key == "G":
            report.section("GS", "Gaussian clouds, ours over the best peer per cell",
                           cell_summary(raw, ["n", "d", "K"]), note=note)
    report.write()


if __name__ == "__main__":
    main()
