# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA on the papers' record-linkage data, and how well it flags.

* U3, records: breast-cancer benign rows (r = 4, even attributes corrupted) and
  exam scores (r = 3, second exam corrupted), a fraction alpha of the records
  shuffled in every corrupted attribute; the error in original units relative
  to the raw table (the authors' ``ComputeErr``) of doing nothing, PCA
  projection and UnlabeledPCA with every Stage II, restoring all samples (the
  authors' code path) or only the flagged ones (the default); LSRF with the
  default early stop and with the paper's stopping rule (``lsrf_tol=None``);
  "oracle flags": the LSRF restoration of exactly the shuffled attributes, the
  others left as they are (what perfect flags would give).
* F1, flagging: fraction of clean attributes flagged and of corrupted attributes
  flagged (among those the shuffle moved, and among those restoring to the
  subspace can improve: moved farther than their true values lie from the
  subspace) on the records (by the
  leave-one-out rule where the distance cannot flag), and of clean
  and densely permuted samples on synthetic data with few inliers (m = 50,
  n = 100, r = 3, noise 0.01, 10-25 inliers) and the sparse setting (m = 50,
  n = 500, 90% permuted, alpha 0.1), and how often ``fit`` warned that the
  flags cannot work (``FlaggingWarning``).

Attributes are the samples (rows of ``X``), as in record linkage.

* F1 also covers the Yale B faces (16 of 64 images, the paper's patch shuffle
  and 40% of the pixels shuffled at random).
* F2, where the distance cannot flag (records, Yale B faces): other per-sample
  statistics, at the best threshold (chosen knowing the answer) and, for the
  fraction of the distance no other sample explains, at 1/2 with the errors of
  restoring what it flags. The estimator flags by that fraction where the
  distance cannot or most residuals are explained by other samples
  (``flagging_rule_="unexplained"``); F2 measures it on every fit, at the
  threshold the estimator uses.

Run: ``python benchmarks/upca_records.py [--quick] [--seeds N] [--first-seed S]
[--only U3,F1,F2]``.
"""

import warnings

import numpy as np
from _harness import Report, parser, seed_list, seed_span, summarise, timed
from upca_common import compute_err, flag_rates, pca_projection, shuffle_faces, subspace_floor

from skpapers.datasets import (
    load_breast_cancer_benign,
    load_exam_scores,
    load_yaleb_faces,
    make_permuted_subspace,
    normalize_records,
    permute_records,
)
from skpapers.decomposition import UnlabeledPCA, unlabeled_pca
from skpapers.exceptions import FlaggingWarning
from skpapers.metrics import relative_restoration_error

RECORDS = {
    # name: (loader, n_components, corrupted attributes, 0-based)
    "breast benign": (load_breast_cancer_benign, 4, list(range(1, 30, 2))),
    "exam scores": (load_exam_scores, 3, list(range(7, 14))),
}

METHODS = (
    ("UPCA-LSRF (all)", {"restore_samples": "all"}),
    ("UPCA-LSRF (all, lsrf_tol=None)", {"restore_samples": "all", "lsrf_tol": None}),
    ("UPCA-LSRF (flagged)", {}),
    ("UPCA-PL (all)", {"restore_samples": "all", "stage2": "pl"}),
    ("UPCA-L1 (all)", {"restore_samples": "all", "stage2": "l1"}),
)


def _records(quick):
    for name, (loader, r, columns) in RECORDS.items():
        try:
            D = loader()
        except FileNotFoundError as exc:
            print(f"skipping {name}: {exc}")
            continue
        yield name, r, columns, normalize_records(D)


def table_u3(seeds, quick):
    rows = []
    alphas = (0.1, 0.5, 1.0) if quick else (0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
    for name, r, columns, (Z, norms, means) in _records(quick):
        truly = np.isin(np.arange(Z.shape[1]), columns)
        for alpha in alphas:
            for seed in seeds:
                A = permute_records(Z, columns, alpha, random_state=seed).T

                def add(method, A_hat, sec, name=name, alpha=alpha, seed=seed,
                        stats=(Z, norms, means)):
                    rows.append(
                        {"data": name, "alpha": alpha, "method": method, "seed": seed,
                         "seconds": sec,
                         "error": compute_err(stats[0], A_hat.T, *stats[1:])}
                    )  # fmt: skip

                add("do nothing", A, 0.0)
                add("PCA-proj", *timed(pca_projection, A, r))
                for label, params in METHODS:
                    est = UnlabeledPCA(r, max_iter=10000, **params)
                    with warnings.catch_warnings():  # the flags cannot work here (F1)
                        warnings.simplefilter("ignore", FlaggingWarning)
                        A_hat, sec = timed(est.fit_restore, A)
                    add(label, A_hat, sec)
                    if label == "UPCA-LSRF (all)":  # Stage II is per sample: perfect flags
                        add("UPCA-LSRF (oracle flags)", np.where(truly[:, None], A_hat, A), sec)
    return rows


def _faces(table):
    """The Yale B faces, or None (with a message) when the file is absent."""
    try:
        return load_yaleb_faces()
    except FileNotFoundError as exc:
        print(f"skipping the faces in {table}: {exc}")
        return None


def table_f1(seeds, quick):
    rows = []

    def add(data, setting, seed, est, X, truly, X_clean, floor):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", FlaggingWarning)
            est.fit(X)
        warned = any(issubclass(w.category, FlaggingWarning) for w in caught)
        d = est.distances_
        moved = np.any(X != X_clean, axis=1)
        beyond = moved & (d > d[~truly].max())  # separable from every clean sample
        helped = truly & (np.linalg.norm(X - X_clean, axis=1) > floor)  # restorable
        clean, perm = flag_rates(est.permuted_mask_, truly, moved)
        _, perm_beyond = flag_rates(est.permuted_mask_, truly, beyond)
        _, perm_helped = flag_rates(est.permuted_mask_, truly, helped)
        rows.append({"data": data, "setting": setting, "seed": seed, "clean flagged": clean,
                     "moved permuted flagged": perm,
                     "restorable permuted flagged": perm_helped,
                     "restorable fraction": helped[truly].mean(),
                     "separable permuted flagged": perm_beyond,
                     "separable fraction": beyond[truly].mean(),
                     "threshold": est.threshold_, "warned": float(warned),
                     "unexplained rule": float(est.flagging_rule_ == "unexplained")})  # fmt: skip

    for name, r, columns, (Z, _, _) in _records(quick):
        floor = subspace_floor(Z.T, r)
        for alpha in (0.1, 0.3, 1.0):
            for seed in seeds:
                A = permute_records(Z, columns, alpha, random_state=seed).T
                truly = np.zeros(len(A), dtype=bool)
                truly[columns] = True
                add(name, f"alpha={alpha}", seed, UnlabeledPCA(r, max_iter=10000), A, truly,
                    Z.T, floor)
    for inliers in (10, 15, 20, 25):
        for seed in seeds:
            X, X_true, _, permuted = make_permuted_subspace(
                100, 50, 3, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0,
                random_state=seed,
            )  # fmt: skip
            add("dense synthetic", f"{inliers} inliers", seed, UnlabeledPCA(3), X, permuted,
                X_true, subspace_floor(X_true, 3))
    for seed in seeds:
        X, X_true, _, permuted = make_permuted_subspace(500, 50, 3, random_state=seed)
        add("sparse synthetic", "90% permuted, alpha=0.1", seed, UnlabeledPCA(3), X, permuted,
            X_true, subspace_floor(X_true, 3))
    faces = _faces("F1")
    if faces is None:
        return rows
    floor = subspace_floor(faces, 4)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X, corrupted = shuffle_faces(faces, rng)
        add("Yale B faces", "16 of 64, 34 of 84 patches", seed, UnlabeledPCA(4), X, corrupted,
            faces, floor)
        X, corrupted = faces.copy(), np.zeros(len(faces), dtype=bool)
        for j in rng.choice(len(X), 16, replace=False):
            idx = rng.choice(X.shape[1], int(0.4 * X.shape[1]), replace=False)
            X[j, idx] = X[j, rng.permutation(idx)]
            corrupted[j] = True
        add("Yale B faces", "16 of 64, 40% of pixels", seed, UnlabeledPCA(4), X, corrupted,
            faces, floor)
    return rows


def _unexplained(X, r, **params):
    """Distance of each sample to the span of the others over its leave-one-out distance.

    The fraction of a sample's distance to the subspace (fitted without it) that
    no other sample explains, divided by its value for a sample of pure noise
    (``sqrt(1 - (n - 1 - r) / (m - r))``); defined when ``n_samples < n_features``.
    Also returns the leave-one-out distances.
    """
    n, m = X.shape
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    span = 1.0 / np.sqrt(np.diag(np.linalg.inv(Xn @ Xn.T + 1e-12 * np.eye(n))))
    loo = np.empty(n)
    for j in range(n):
        components, _, _ = unlabeled_pca(np.delete(Xn, j, axis=0), r, restore=False, **params)
        loo[j] = np.linalg.norm(Xn[j] - (Xn[j] @ components.T) @ components)
    return span / loo / np.sqrt(1 - (n - 1 - r) / (m - r)), loo


def _best_recall(score, truly, moved, max_clean=0.10):
    """Share of moved permuted samples above the best threshold flagging < 10% of clean ones."""
    clean = np.sort(score[~truly])
    allowed = int(np.ceil(max_clean * clean.size)) - 1  # clean samples above the threshold
    return float(np.mean(score[truly & moved] > clean[clean.size - 1 - allowed]))


def table_f2(seeds, quick):
    """Where the distance cannot flag: other statistics, at the best threshold and at 1/2.

    ``_unexplained`` recomputes the statistic behind ``flagging_rule_="unexplained"``
    through the public function, also where the estimator does not use it (the faces).
    """
    rows = []

    def add(data, setting, seed, X, r, truly, moved, error, **params):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FlaggingWarning)
            est = UnlabeledPCA(r, restore_samples="all", **params).fit(X)
            X_all = est.restore(X)
        ratio, loo = _unexplained(X, r, **params)
        flags = ratio > np.sqrt(0.5)  # more than half of the squared distance unexplained
        rows.append({"data": data, "setting": setting, "seed": seed,
                     "best recall: distance": _best_recall(est.distances_, truly, moved),
                     "best recall: leave-one-out distance": _best_recall(loo, truly, moved),
                     "best recall: unexplained": _best_recall(ratio, truly, moved),
                     "unexplained > 1/2: clean flagged": float(flags[~truly].mean()),
                     "unexplained > 1/2: moved permuted flagged":
                         float(flags[truly & moved].mean()),
                     "error doing nothing": error(X),
                     "error restoring unexplained > 1/2":
                         error(np.where(flags[:, None], X_all, X))})  # fmt: skip

    for name, r, columns, (Z, norms, means) in _records(quick):
        truly = np.isin(np.arange(Z.shape[1]), columns)
        for alpha in (0.1, 0.3) if quick else (0.1, 0.2, 0.3, 1.0):
            for seed in seeds:
                A = permute_records(Z, columns, alpha, random_state=seed).T
                moved = np.any(A != Z.T, axis=1)
                add(name, f"alpha={alpha}", seed, A, r, truly, moved,
                    lambda B, Z=Z, n=norms, c=means: compute_err(Z, B.T, n, c),
                    max_iter=10000)  # fmt: skip
    faces = _faces("F2")
    if faces is None:
        return rows
    for seed in seeds:
        X, corrupted = shuffle_faces(faces, np.random.default_rng(seed))
        add("Yale B faces", "16 of 64 shuffled", seed, X, 4, corrupted, corrupted,
            lambda B: relative_restoration_error(faces, B))  # fmt: skip
    return rows


# columns where larger is better (the worst seed is the smallest): flags of shuffled samples,
# and the shares of them that restoring can improve or a threshold can separate
F1_HIGHER = ["moved permuted flagged", "restorable permuted flagged", "restorable fraction",
             "separable permuted flagged", "separable fraction"]
F2_HIGHER = ["best recall: distance", "best recall: leave-one-out distance",
             "best recall: unexplained", "unexplained > 1/2: moved permuted flagged"]


def main(argv=None):
    args = parser(__doc__.splitlines()[0], ("U3", "F1", "F2")).parse_args(argv)
    only = set(args.only.split(","))
    seeds = seed_list(args)[:2] if args.quick else seed_list(args)
    report = Report("upca_records", "Unlabeled PCA: records and flagging", out=args.out)
    if "U3" in only:
        rows = table_u3(seeds, args.quick)
        if rows:
            report.section("U3", "Records (ComputeErr, original units)",
                           summarise(rows, ["data", "alpha", "method"], ["error", "seconds"]),
                           raw=rows, note=f"Seeds {seed_span(seeds)}.")  # fmt: skip
    if "F1" in only:
        rows = table_f1(seeds, args.quick)
        report.section(
            "F1", "Flagging with the default threshold (fit only)",
            summarise(rows, ["data", "setting"],
                      ["clean flagged", "moved permuted flagged",
                       "restorable permuted flagged", "restorable fraction",
                       "separable permuted flagged", "separable fraction", "threshold",
                       "warned", "unexplained rule"], higher_is_better=F1_HIGHER),
            raw=rows,
            note=f"Seeds {seed_span(seeds)}. "
                 "'moved': permuted samples that changed (a shuffle among equal values leaves a "
                 "record unchanged); 'restorable': permuted samples that moved farther from "
                 "their true values than the true values lie from the rank-r subspace of the "
                 "other clean samples, the ones that restoring to the subspace can improve "
                 "(elsewhere even exact flags and restoration make the sample worse than leaving"
                 " it); 'separable': moved permuted samples farther from the fitted subspace "
                 "than every clean sample, the ones a threshold on the distance can flag without"
                 " flagging a clean one; 'separable fraction': their share of the permuted "
                 "samples; 'warned': share of the fits that emitted a FlaggingWarning (the "
                 "threshold reached the distance of a random direction and no other rule "
                 "applies); 'unexplained rule': share of the fits that flagged by the leave-one-"
                 "out rule (flagging_rule_='unexplained': the distance threshold reached that "
                 "cap, or most residuals are explained by other samples; fewer samples than "
                 "features).",
        )  # fmt: skip
    if "F2" in only:
        rows = table_f2(seeds, args.quick)
        report.section(
            "F2", "Where the distance cannot flag: other statistics",
            summarise(rows, ["data", "setting"],
                      ["best recall: distance", "best recall: leave-one-out distance",
                       "best recall: unexplained", "unexplained > 1/2: clean flagged",
                       "unexplained > 1/2: moved permuted flagged", "error doing nothing",
                       "error restoring unexplained > 1/2"], higher_is_better=F2_HIGHER),
            raw=rows,
            note=f"Seeds {seed_span(seeds)}. "
                 "'best recall': share of the moved permuted samples flagged by the best "
                 "threshold on the statistic that flags fewer than 10% of the clean samples "
                 "(a threshold chosen knowing the answer: what the statistic could give at "
                 "best). 'unexplained': distance of a sample to the span of the other "
                 "samples divided by its leave-one-out distance to the rank-r subspace, "
                 "relative to its value for pure noise (n_samples < n_features only). "
                 "'unexplained > 1/2': samples with more than half of their squared "
                 "distance unexplained by the other samples, restored by LSRF (the others "
                 "left as they are); errors: ComputeErr on the records, relative error on "
                 "all 64 faces. On exactly low-rank data with noise the clean samples are "
                 "unexplained too (m = 200, n = 100, r = 3: every sample above 1/2).",
        )  # fmt: skip
    print(report.write())


if __name__ == "__main__":
    main()
