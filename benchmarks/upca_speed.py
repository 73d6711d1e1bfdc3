# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Speed of UnlabeledPCA against scikit-learn's PCA, and of LSRF as m grows.

* S1: n_samples in {1e3, 1e4, 1e5}, n_features = 50, r = 5, 90% of the samples
  with 10% of their entries shuffled, noise 0.01: seconds of ``PCA`` fit +
  ``inverse_transform(transform)``, of ``UnlabeledPCA`` fit and restore, and
  their ratio, all in one process on the same data; relative error of both.
  Also the restore with the paper's LSRF (``lsrf_tol=None``, which runs every
  deletion) on the same fit, and its error. CPU seconds of the process next to
  the wall-clock ones (the machine may be shared), and PCA once more with its
  BLAS limited to one thread (two threads can stall on a busy machine).
* S2: Stage II (``stage2="lsrf"``, every sample restored, the true subspace)
  for 16 samples as n_features grows to the faces' 32256 (r = 4, 40% of the
  entries shuffled): the textbook LSRF (a fresh least-squares fit per deleted
  entry, written here; up to 5000 features), the paper's steps with downdated
  normal equations in a loop over samples, and one call on all 16 with the
  paper's LSRF (``lsrf_tol=None``) and with the default early stop; seconds for
  the 16 samples, extrapolated linearly when fewer were timed; the error on the
  samples every variant restored.

S1 runs ``--seeds`` data sets per size from ``--first-seed``; S2 one data set, drawn with
the first seed.

Run: ``python benchmarks/upca_speed.py [--quick] [--seeds N] [--first-seed S] [--only S1,S2]``.
"""


import numpy as np
from _harness import Report, clocked, parser, seed_list, seed_span, summarise, timed
from sklearn.decomposition import PCA
from threadpoolctl import threadpool_limits
from upca_common import lsrf_downdated, lsrf_textbook, with_components

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import relative_restoration_error


def table_s1(seeds, quick):
    rows = []
    r = 5
    for n in (1000, 10000) if quick else (1000, 10000, 100000):
        for seed in seeds:
            X, X_true, _, _ = make_permuted_subspace(n, 50, r, shuffled_ratio=0.1,
                                                     random_state=seed)  # fmt: skip
            pca = PCA(r)
            X_pca, sec_pca = timed(lambda pca=pca, X=X: pca.inverse_transform(pca.fit_transform(X)))
            pca1 = PCA(r)
            with threadpool_limits(1, user_api="blas"):
                _, sec_pca1 = timed(lambda p=pca1, X=X: p.inverse_transform(p.fit_transform(X)))
            est = UnlabeledPCA(r)
            _, sec_fit, cpu_fit = clocked(est.fit, X)
            X_hat, sec_restore, cpu_restore = clocked(est.restore, X)
            X_paper, sec_paper = timed(est.set_params(lsrf_tol=None).fit(X).restore, X)
            total = sec_fit + sec_restore
            rows.append(
                {"n_samples": n, "seed": seed, "PCA fit+inverse s": sec_pca,
                 "PCA fit+inverse s (1 BLAS thread)": sec_pca1, "UPCA fit s": sec_fit,
                 "UPCA restore s": sec_restore, "UPCA total s": total,
                 "UPCA total CPU s": cpu_fit + cpu_restore,
                 "UPCA / PCA": total / sec_pca, "flagged": int(est.permuted_mask_.sum()),
                 "PCA error": relative_restoration_error(X_true, X_pca),
                 "UPCA error": relative_restoration_error(X_true, X_hat),
                 "paper's LSRF restore s": sec_paper,
                 "paper's LSRF error": relative_restoration_error(X_true, X_paper)}
            )  # fmt: skip
    return rows


def _one_by_one(est, X):
    return np.concatenate([est.restore(x[None]) for x in X])


def table_s2(seed, quick):
    rows = []
    k = 16
    for m in (50, 500, 5000) if quick else (50, 500, 5000, 32256):
        X, X_true, comp, _ = make_permuted_subspace(
            64, m, 4, outlier_ratio=0.25, shuffled_ratio=0.4, random_state=seed
        )
        paper = with_components(comp, X, restore_samples="all", lsrf_tol=None)
        default = with_components(comp, X, restore_samples="all")
        n_slow = 16 if m <= 500 else (2 if m <= 5000 else 1)
        variants = (
            ("textbook loop",
             lambda Y, A=comp.T: np.array([lsrf_textbook(A, y) for y in Y]) @ A.T, n_slow),
            ("paper's steps, downdated, loop",
             lambda Y, A=comp.T: np.array([lsrf_downdated(A, y) for y in Y]) @ A.T, n_slow),
            ("one call, lsrf_tol=None", paper.restore, k),
            ("one call, default (lsrf_tol='auto')", default.restore, k),
        )
        for variant, fn, kk in variants:
            if variant == "textbook loop" and m > 5000:
                continue  # about 70 s per sample; the downdated loop takes the same steps
            X_hat, sec = timed(fn, X[:kk])
            rows.append({"n_features": m, "variant": variant, "seed": seed,
                         "seconds (16 samples)": sec * k / kk,
                         "timed samples": kk, "error (common)": relative_restoration_error(
                             X_true[:n_slow], X_hat[:n_slow])})  # fmt: skip
    return rows


S1_TIMINGS = ["PCA fit+inverse s", "PCA fit+inverse s (1 BLAS thread)", "UPCA fit s",
              "UPCA restore s", "UPCA total s", "UPCA total CPU s", "UPCA / PCA",
              "paper's LSRF restore s"]


def main(argv=None):
    args = parser(__doc__.splitlines()[0], ("S1", "S2")).parse_args(argv)
    only = set(args.only.split(","))
    seeds = seed_list(args)[:1] if args.quick else seed_list(args)
    report = Report("upca_speed", "Unlabeled PCA: speed", out=args.out)
    if "S1" in only:
        rows = table_s1(seeds, args.quick)
        report.section("S1", "UnlabeledPCA against PCA (n_features=50, r=5)",
                       summarise(rows, ["n_samples"],
                                 [c for c in rows[0] if c not in ("n_samples", "seed")],
                                 timings=S1_TIMINGS), raw=rows,
                       note=f"Seeds {seed_span(seeds)}.")  # fmt: skip
    if "S2" in only:
        rows = table_s2(seeds[0], args.quick)
        report.section("S2", "LSRF seconds as n_features grows (16 samples, r=4)",
                       summarise(rows, ["n_features", "variant", "timed samples"],
                                 ["seconds (16 samples)", "error (common)"]),
                       raw=rows, note=f"Seed {seeds[0]}.")  # fmt: skip
    print(report.write())


if __name__ == "__main__":
    main()
