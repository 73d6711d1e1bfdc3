# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA on synthetic data against its peers, same data, one process.

* U1, Stage I: largest principal angle (degrees) and seconds of DPCP-IRLS with
  p = 1/2 and p = 1, coherence pursuit and PCA (``UnlabeledPCA(stage1=...)``),
  MCD-PCA (eigenvectors of scikit-learn's ``MinCovDet``) and l2,1-RPCA (outlier
  pursuit by inexact ALM, written here); m = 50, n = 500, noise 0.
* U2, end to end: m = 50, n = 500, 90% permuted, noise 0.01; refined error of
  DPCP + {LSRF, PL, L1, LSRF with ``lsrf_tol="auto"``}, each also on the true
  subspace ("GT"), LSRF with ``lsrf_tol="auto"`` also on the Stage-I subspace
  (without the refit from partly shuffled samples), the default (flagged samples
  only), PCA projection, doing nothing, and DPCP + scikit-learn's
  {QuantileRegressor (LAD), HuberRegressor, RANSACRegressor} per sample (first
  seed only); recovery rate (fraction of permuted samples restored to 1e-2).
* U6, unlabeled matrix completion: U2 setting with r = 3 and 100/80/60% of the
  entries observed; error on all entries and on the missing ones.

Run: ``python benchmarks/upca_synthetic.py [--quick] [--seeds N] [--first-seed S]
[--only U1,U2,U6]``.
"""

import warnings

import numpy as np
from _harness import Report, parser, seed_list, seed_span, summarise, timed
from sklearn.covariance import MinCovDet
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import (
    HuberRegressor,
    LinearRegression,
    QuantileRegressor,
    RANSACRegressor,
)
from upca_common import pca_projection, recovery, top_right, with_components

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import (
    principal_angle,
    refined_restoration_error,
    relative_restoration_error,
)


def _unit_rows(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True)


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
    return top_right(L, r)


def _mcd_pca(X, r, seed):
    mcd = MinCovDet(assume_centered=True, random_state=seed).fit(_unit_rows(X))
    _, vecs = np.linalg.eigh(mcd.covariance_)
    return vecs[:, ::-1][:, :r].T


STAGE1 = {  # lsrf_tol=None: the paper's algorithm, components_ is the Stage-I subspace
    "DPCP(1/2)": lambda X, r, s: UnlabeledPCA(r, lsrf_tol=None).fit(X).components_,
    "DPCP(1)": lambda X, r, s: UnlabeledPCA(r, p=1.0, lsrf_tol=None).fit(X).components_,
    "CoP": lambda X, r, s: UnlabeledPCA(r, stage1="cop", lsrf_tol=None).fit(X).components_,
    "PCA": lambda X, r, s: UnlabeledPCA(r, stage1="pca", lsrf_tol=None).fit(X).components_,
    "MCD-PCA": _mcd_pca,
    "l21-RPCA": lambda X, r, s: _l21_rpca(_unit_rows(X), r),
}


def table_u1(seeds, quick):
    rows = []
    for r in (3, 10) if quick else (3, 10, 25):
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
                        V, sec = timed(fn, X, r, seed)
                        rows.append(
                            {"r": r, "outlier ratio": ratio, "outliers": kind, "method": name,
                             "seed": seed, "angle (deg)": principal_angle(V, comp),
                             "seconds": sec}
                        )  # fmt: skip
    return rows


def _peer_stage2(make, V, X):
    """Stage II by a scikit-learn regressor, one sample at a time (the peers' API)."""
    C = np.empty((X.shape[0], V.shape[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for j, y in enumerate(X):
            est = make().fit(V.T, y)
            C[j] = getattr(est, "estimator_", est).coef_
    return C @ V


PEERS = {
    "sklearn LAD": lambda s: QuantileRegressor(
        quantile=0.5, alpha=0.0, fit_intercept=False, solver="highs"
    ),
    "sklearn Huber": lambda s: HuberRegressor(fit_intercept=False),
    "sklearn RANSAC": lambda s: RANSACRegressor(LinearRegression(fit_intercept=False),
                                                random_state=s),
}


def table_u2(seeds, quick):
    rows = []
    for r in (3, 10):
        for alpha in (0.1, 0.3, 0.5):
            for seed in seeds:
                X, X_true, comp, permuted = make_permuted_subspace(
                    500, 50, r, shuffled_ratio=alpha, random_state=seed
                )

                def add(method, X_hat, sec, angle=np.nan, r=r, alpha=alpha, X_true=X_true,
                        p=permuted, seed=seed):
                    rows.append(
                        {"r": r, "alpha": alpha, "method": method, "seed": seed,
                         "angle (deg)": angle,
                         "error": relative_restoration_error(X_true, X_hat),
                         "refined error": refined_restoration_error(X_true, X_hat, r),
                         "recovery rate": recovery(X_hat, X_true, p), "seconds": sec}
                    )  # fmt: skip

                add("do nothing", X, 0.0)
                X_pca, sec = timed(pca_projection, X, r)
                add("PCA-proj", X_pca, sec, principal_angle(top_right(X, r), comp))
                for stage2, tol in (("lsrf", None), ("lsrf", "auto"), ("pl", None), ("l1", None)):
                    label = stage2.upper() + (" tol=auto" if tol else "")
                    est = UnlabeledPCA(r, stage2=stage2, lsrf_tol=tol, restore_samples="all")
                    X_hat, sec = timed(est.fit_restore, X)
                    angle = principal_angle(est.components_, comp)
                    add(f"DPCP+{label} (all)", X_hat, sec, angle)
                    if stage2 == "lsrf" and tol is None:
                        default = UnlabeledPCA(r)
                        X_hat, sec = timed(default.fit_restore, X)
                        add("default (flagged, tol=auto)", X_hat, sec,
                            principal_angle(default.components_, comp))
                    if stage2 == "lsrf" and tol == "auto":  # what the subspace refit adds
                        stage1 = UnlabeledPCA(r, lsrf_tol=None).fit(X).components_
                        ref = with_components(stage1, X, lsrf_tol=tol, restore_samples="all")
                        X_hat, sec = timed(ref.restore, X)
                        add(f"DPCP+{label} (all), Stage-I subspace", X_hat, sec,
                            principal_angle(stage1, comp))
                    gt = with_components(comp, X, stage2=stage2, lsrf_tol=tol,
                                         restore_samples="all")
                    X_hat, sec = timed(gt.restore, X)
                    add(f"GT+{label}", X_hat, sec, 0.0)
                if seed == seeds[0] and not quick:  # the per-sample peers take minutes
                    for name, make in PEERS.items():
                        X_hat, sec = timed(_peer_stage2, lambda s=seed, m=make: m(s),
                                           est.components_, X)
                        add(f"DPCP+{name}", X_hat, sec, angle)
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
                    X_hat, sec = timed(est.fit_restore, X)
                    missing = np.isnan(X)
                    fill = (
                        np.linalg.norm((X_hat - X_true)[missing]) / np.linalg.norm(X_true[missing])
                        if missing.any() else np.nan
                    )  # fmt: skip
                    rows.append(
                        {"alpha": alpha, "observed fraction": observed,
                         "method": f"masked {stage1.upper()}+LSRF", "seed": seed,
                         "error all entries": relative_restoration_error(X_true, X_hat),
                         "error missing entries": fill,
                         "angle (deg)": principal_angle(est.components_, comp), "seconds": sec}
                    )  # fmt: skip
    return rows


def main(argv=None):
    args = parser(__doc__.splitlines()[0], ("U1", "U2", "U6")).parse_args(argv)
    only = set(args.only.split(","))
    seeds = seed_list(args)[:2] if args.quick else seed_list(args)
    report = Report("upca_synthetic", "Unlabeled PCA: synthetic data", out=args.out)
    if "U1" in only:
        rows = table_u1(seeds, args.quick)
        report.section("U1", "Stage I, largest principal angle (m=50, n=500, noise 0)",
                       summarise(rows, ["r", "outlier ratio", "outliers", "method"],
                                 ["angle (deg)", "seconds"]), raw=rows,
                       note=f"Seeds {seed_span(seeds)}.")  # fmt: skip
    if "U2" in only:
        rows = table_u2(seeds, args.quick)
        report.section("U2", "End to end (m=50, n=500, 90% permuted, noise 0.01)",
                       summarise(rows, ["r", "alpha", "method"],
                                 ["refined error", "error", "recovery rate", "angle (deg)",
                                  "seconds"], higher_is_better=["recovery rate"]), raw=rows,
                       note=f"Seeds {seed_span(seeds)}; scikit-learn peers: first seed "
                            f"({seeds[0]}) only.")  # fmt: skip
    if "U6" in only:
        rows = table_u6(seeds, args.quick)
        report.section("U6", "Unlabeled matrix completion (m=50, n=500, r=3)",
                       summarise(rows, ["alpha", "observed fraction", "method"],
                                 ["error all entries", "error missing entries", "angle (deg)",
                                  "seconds"]), raw=rows,
                       note=f"Seeds {seed_span(seeds)}.")  # fmt: skip
    print(report.write())


if __name__ == "__main__":
    main()
