# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA on densely permuted samples (every entry shuffled, alpha = 1).

* U5: m = 50, n = 100, noise 0.01, r in {3, 4, 5} (and m = 200 with ``--wide``),
  10 to 25 inliers. For each Stage II on the DPCP subspace: the fraction of
  the permuted samples restored (relative error below 0.05), the refined error,
  the largest principal angle of the subspace, seconds.

  - ``hard_em`` (``UnlabeledPCA(stage2="hard_em")``): hard EM started on the set
    of coefficients that match the first two power sums of the sample, round
    after round until the sample fits to the noise level.
  - the same Stage II on the true subspace ("GT").
  - hard EM from random starts ``N(0, I) |y| / sqrt(r)`` plus the LAD and LSRF
    solutions, keeping the best ``|sort(y) - sort(A c)|``: 50 random starts
    (the package's earlier ``hard_em``) and 500, written here.
  - LSRF (``UnlabeledPCA(stage2="lsrf", restore_samples="all")``): the sparse
    solver, as a reference.

Run: ``python benchmarks/upca_dense.py [--quick] [--seeds N] [--wide]``.
"""

import numpy as np
from _harness import Report, parser, summarise, timed
from upca_common import recovery, with_components

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import principal_angle, refined_restoration_error


def _hard_em_one(A, y, starts, max_iter=1000, tol=1e-4):
    """Hard EM (sort and match, least squares) for one sample from every start."""
    ys = np.sort(y)
    X = starts.copy()
    best = np.full(len(X), np.inf)
    run = np.arange(len(X))  # starts still improving by at least tol |y|
    pinv = np.linalg.pinv(A)
    for _ in range(max_iter):
        Z = X[run] @ A.T
        order = np.argsort(Z, axis=1)
        err = np.linalg.norm(ys - np.take_along_axis(Z, order, axis=1), axis=1)
        going = best[run] - err >= tol * np.linalg.norm(y)
        best[run] = np.minimum(best[run], err)
        run, order = run[going], order[going]
        if run.size == 0:
            break
        matched = np.empty((run.size, len(y)))
        np.put_along_axis(matched, order, np.broadcast_to(ys, matched.shape), axis=1)
        X[run] = matched @ pinv.T
    err = np.linalg.norm(ys - np.sort(X @ A.T, axis=1), axis=1)
    return X[np.argmin(err)]


def random_start_hard_em(est, X, n_starts, seed):
    """Restore every sample by hard EM from LAD, LSRF and ``n_starts`` random starts."""
    r = est.components_.shape[0]
    A = est.components_.T
    lad = est.set_params(stage2="l1", restore_samples="all").transform(X)
    lsrf = est.set_params(stage2="lsrf").transform(X)
    rng = np.random.default_rng(seed)
    C = np.empty((len(X), r))
    for j, y in enumerate(X):
        rand = rng.standard_normal((n_starts, r)) * np.linalg.norm(y) / np.sqrt(r)
        C[j] = _hard_em_one(A, y, np.vstack([lad[j], lsrf[j], rand]))
    return C @ est.components_


def table_u5(seeds, quick, wide):
    rows = []
    settings = [(50, 3), (50, 4), (50, 5)] + ([(200, 3), (200, 5)] if wide else [])
    for m, r in settings[:1] if quick else settings:
        for inliers in (10, 15, 20, 25):
            for seed in seeds:
                X, X_true, comp, permuted = make_permuted_subspace(
                    100, m, r, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0,
                    random_state=seed,
                )  # fmt: skip

                def add(method, X_hat, sec, angle, m=m, r=r, inliers=inliers, X_true=X_true,
                        p=permuted):
                    rows.append(
                        {"m": m, "r": r, "inliers": inliers, "method": method,
                         "restored fraction": recovery(X_hat, X_true, p, tol=0.05),
                         "refined error": refined_restoration_error(X_true, X_hat, r),
                         "angle (deg)": angle, "seconds": sec}
                    )  # fmt: skip

                est = UnlabeledPCA(r, stage2="hard_em", random_state=seed)
                X_hat, sec = timed(est.fit_restore, X)
                angle = principal_angle(est.components_, comp)
                add("DPCP+hard_em", X_hat, sec, angle)
                gt = with_components(comp, X, stage2="hard_em", random_state=seed)
                add("GT+hard_em", *timed(gt.restore, X), 0.0)
                n_starts = (50, 500) if r == 3 else (50,)
                for n in n_starts:
                    base = UnlabeledPCA(r).fit(X)
                    X_hat, sec = timed(random_start_hard_em, base, X, n, seed)
                    add(f"DPCP+hard EM, {n} random starts", X_hat, sec, angle)
                lsrf = UnlabeledPCA(r, restore_samples="all")
                add("DPCP+LSRF", *timed(lsrf.fit_restore, X), angle)
    return rows


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--wide", action="store_true", help="also m = 200")
    args = p.parse_args(argv)
    seeds = list(range(2 if args.quick else args.seeds))
    rows = table_u5(seeds, args.quick, args.wide)
    report = Report("upca_dense", "Unlabeled PCA: dense permutations", out=args.out)
    report.section(
        "U5", "Dense permutations (n=100, alpha=1, noise 0.01)",
        summarise(rows, ["m", "r", "inliers", "method"],
                  ["restored fraction", "refined error", "angle (deg)", "seconds"]),
        raw=rows,
        note="'restored': permuted samples with relative error below 0.05. The random-start "
             "solvers and LSRF run on the DPCP subspace fitted by UnlabeledPCA.",
    )  # fmt: skip
    print(report.write())


if __name__ == "__main__":
    main()
