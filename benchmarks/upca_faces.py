# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA on the Extended Yale B faces with shuffled patches.

* U4: subject 3 (64 images of 192 x 168 pixels, m = 32256), 16 images with 34 of
  their 84 patches shuffled (the 50 bottom patches fixed), r = 4. Relative
  error on the corrupted images and on all 64, doing nothing as the reference,
  how many images were flagged and the recall of the flags, Stage-I and
  Stage-II seconds, for every Stage II (``--stage2``) restoring all 64 images
  (as the authors' code does, on the default's refitted subspace), and for the
  first one also only the flagged
  images (the default). With ``--jobs``, Stage II
  also runs with ``n_jobs=2`` and on a local Dask cluster (two workers, threads)
  through joblib's ``parallel_config(backend="dask")``.
* U4S, Stage II at m = 32256: the 16 shuffled images restored on the Stage-I
  subspace by the paper's LSRF steps (one entry deleted per step, downdated
  normal equations, a loop over images; timed on one image and extrapolated to
  16) and by the batched LSRF with ``lsrf_tol=None`` (the paper's stopping
  rule), and by the default (``lsrf_tol="auto"``, on its refitted subspace), in
  one process; seconds for the 16 images, error on the image every variant
  restored and on the 16.
* Figure ``upca_faces.png``: images 1 and 23, original / shuffled / restored.

Run: ``python benchmarks/upca_faces.py [--quick] [--seeds N] [--first-seed S]
[--stage2 lsrf,l1,pl] [--jobs] [--only U4,U4S]``.
"""

import numpy as np
from _harness import RESULTS, Report, parser, seed_list, seed_span, summarise, timed
from upca_common import lsrf_downdated, shuffle_faces

from skpapers.datasets import load_yaleb_faces
from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import relative_restoration_error


def _restore_with(est, X, backend):
    if backend == "sequential":
        return est.restore(X)
    if backend == "n_jobs=2":
        return est.set_params(n_jobs=2).restore(X)
    from dask.distributed import Client, LocalCluster
    from joblib import parallel_config

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False) as cluster:
        with Client(cluster), parallel_config(backend="dask"):
            return est.set_params(n_jobs=2).restore(X)


def table_u4(faces, seeds, methods, jobs):
    rows, example = [], None
    for seed in seeds:
        X, corrupted = shuffle_faces(faces, np.random.default_rng(seed))
        base, sec1 = timed(UnlabeledPCA(4).fit, X)
        backends = ("sequential", "n_jobs=2", "dask") if jobs else ("sequential",)
        runs = [(s2, "all", b) for s2 in methods
                for b in (backends if s2 == methods[0] else ("sequential",))]
        runs.insert(1, (methods[0], "flagged", "sequential"))
        for stage2, which, backend in runs:
            est = UnlabeledPCA(4, stage2=stage2, restore_samples=which, random_state=seed)
            est.fit(X)
            X_hat, sec2 = timed(_restore_with, est, X, backend)
            flagged = est.permuted_mask_
            rows.append(
                {"method": stage2, "restored": which, "backend": backend, "seed": seed,
                 "error corrupted":
                     relative_restoration_error(faces[corrupted], X_hat[corrupted]),
                 "error all 64": relative_restoration_error(faces, X_hat),
                 "error doing nothing (corrupted)":
                     relative_restoration_error(faces[corrupted], X[corrupted]),
                 "flag recall": float((flagged & corrupted).sum() / corrupted.sum()),
                 "n flagged": int(flagged.sum()),
                 "stage I seconds": sec1, "stage II seconds": sec2}
            )  # fmt: skip
            if example is None and stage2 == "lsrf" and which == "all":
                example = (faces, X, X_hat)
    return rows, example


def table_u4s(faces, seeds):
    rows = []
    for seed in seeds:
        X, corrupted = shuffle_faces(faces, np.random.default_rng(seed))
        Xc, truth = X[corrupted], faces[corrupted]
        est = UnlabeledPCA(4, restore_samples="all").fit(X)
        paper = UnlabeledPCA(4, restore_samples="all", lsrf_tol=None).fit(X)
        A = paper.components_.T  # the paper's algorithm, two ways, on one subspace
        variants = (
            ("paper's steps, downdated, loop",
             lambda Y, A=A: np.array([lsrf_downdated(A, y) for y in Y]) @ A.T, 1),
            ("batched, lsrf_tol=None", paper.restore, len(Xc)),
            ("batched, default (lsrf_tol='auto', refitted subspace)", est.restore, len(Xc)),
        )
        for variant, fn, k in variants:
            X_hat, sec = timed(fn, Xc[:k])
            rows.append(
                {"variant": variant, "seed": seed, "seconds (16 images)": sec * len(Xc) / k,
                 "timed images": k,
                 "error (first image)": relative_restoration_error(truth[:1], X_hat[:1]),
                 "error (16 images)": relative_restoration_error(truth, X_hat)
                 if k == len(Xc) else np.nan}
            )  # fmt: skip
    return rows


def faces_figure(example, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    faces, X, X_hat = example
    fig, axes = plt.subplots(2, 3, figsize=(7, 5))
    for row, j in enumerate((0, 22)):
        for col, (img, label) in enumerate(
            ((faces[j], "original"), (X[j], "shuffled"), (X_hat[j], "UPCA (LSRF)"))
        ):
            axes[row, col].imshow(img.reshape(192, 168, order="F"), cmap="gray")
            axes[row, col].set_title(f"image {j + 1}: {label}", fontsize=8)
            axes[row, col].axis("off")
    fig.tight_layout()
    fig.savefig(out / "upca_faces.png", dpi=80)


def main(argv=None):
    p = parser(__doc__.splitlines()[0], ("U4", "U4S"))
    p.add_argument("--stage2", default="lsrf,l1,pl", help="comma-separated Stage-II solvers")
    p.add_argument("--jobs", action="store_true", help="also time n_jobs=2 and Dask")
    args = p.parse_args(argv)
    try:
        faces = load_yaleb_faces()
    except FileNotFoundError as exc:
        print(f"skipping U4: {exc}")
        return
    seeds = seed_list(args)[:1] if args.quick else seed_list(args)
    methods = ("lsrf",) if args.quick else tuple(args.stage2.split(","))
    only = set(args.only.split(","))
    report = Report("upca_faces", "Unlabeled PCA: Yale B faces", out=args.out)
    example = None
    if "U4" in only:
        rows, example = table_u4(faces, seeds, methods, args.jobs)
        report.section(
            "U4", "Yale B faces, 16 of 64 images with shuffled patches (r = 4)",
            summarise(rows, ["method", "restored", "backend"],
                      ["error corrupted", "error all 64", "error doing nothing (corrupted)",
                       "flag recall", "n flagged", "stage I seconds", "stage II seconds"],
                      higher_is_better=["flag recall"]),
            raw=rows, note=f"Seeds {seed_span(seeds)} (the shuffle and the estimator's "
                           "random_state); figure: the first seed.",
        )  # fmt: skip
    if "U4S" in only:
        rows = table_u4s(faces, seeds)
        report.section(
            "U4S", "Stage II on the 16 shuffled faces (m = 32256, r = 4), side by side",
            summarise(rows, ["variant", "timed images"],
                      ["seconds (16 images)", "error (first image)", "error (16 images)"]),
            raw=rows, note=f"Seeds {seed_span(seeds)}.",
        )  # fmt: skip
    if example is not None:
        faces_figure(example, RESULTS if args.out is None else type(RESULTS)(args.out))
    print(report.write())


if __name__ == "__main__":
    main()
