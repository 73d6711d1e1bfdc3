# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Transport clustering ablations: precomputed costs, registration, initialisation, W2.

Tables:

* T3 SBM shortest-path cost (self-transport, ``metric="precomputed"``) against
  KMeans on the rows of C and the planted blocks.
* T5 Registration: exact, hierarchical and entropic (``reg``) on shifted Gaussians.
* T6 Initialisation (``init``, ``init_mix``) against POT.
* T7 Wasserstein estimation on the fragmented hypercube (W2^2 = 8).

Run: ``python benchmarks/transport_clustering_ablation.py [--quick] [--seeds S] [--first-seed S0]
[--only T3,T5]``.
"""

from functools import partial

import ot
import pandas as pd
from _harness import Report, parser, seed_list, seed_span, summarise
from transport_clustering_peers import factored, hard, kmeans_lc, peers, run_instance, tc

from skpapers.datasets import make_fragmented_hypercube, make_sbm_cost, make_shifted_gaussians

TABLES = ("T3", "T5", "T6", "T7")
SBM_P = dict(p_intra=0.5, p_inter=0.005)


def planted(labels, X, Y, K, seed, s, a=None, b=None):
    """The hard plan of a planted partition (a reference, not a method)."""
    Q, g = hard(labels, K)
    return Q, Q, g, labels, labels, {}


def table_t3(args, seeds):
    rows = []
    n = 300 if args.quick else 1000
    for K in (10,) if args.quick else (10, 25, 50):
        for seed in seeds:
            C, labels = make_sbm_cost(K, n // K, random_state=seed, **SBM_P)
            methods = {"TC": tc(metric="precomputed"), "KMeans rows of C": kmeans_lc,
                       "planted blocks": partial(planted, labels)}
            rows += run_instance(C, C, K, seed, methods, C=C, labels=(labels, labels),
                                 ot_cost=0.0)
    note = (f"make_sbm_cost(n_blocks=K, block_size={n}//K, p_intra=0.5, p_inter=0.005), "
            f"seeds {seed_span(seeds)}; TC gets the shortest-path matrix (metric='precomputed').")
    return rows, ["K", "method"], ["cost", "AMI A", "seconds"], note


def table_t5(args, seeds):
    n = 500 if args.quick else 2000
    rows = []
    variants = {"exact": tc(registration="exact"), "hierarchical": tc(registration="hierarchical"),
                "sinkhorn 1e-5": tc(registration="sinkhorn"),
                "sinkhorn 1e-2": tc(registration="sinkhorn", reg=1e-2)}
    for d in (10, 50):
        for seed in seeds:
            X, Y, lx, ly = make_shifted_gaussians(n, d, sigma=0.3, random_state=seed)
            rows += run_instance(X, Y, 25, seed, variants, labels=(lx, ly), d=d)
    df = pd.DataFrame(rows)
    ref = df[df.method == "exact"].set_index(["d", "seed"])["cost"]
    df["cost/exact"] = df["cost"] / ref.loc[list(zip(df.d, df.seed, strict=True))].to_numpy()
    note = (f"make_shifted_gaussians(n = m = {n}, k = d, sigma = 0.3), K = 25, seeds "
            f"{seed_span(seeds)}; 'hierarchical' is the linear-memory registration.")
    return df, ["d", "method"], ["cost", "cost/exact", "registration_cost", "seconds"], note


def table_t6(args, seeds):
    n, K = (500, 10) if args.quick else (2000, 50)
    methods = {"TC init=kmeans": tc(), "TC init=random": tc(init="random"),
               "TC init_mix=0": tc(init_mix=0.0), **peers(lot=False)}
    rows = []
    for seed in seeds:
        X, Y, lx, ly = make_shifted_gaussians(n, K, sigma=0.1, random_state=seed)
        rows += run_instance(X, Y, K, seed, methods, labels=(lx, ly))
    note = (f"make_shifted_gaussians(n = m = {n}, k = K = {K}, sigma = 0.1), seeds "
            f"{seed_span(seeds)}.")
    return rows, ["method"], ["cost", "AMI A", "n_iter", "seconds"], note


def table_t7(args, seeds):
    methods = {"TC": tc(), "KMeans+LC": kmeans_lc, "POT factored OT": factored,
               **{k: v for k, v in peers(lot=False).items() if k.startswith("POT")}}
    rows = []
    for n in (256,) if args.quick else (256, 1024):
        for seed in seeds:
            X, Y = make_fragmented_hypercube(n, 30, random_state=seed)
            C = ot.dist(X, Y)
            w2 = ot.emd2([], [], C, numItermax=10**8)
            rows += run_instance(X, Y, 10, seed, methods, C=C, ot_cost=w2, centroids=True, n=n)
    df = pd.DataFrame(rows)
    df["|centroid - 8|"] = (df["centroid W2^2"] - 8.0).abs()
    note = (f"make_fragmented_hypercube, d = 30, K = 10, seeds {seed_span(seeds)}; two W2^2 "
            "estimates per plan: its cost and the transport of the co-cluster means (Forrow "
            "et al.).")
    return df, ["n", "method"], ["|centroid - 8|", "cost", "cost/OT", "seconds"], note


FUNCS = {"T3": table_t3, "T5": table_t5, "T6": table_t6, "T7": table_t7}
TITLES = {"T3": "SBM shortest-path cost", "T5": "Registration", "T6": "Initialisation",
          "T7": "Wasserstein estimation (fragmented hypercube)"}


def main():
    args = parser(__doc__.splitlines()[0], TABLES).parse_args()
    seeds = tuple(seed_list(args)[:2] if args.quick else seed_list(args))  # quick: 2 seeds
    report = Report("transport_clustering_ablation", "Transport clustering ablations", args.out)
    for key in [t.strip().upper() for t in args.only.split(",") if t.strip()]:
        rows, keys, cols, note = FUNCS[key](args, seeds)
        table = summarise(rows, keys, cols, higher_is_better=["AMI A"])
        report.section(key, TITLES[key], table, raw=rows, note=note)
    report.write()


if __name__ == "__main__":
    main()
