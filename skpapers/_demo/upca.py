# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Demo: unlabeled PCA on the paper's synthetic setting and on breast-cancer records."""

import numpy as np

TITLE = "Unlabeled PCA (Yao, Peng & Tsakiris, NeurIPS 2021 / JMLR 2024)"


def _pca_projection(X, r):
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    return (X @ Vt[:r].T) @ Vt[:r], Vt[:r]


def run():
    """Fig. 3 setting, a noiseless and a missing-entry case, breast-cancer records."""
    from skpapers.datasets import (
        load_breast_cancer_benign,
        make_permuted_subspace,
        normalize_records,
        permute_records,
    )
    from skpapers.decomposition import UnlabeledPCA
    from skpapers.metrics import (
        principal_angle,
        refined_restoration_error,
        relative_restoration_error,
    )

    rows = []
    prototype = {0.1: ("0.17", "0.005", "0.089"), 0.3: ("0.21", "0.006", "0.206")}
    for alpha, (angle_ref, err_ref, pca_ref) in prototype.items():
        X, X_true, components, _ = make_permuted_subspace(
            500, 50, 3, shuffled_ratio=alpha, random_state=0
        )
        upca = UnlabeledPCA(3, restore_samples="all")
        X_hat = upca.fit_restore(X)
        X_pca, V_pca = _pca_projection(X, 3)
        tag = f"m=50 n=500 90% permuted r=3 alpha={alpha}"
        rows += [
            (
                f"DPCP angle (deg), {tag}",
                principal_angle(upca.components_, components),
                f"< 1 (paper prototype {angle_ref})",
            ),
            (
                f"PCA angle (deg), {tag}",
                principal_angle(V_pca, components),
                "> 1.5 (prototype 2.3 / 7.3)",
            ),
            (
                f"refined error UPCA, {tag}",
                refined_restoration_error(X_true, X_hat, 3),
                f"<= 0.02 (prototype {err_ref})",
            ),
            (
                f"refined error PCA-proj, {tag}",
                refined_restoration_error(X_true, X_pca, 3),
                f">= 5x UPCA (prototype {pca_ref})",
            ),
        ]
    X, X_true, _, _ = make_permuted_subspace(
        500, 50, 3, shuffled_ratio=0.3, noise=0.0, random_state=1
    )
    X_hat = UnlabeledPCA(3, lsrf_tol=1e-10).fit_restore(X)
    rows.append(
        (
            "noiseless restoration error, alpha=0.3",
            relative_restoration_error(X_true, X_hat),
            "< 1e-8 (exact recovery)",
        )
    )
    X, X_true, _, _ = make_permuted_subspace(
        500, 50, 3, shuffled_ratio=0.1, missing_ratio=0.2, random_state=0
    )
    X_hat = UnlabeledPCA(3).fit_restore(X)
    missing = np.isnan(X)
    rows.append(
        (
            "UMC: error on the 20% missing entries, alpha=0.1",
            float(np.linalg.norm((X_hat - X_true)[missing]) / np.linalg.norm(X_true[missing])),
            "<= 0.02 (masked DPCP + LSRF)",
        )
    )

    Z, norms, means = normalize_records(load_breast_cancer_benign())
    D = Z * norms + means  # the table in its own units
    paper = {0.3: (".205", ".056"), 0.5: (".276", ".063")}
    for alpha, (noop_ref, upca_ref) in paper.items():
        Z_tilde = permute_records(Z, range(1, 30, 2), alpha, random_state=0)
        noop = relative_restoration_error(D, Z_tilde * norms + means)
        # record linkage: the shuffled vectors are the attributes, so restore the transpose
        restored = (
            UnlabeledPCA(4, restore_samples="all", max_iter=10000).fit_restore(Z_tilde.T).T
        )
        rows += [
            (
                f"breast benign r=4 alpha={alpha}: error doing nothing",
                noop,
                f"prototype {noop_ref}",
            ),
            (
                f"breast benign r=4 alpha={alpha}: error UPCA (DPCP+LSRF, all)",
                relative_restoration_error(D, restored * norms + means),
                f"well below doing nothing (prototype {upca_ref})",
            ),
        ]
    return rows
