# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of UnlabeledPCA against its peers, in one process and on the same data.

Tables (ids of the spec, ``shared/papers/upca.md`` section 4.1):

* U1, Stage I (Fig. 1 thinned): largest principal angle (degrees) and seconds of
  DPCP-IRLS p=1/2 and p=1, coherence pursuit, PCA, MCD-PCA (eigenvectors of
  scikit-learn's ``MinCovDet``) and l2,1-RPCA (outlier pursuit by inexact ALM,
  written here); m=50, n=500, noise 0.
* U2, end to end (Fig. 3 thinned): m=50, n=500, 90% permuted, noise 0.01; the
  refined error (authors' ``EvaluateRefined``) of DPCP + {LSRF, PL, L1, LSRF
  with ``lsrf_tol="auto"``}, each also on the true subspace ("-GT"), PCA
  projection, doing nothing, and DPCP + scikit-learn's {QuantileRegressor (LAD),
  HuberRegressor, RANSACRegressor} per sample; recovery rate (fraction of
  permuted samples restored to 1e-2) and seconds.
* U3, records (Fig. 5): breast-cancer benign rows (r=4, even attributes
  corrupted) and exam scores (r=3, second exam corrupted), alpha 0.1..1.0; the
  authors' ``ComputeErr``.
* U4, faces (Fig. 4): Yale B subject 3, 16 of 64 images with 34 of 84 patches
  shuffled (the 50 bottom patches fixed), r=4; relative error on the corrupted
  images and on all 64, Stage-I and Stage-II seconds.
* U5, dense permutations (Fig. 2): m=50, n=100, r=3, alpha=1; log10 relative
  error of DPCP + hard EM and true subspace + hard EM.
* U6, unlabeled matrix completion: Fig. 3 setting, r=3, observed fraction
  1.0/0.8/0.6; error on all entries and angle.
* U7, scaling: restore seconds against n_samples and n_features, for the
  textbook LSRF loop, a per-sample loop of the downdated LSRF and the batched
  downdated LSRF; DPCP direct against projected.

Run: ``python benchmarks/upca.py [--quick] [--out DIR] [--only U1,U2,...]``.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.covariance import MinCovDet
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import (
    HuberRegressor,
    LinearRegression,
    QuantileRegressor,
    RANSACRegressor,
)
from skpapers.decomposition._unlabeled_pca.solvers import (
    _coherence_pursuit,
    _dpcp,
    _lad,
    _lsrf,
    _pseudo_likelihood,
    _unit_rows,
)
from skpapers.decomposition._upca_eval import (
    compute_err,
    lsrf_textbook,
    normalise_records,
    permute_records,
    refined_error,
)

from skpapers.datasets import (
    load_breast_cancer_benign,
    load_exam_scores,
    load_yaleb_faces,
    make_permuted_subspace,
)
from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import principal_angle, relative_restoration_error


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def _top_right(X, r):
    return np.linalg.svd(X, full_matrices=False)[2][:r]


def _l21_rpca(X, r, lam=0.5, tol=1e-7, max_iter=1000):
    """Outlier pursuit min |L|_* + lam |E|_{2,1} s.t. X = L + E (rows = samples), inexact ALM."""
    norm2 = np.linalg.norm(X, 2)
    Y = X / max(norm2, np.abs(X).max() / lam)
    mu, rho = 1.25 / norm2, 1.5
    E = np.zeros_like(X)
    for _ in range(max_iter):
        U, s, Vt = np.linalg.svd(X - E + Y / mu, full_matrices=False)
        L = (U * np.maximum(s - 1 / mu, 0)) @ Vt
        G = X - L + Y / mu
        norms = np.linalg.norm(G, axis=1, keepdims=True)
        E = G * np.maximum(1 - lam / mu / np.maximum(norms, 1e-300), 0)
        R = X - L - E
        Y += mu * R
        mu = min(mu * rho, 1e10)
        if np.linalg.norm(R) <= tol * np.linalg.norm(X):
            break
    return _top_right(L, r)


def _mcd_pca(X, r, seed):
    mcd = MinCovDet(assume_centered=True, random_state=seed).fit(_unit_rows(X))
    _, vecs = np.linalg.eigh(mcd.covariance_)
    return vecs[:, ::-1][:, :r].T


STAGE1 = {
    "DPCP(1/2)": lambda X, r, s: _dpcp(X, None, r, 0.5, 1000, 1e-9)[0].T,
    "DPCP(1)": lambda X, r, s: _dpcp(X, None, r, 1.0, 1000, 1e-9)[0].T,
    "CoP": lambda X, r, s: _coherence_pursuit(X, r).T,
    "PCA": lambda X, r, s: _top_right(_unit_rows(X), r),
    "MCD-PCA": _mcd_pca,
    "l21-RPCA": lambda X, r, s: _l21_rpca(_unit_rows(X), r),
}


def table_u1(seeds, quick):
    rows = []
    grid_r = (3, 10) if quick else (3, 10, 25)
    for r in grid_r:
        for ratio in (0.5, 0.7, 0.9):
            for kind, alpha in (("random", 1.0), ("alpha=1", 1.0), ("alpha=0.2", 0.2)):
                for seed in seeds:
                    X, _, comp, _ = make_permuted_subspace(
                        500, 50, r, outlier_ratio=ratio, shuffled_ratio=alpha, noise=0.0,
                        outlier_type="random" if kind == "random" else "shuffle",
                        random_state=seed,
                    )  # fmt: skip
                    for name, fn in STAGE1.items():
                        if name == "MCD-PCA" and (r == 25 or quick):
                            continue  # MCD needs h > n_features points in general position
                        V, sec = _timed(fn, X, r, seed)
                        rows.append(
                            {"r": r, "outlier ratio": ratio, "outliers": kind, "method": name,
                             "angle (deg)": principal_angle(V, comp), "seconds": sec}
                        )  # fmt: skip
    return rows


def _peer_stage2(est, V, X):
    """Stage II by a scikit-learn regressor, one sample at a time (the peers' API)."""
    C = np.empty((X.shape[0], V.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for j, y in enumerate(X):
            C[j] = est.fit(V.T, y).coef_
    return C @ V


def _ransac_stage2(V, X, seed):
    C = np.empty((X.shape[0], V.shape[0]))
    for j, y in enumerate(X):
        est = RANSACRegressor(LinearRegression(fit_intercept=False), random_state=seed)
        C[j] = est.fit(V.T, y).estimator_.coef_
    return C @ V


def _recovery(X_hat, X_true, permuted):
    err = np.linalg.norm(X_hat - X_true, axis=1) / np.linalg.norm(X_true, axis=1)
    return float(np.mean(err[permuted] < 1e-2))


def table_u2(seeds, quick, peer_seeds):
    rows = []
    for r in (3, 10):
        for alpha in (0.1, 0.3, 0.5):
            for seed in seeds:
                X, X_true, comp, permuted = make_permuted_subspace(
                    500, 50, r, shuffled_ratio=alpha, random_state=seed
                )

                ctx = {"r": r, "alpha": alpha}

                def add(method, X_hat, sec, angle=np.nan, ctx=ctx, X_true=X_true, p=permuted):
                    rows.append(
                        {**ctx, "method": method, "angle (deg)": angle,
                         "error": relative_restoration_error(X_true, X_hat),
                         "refined error": refined_error(X_hat, X_true, ctx["r"]),
                         "recovery rate": _recovery(X_hat, X_true, p), "seconds": sec}
                    )  # fmt: skip

                add("do nothing", X, 0.0)
                V_pca, sec = _timed(_top_right, X, r)
                add("PCA-proj", (X @ V_pca.T) @ V_pca, sec, principal_angle(V_pca, comp))
                for stage2, tol in (("lsrf", None), ("lsrf", "auto"), ("pl", None), ("l1", None)):
                    label = stage2.upper() + (" tol=auto" if tol else "")
                    est = UnlabeledPCA(r, stage2=stage2, lsrf_tol=tol, restore_samples="all")
                    X_hat, sec = _timed(est.fit_restore, X)
                    angle = principal_angle(est.components_, comp)
                    add(f"DPCP+{label} (all)", X_hat, sec, angle)
                    if stage2 == "lsrf" and tol is None:
                        est_f = UnlabeledPCA(r)
                        X_hat, sec = _timed(est_f.fit_restore, X)
                        add("DPCP+LSRF (flagged)", X_hat, sec, angle)
                    if stage2 == "lsrf":  # GT + auto: the tolerance the estimator resolved
                        C, sec = _timed(_lsrf, comp.T, X, None, est.lsrf_tol_)
                    else:
                        C, sec = _timed({"pl": _pseudo_likelihood, "l1": _lad}[stage2], comp.T, X)
                    add(f"GT+{label}", C @ comp, sec, 0.0)
                if seed in peer_seeds:
                    V = est.components_
                    X_hat, sec = _timed(
                        _peer_stage2,
                        QuantileRegressor(quantile=0.5, alpha=0.0, fit_intercept=False,
                                          solver="highs"), V, X,
                    )  # fmt: skip
                    add("DPCP+sklearn LAD", X_hat, sec, angle)
                    X_hat, sec = _timed(_peer_stage2, HuberRegressor(fit_intercept=False), V, X)
                    add("DPCP+sklearn Huber", X_hat, sec, angle)
                    X_hat, sec = _timed(_ransac_stage2, V, X, seed)
                    add("DPCP+sklearn RANSAC", X_hat, sec, angle)
    return rows


RECORDS = {
    # name: (loader, n_components, corrupted attributes, 0-based)
    "breast benign": (load_breast_cancer_benign, 4, list(range(1, 30, 2))),
    "exam scores": (load_exam_scores, 3, list(range(7, 14))),
}


def table_u3(seeds, quick):
    rows = []
    alphas = (0.1, 0.5, 1.0) if quick else tuple(np.round(np.arange(1, 11) / 10, 1))
    for name, (loader, r, columns) in RECORDS.items():
        try:
            D = loader()
        except FileNotFoundError as exc:
            print(f"skipping {name}: {exc}")
            continue
        Z, norms, means = normalise_records(D)
        for alpha in alphas:
            for seed in seeds:
                rng = np.random.default_rng(seed)
                Z_tilde = permute_records(Z, columns, alpha, rng)
                A = Z_tilde.T  # attributes as samples (record-linkage orientation)

                ctx = {"data": name, "alpha": alpha}

                def add(method, A_hat, sec, ctx=ctx, stats=(Z, norms, means)):
                    rows.append(
                        {**ctx, "method": method, "error": compute_err(A_hat.T, *stats),
                         "seconds": sec}
                    )  # fmt: skip

                add("do nothing", A, 0.0)
                V, sec = _timed(_top_right, A, r)
                add("PCA-proj", (A @ V.T) @ V, sec)
                for label, params in (
                    ("UPCA-LSRF (all)", {"restore_samples": "all"}),
                    ("UPCA-LSRF (flagged)", {}),
                    ("UPCA-PL (all)", {"restore_samples": "all", "stage2": "pl"}),
                    ("UPCA-L1 (all)", {"restore_samples": "all", "stage2": "l1"}),
                ):
                    est = UnlabeledPCA(r, max_iter=10000, **params)
                    A_hat, sec = _timed(est.fit_restore, A)
                    add(label, A_hat, sec)
    return rows


def _shuffle_faces(faces, rng, n_corrupted=16, h=192, w=168, v=12, hp=7, n_fixed=50):
    """The authors' ``permute_face`` (perm_flag=1): shuffle the first 34 of 84 patches."""
    X = faces.copy()
    ids = rng.permutation(len(faces))[:n_corrupted]
    if 0 not in ids:
        ids[0] = 0
    if 22 not in ids:
        ids[1] = 22
    vb, hb = h // v, w // hp
    n_shuffled = v * hp - n_fixed
    for j in ids:  # 16 images
        img = faces[j].reshape(h, w, order="F")
        blocks = img.reshape(v, vb, hp, hb).transpose(0, 2, 1, 3).reshape(v * hp, vb, hb)
        pattern = np.r_[rng.permutation(n_shuffled), np.arange(n_shuffled, v * hp)]
        out = blocks[pattern].reshape(v, hp, vb, hb).transpose(0, 2, 1, 3).reshape(h, w)
        X[j] = out.reshape(-1, order="F")
    mask = np.zeros(len(faces), dtype=bool)
    mask[ids] = True
    return X, mask


def table_u4(seeds, quick):
    try:
        faces = load_yaleb_faces()
    except FileNotFoundError as exc:
        print(f"skipping U4: {exc}")
        return [], None
    rows = []
    example = None
    # hard_em is left out: 52 starts x 32256 entries per sort and an LSRF start make it
    # take well over 10 minutes here
    methods = ("lsrf", "l1") if quick else ("lsrf", "l1", "pl")
    for seed in seeds:
        rng = np.random.default_rng(seed)
        X, corrupted = _shuffle_faces(faces, rng)
        base = UnlabeledPCA(4)
        _, sec1 = _timed(base.fit, X)
        for stage2 in methods:
            est = UnlabeledPCA(4, stage2=stage2, random_state=seed).fit(X)
            X_hat, sec2 = _timed(est.restore, X)
            flagged = est.permuted_mask_
            rows.append(
                {"method": stage2, "seed": seed,
                 "error corrupted": relative_restoration_error(faces[corrupted], X_hat[corrupted]),
                 "error all 64": relative_restoration_error(faces, X_hat),
                 "error doing nothing (corrupted)":
                     relative_restoration_error(faces[corrupted], X[corrupted]),
                 "flag recall": float((flagged & corrupted).sum() / corrupted.sum()),
                 "n flagged": int(flagged.sum()),
                 "stage I seconds": sec1, "stage II seconds": sec2}
            )  # fmt: skip
            if example is None and stage2 == "lsrf":
                example = (faces, X, X_hat)
    return rows, example


def table_u5(seeds, quick):
    rows = []
    for inliers in (6, 10, 15, 20, 25):
        for seed in seeds:
            X, X_true, comp, permuted = make_permuted_subspace(
                100, 50, 3, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0,
                random_state=seed,
            )  # fmt: skip
            est = UnlabeledPCA(3, stage2="hard_em", random_state=seed)
            X_hat, sec = _timed(est.fit_restore, X)
            rows.append(
                {"inliers": inliers, "outlier ratio": 1 - inliers / 100, "method": "DPCP+hard_em",
                 "log10 rel error": np.log10(relative_restoration_error(X_true, X_hat)),
                 "angle (deg)": principal_angle(est.components_, comp), "seconds": sec}
            )  # fmt: skip
            gt = UnlabeledPCA(3, stage2="hard_em", random_state=seed).fit(X)
            gt.components_ = comp  # the true subspace with the same Stage II
            X_hat, sec = _timed(gt.restore, X)
            rows.append(
                {"inliers": inliers, "outlier ratio": 1 - inliers / 100, "method": "GT+hard_em",
                 "log10 rel error": np.log10(relative_restoration_error(X_true, X_hat)),
                 "angle (deg)": 0.0, "seconds": sec}
            )  # fmt: skip
    return rows


def table_u6(seeds, quick):
    rows = []
    for alpha in (0.1, 0.3):
        for observed in (1.0, 0.8, 0.6):
            for seed in seeds:
                X, X_true, comp, _ = make_permuted_subspace(
                    500, 50, 3, shuffled_ratio=alpha, missing_ratio=1 - observed,
                    random_state=seed,
                )  # fmt: skip
                for stage1 in ("dpcp", "pca"):
                    est = UnlabeledPCA(3, stage1=stage1)
                    X_hat, sec = _timed(est.fit_restore, X)
                    missing = np.isnan(X)
                    fill = (
                        np.linalg.norm((X_hat - X_true)[missing]) / np.linalg.norm(X_true[missing])
                        if missing.any() else np.nan
                    )  # fmt: skip
                    rows.append(
                        {"alpha": alpha, "observed fraction": observed,
                         "method": f"masked {stage1.upper()}+LSRF",
                         "error all entries": relative_restoration_error(X_true, X_hat),
                         "error missing entries": fill,
                         "angle (deg)": principal_angle(est.components_, comp), "seconds": sec}
                    )  # fmt: skip
    return rows


def _naive_restore(A, Y):
    return np.array([lsrf_textbook(A, y) for y in Y])


def _loop_restore(A, Y):
    return np.concatenate([_lsrf(A, y[None]) for y in Y])


def table_u7(quick):
    rows = []
    r = 5
    sizes = (1000, 10000) if quick else (1000, 10000, 100000)
    for n in sizes:
        X, _, comp, _ = make_permuted_subspace(n, 50, r, shuffled_ratio=0.1, random_state=0)
        est = UnlabeledPCA(r)
        _, fit_sec = _timed(est.fit, X)
        _, sec = _timed(est.restore, X)
        rows.append({"n_samples": n, "n_features": 50, "variant": "UnlabeledPCA fit",
                     "seconds": fit_sec, "timed samples": n})  # fmt: skip
        rows.append({"n_samples": n, "n_features": 50, "variant": "UnlabeledPCA restore (batched)",
                     "seconds": sec, "timed samples": n})  # fmt: skip
        A = comp.T
        k = min(n, 200 if quick else 1000)
        for variant, fn in (("textbook loop", _naive_restore), ("downdated loop", _loop_restore),
                            ("downdated batched", lambda A, Y: _lsrf(A, Y))):  # fmt: skip
            _, sec = _timed(fn, A, X[:k])
            rows.append({"n_samples": n, "n_features": 50, "variant": f"LSRF {variant}",
                         "seconds": sec * n / k, "timed samples": k})  # fmt: skip
    features = (50, 500, 5000) if quick else (50, 500, 5000, 32256)
    for m in features:
        n = 64
        X, _, comp, _ = make_permuted_subspace(
            n, m, 4, outlier_ratio=0.25, shuffled_ratio=0.4, random_state=0
        )
        A = comp.T
        k = 16
        timed = {"textbook loop": 1 if m > 5000 else 4, "downdated loop": 1 if m > 5000 else 4}
        for variant, fn in (("textbook loop", _naive_restore), ("downdated loop", _loop_restore),
                            ("downdated batched", lambda A, Y: _lsrf(A, Y))):  # fmt: skip
            kk = timed.get(variant, k)
            _, sec = _timed(fn, A, X[:kk])
            rows.append({"n_samples": k, "n_features": m, "variant": f"LSRF {variant}",
                         "seconds": sec * k / kk, "timed samples": kk})  # fmt: skip
        _, sec = _timed(_dpcp, X, None, 4, 0.5, 1000, 1e-9, True)
        rows.append({"n_samples": n, "n_features": m, "variant": "DPCP projected",
                     "seconds": sec, "timed samples": n})  # fmt: skip
        if m <= 5000:
            _, sec = _timed(_dpcp, X, None, 4, 0.5, 1000, 1e-9, False)
            rows.append({"n_samples": n, "n_features": m, "variant": "DPCP direct",
                         "seconds": sec, "timed samples": n})  # fmt: skip
    return rows


def _summary(rows, keys, values):
    frame = pd.DataFrame(rows)
    grouped = frame.groupby(keys, sort=False)[values]
    mean, std = grouped.mean(), grouped.std(ddof=0)
    out = mean.copy().astype(object)
    for col in values:
        out[col] = [f"{m:.4g} ± {s:.2g}" for m, s in zip(mean[col], std[col], strict=True)]
    out["seeds"] = grouped.size()
    return out.reset_index()


def _write(name, table, out, title):
    table.to_csv(out / f"upca_{name}.csv", index=False)
    cells = [list(map(str, table.columns))] + [[str(v) for v in row] for row in table.values]
    lines = ["| " + " | ".join(c) + " |" for c in cells]
    lines.insert(1, "|" + "---|" * len(table.columns))
    md = f"### {title}\n\n" + "\n".join(lines) + "\n"
    (out / f"upca_{name}.md").write_text(md)
    print(md)


def _faces_figure(example, out):
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 seeds, thin grids")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--only", default="U1,U2,U3,U4,U5,U6,U7")
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    seeds = range(2 if args.quick else args.seeds)
    peer_seeds = {0}  # the per-sample scikit-learn peers take minutes per seed
    start = time.perf_counter()
    if "U1" in only:
        rows = table_u1(seeds, args.quick)
        _write("u1_stage1", _summary(rows, ["r", "outlier ratio", "outliers", "method"],
                                     ["angle (deg)", "seconds"]),
               args.out, "U1: Stage I, largest principal angle (m=50, n=500, noise 0)")  # fmt: skip
    if "U2" in only:
        rows = table_u2(seeds, args.quick, peer_seeds)
        _write("u2_end_to_end", _summary(rows, ["r", "alpha", "method"],
                                         ["error", "refined error", "recovery rate", "angle (deg)",
                                          "seconds"]),
               args.out, "U2: end to end (m=50, n=500, 90% permuted, noise 0.01)")  # fmt: skip
    if "U3" in only:
        rows = table_u3(seeds, args.quick)
        if rows:
            _write("u3_records", _summary(rows, ["data", "alpha", "method"], ["error", "seconds"]),
                   args.out, "U3: records (ComputeErr, original units)")  # fmt: skip
    if "U4" in only:
        rows, example = table_u4(range(1 if args.quick else 3), args.quick)
        if rows:
            _write("u4_faces", _summary(rows, ["method"],
                                        ["error corrupted", "error all 64",
                                         "error doing nothing (corrupted)", "flag recall",
                                         "n flagged", "stage I seconds", "stage II seconds"]),
                   args.out, "U4: Yale B faces, 16 of 64 images with shuffled patches")  # fmt: skip
            _faces_figure(example, args.out)
    if "U5" in only:
        rows = table_u5(seeds, args.quick)
        _write("u5_dense", _summary(rows, ["inliers", "outlier ratio", "method"],
                                    ["log10 rel error", "angle (deg)", "seconds"]),
               args.out, "U5: dense permutations (m=50, n=100, r=3, alpha=1)")  # fmt: skip
    if "U6" in only:
        rows = table_u6(seeds, args.quick)
        _write("u6_umc", _summary(rows, ["alpha", "observed fraction", "method"],
                                  ["error all entries", "error missing entries", "angle (deg)",
                                   "seconds"]),
               args.out, "U6: unlabeled matrix completion (Fig. 3 setting, r=3)")  # fmt: skip
    if "U7" in only:
        rows = table_u7(args.quick)
        table = pd.DataFrame(rows)
        table["seconds"] = table["seconds"].map(lambda s: f"{s:.3g}")
        _write("u7_scaling", table, args.out,
               "U7: scaling (r=5 vs n_samples, r=4 vs n_features; seconds for all samples, "
               "extrapolated linearly from 'timed samples')")  # fmt: skip
    print(f"total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
