# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dask: the sampling error of "fit on a sample, assign at scale", and throughput.

D1 (sampling error; ``--seeds`` seeds): a fit on a random share of the rows
(:func:`skpapers.utils.sample_rows`) against the fit on all rows, both in
memory, each judged on all rows by the same measure.

- ``TransportClustering`` (``make_shifted_gaussians``, n sources and n targets,
  sigma 0.5): the sampled fit uses a share of the sources and of the targets;
  its cost on all rows is ``-score(X)``: the expected cost of sending every
  source point into its co-cluster (the one ``predict`` gives) through the
  co-cluster's fitted target side. The full fit is judged by the same formula
  on the same rows (its ``cost_`` is the cost of its transport plan, which
  also respects the masses; ``-score`` is below it). Column ``cost ratio``:
  sampled over full.
- ``RobustSingleIndexRegressor`` (``make_contaminated_sim``: GeLU link, 10%
  of the rows hijacked): error ``||coef - truth||`` of each fit; column
  ``error ratio``: sampled over full.

D2 (throughput; one data set, ``--repeats`` alternating repeats, median): the
Dask path on a ``LocalCluster`` (2 worker processes, 1 thread each) against the
in-memory path on the same data (generated block by block by the same
function, once: held by the workers, or concatenated in this process). Rows per second
of ``UnlabeledPCA.fit`` (distributed), ``restore``, ``TransportClustering.predict``
and ``RobustSingleIndexRegressor.predict``; the peak RSS of the workers
(VmHWM, their imports included) and of this process.

Run: ``python benchmarks/dask_scaling.py [--quick] [--only D1,D2] [--seeds S]
[--rows N] [--repeats R]``.
"""

import time
import warnings

import numpy as np
import pandas as pd
from _harness import Report, parser, peak_rss_mb, seed_list, summarise

from skpapers.cluster import TransportClustering
from skpapers.datasets import make_contaminated_sim, make_shifted_gaussians
from skpapers.decomposition import UnlabeledPCA
from skpapers.linear_model import RobustSingleIndexRegressor
from skpapers.utils import sample_rows

SHARES = (0.25, 0.05, 0.01)
M, RANK, BLOCK = 20, 3, 50_000


def sampling_rows(seed, quick):
    """D1 rows of one seed."""
    rows = []
    n, K = (4000, 8) if quick else (10_000, 10)
    X, Y, _, _ = make_shifted_gaussians(n, n_clusters=K, sigma=0.5, random_state=seed)
    full = TransportClustering(K, random_state=seed).fit(X, X_target=Y)
    full_cost = -full.score(X)
    rows.append(
        {
            "method": "transport",
            "share": 1.0,
            "seed": seed,
            "cost ratio": 1.0,
            "cost on all rows": full_cost,
            "cost_ of the fit": full.cost_,
        }
    )
    for share in SHARES:
        Xs = sample_rows(X, share, random_state=seed)
        Ys = sample_rows(Y, share, random_state=seed + 1000)
        tc = TransportClustering(K, random_state=seed).fit(Xs, X_target=Ys)
        rows.append(
            {
                "method": "transport",
                "share": share,
                "seed": seed,
                "cost ratio": -tc.score(X) / full_cost,
                "cost on all rows": -tc.score(X),
                "cost_ of the fit": tc.cost_,
            }
        )
    n = 20_000 if quick else 100_000
    X, y, truth, _ = make_contaminated_sim(n, 10, "gelu", 0.5, 0.1, "hijack", random_state=seed)
    full_error = float(
        np.linalg.norm(RobustSingleIndexRegressor(random_state=seed).fit(X, y).coef_ - truth)
    )
    rows.append(
        {
            "method": "robust SIM",
            "share": 1.0,
            "seed": seed,
            "error ratio": 1.0,
            "error": full_error,
        }
    )
    for share in SHARES:
        keep = sample_rows(np.arange(n), share, random_state=seed)
        sim = RobustSingleIndexRegressor(random_state=seed).fit(X[keep], y[keep])
        error = float(np.linalg.norm(sim.coef_ - truth))
        rows.append(
            {
                "method": "robust SIM",
                "share": share,
                "seed": seed,
                "error ratio": error / full_error,
                "error": error,
            }
        )
    return rows


def _block(block_id, basis):
    """Rows of one block: rank-3 samples, noise 1e-3, every 10th row with 3 entries cycled."""
    rng = np.random.default_rng(block_id[0])
    X = rng.normal(size=(BLOCK, RANK)) @ basis + 1e-3 * rng.normal(size=(BLOCK, M))
    picked = rng.random((len(X[::10]), M)).argsort(axis=1)[:, :3]
    order = np.tile(np.arange(M), (len(picked), 1))
    np.put_along_axis(order, picked, np.roll(picked, 1, axis=1), axis=1)
    X[::10] = np.take_along_axis(X[::10], order, axis=1)
    return X


def throughput_rows(n_rows, repeats):
    """D2 rows: rows per second of each method, Dask on a LocalCluster and in memory."""
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    n_blocks = n_rows // BLOCK
    basis = np.linalg.qr(np.random.default_rng(0).normal(size=(M, RANK)))[0].T
    X_mem = np.concatenate([_block((b,), basis) for b in range(n_blocks)])
    sample = sample_rows(X_mem, 5000, random_state=0)
    tc = TransportClustering(8, random_state=0).fit(sample)
    sim = RobustSingleIndexRegressor(random_state=0).fit(sample[:, 1:], sample[:, 0])
    fitted = UnlabeledPCA(RANK).fit(X_mem)
    tasks = {
        "UnlabeledPCA.fit": lambda X: UnlabeledPCA(RANK).fit(X).components_,
        "UnlabeledPCA.restore": lambda X: fitted.restore(X)[:, 0].sum(),
        "TransportClustering.predict": lambda X: tc.predict(X).sum(),
        "RobustSingleIndexRegressor.predict": lambda X: sim.predict(X[:, 1:]).sum(),
    }
    rows = []
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        X_dask = da.map_blocks(
            _block,
            basis=basis,
            dtype=np.float64,
            meta=np.empty((0, 0)),
            chunks=((BLOCK,) * n_blocks, (M,)),
        ).persist()
        wait(X_dask)  # the same data in the workers' memory as X_mem in this process
        for name, task in tasks.items():
            seconds = {"in memory": [], "Dask": []}
            for _ in range(repeats):
                for path, X in (("in memory", X_mem), ("Dask", X_dask)):
                    t0 = time.perf_counter()
                    out = task(X)
                    if path == "Dask" and hasattr(out, "compute"):
                        out = out.compute()
                    seconds[path].append(time.perf_counter() - t0)
            mem, dist = np.median(seconds["in memory"]), np.median(seconds["Dask"])
            rows.append(
                {
                    "method": name,
                    "rows": n_rows,
                    "in-memory rows/s": n_rows / mem,
                    "Dask rows/s": n_rows / dist,
                    "Dask / in-memory": mem / dist,
                }
            )
            print(rows[-1], flush=True)
        worker_peak = max(client.run(peak_rss_mb).values())
    for row in rows:
        row["worker peak MB"] = worker_peak
        row["client peak MB"] = peak_rss_mb()
        row["data MB"] = X_mem.nbytes / 1e6
    return rows


def main(argv=None):
    p = parser(__doc__.splitlines()[0], tables=("D1", "D2"))
    p.add_argument("--rows", type=int, default=1_000_000, help="rows of D2")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    only = set(args.only.split(","))
    warnings.simplefilter("ignore")
    report = Report("dask_scaling", "Dask: sampling error and throughput", out=args.out)
    if "D1" in only:
        raw = [row for seed in seed_list(args) for row in sampling_rows(seed, args.quick)]
        frame = pd.DataFrame(raw)
        table = pd.concat(
            [
                summarise(
                    frame[frame.method == "transport"],
                    ["method", "share"],
                    ["cost ratio", "cost on all rows", "cost_ of the fit"],
                ),
                summarise(
                    frame[frame.method == "robust SIM"],
                    ["method", "share"],
                    ["error ratio", "error"],
                ),
            ]
        )
        report.section(
            "D1",
            "Fit on a sample, judged on all rows, against the fit on all rows",
            table,
            raw=raw,
            note=(
                "Transport: n = m = 10000 sources and targets (4000 with --quick), "
                "K = 10 (8), sigma 0.5; robust SIM: n = 100000 (20000), d = 10, "
                "GeLU, hijack eps 0.1. Ratios: sampled fit over full fit, per "
                "seed; worst = largest."
            ),
        )
    if "D2" in only:
        rows = args.rows if not args.quick else 200_000
        table = pd.DataFrame(throughput_rows(rows, args.repeats)).round(3)
        report.section(
            "D2",
            "Throughput: Dask on a 2-worker LocalCluster against in memory",
            table,
            note=(
                f"{rows} x {M} float64 rows (rank {RANK}, 10% with 3 entries cycled) in "
                f"blocks of {BLOCK}, generated once and held by the workers (Dask) or by "
                f"this process (in memory); median of {args.repeats} alternating repeats. "
                "Peak RSS: VmHWM, imports included."
            ),
        )
    report.write()


if __name__ == "__main__":
    main()
