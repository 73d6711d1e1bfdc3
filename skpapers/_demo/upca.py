# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Demo: unlabeled PCA restores rows whose entries were scrambled."""

import numpy as np

from skpapers._demo import Report, execute

TITLE = "UnlabeledPCA: PCA for rows whose entries were shuffled"
PROBLEM = (
    "Records whose fields got out of order (a broken join, sensor channels "
    "swapped) still lie near a low-dimensional subspace; UnlabeledPCA finds it "
    "despite them and puts every row's entries back in place."
)
CODE = """
from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA

X, X_true, components, permuted = make_permuted_subspace(
    500, 50, 3, shuffled_ratio=0.3, random_state=0)
upca = UnlabeledPCA(n_components=3, random_state=0)
X_restored = upca.fit_restore(X)
"""


def _row_errors(X_true, X_est):
    return np.linalg.norm(X_est - X_true, axis=1) / np.linalg.norm(X_true, axis=1)


def run():
    """Restore scrambled rows; compare with plain PCA's reconstruction."""
    from sklearn.decomposition import PCA

    ns, raised = execute(CODE)
    X, X_true, permuted, upca = ns["X"], ns["X_true"], ns["permuted"], ns["upca"]
    pca = PCA(n_components=3).fit(X)
    X_pca = pca.inverse_transform(pca.transform(X))
    err = {
        "doing nothing": _row_errors(X_true, X),
        "plain PCA": _row_errors(X_true, X_pca),
        "UnlabeledPCA": _row_errors(X_true, ns["X_restored"]),
    }
    total = {
        name: np.linalg.norm(est - X_true) / np.linalg.norm(X_true)
        for name, est in (("plain PCA", X_pca), ("UnlabeledPCA", ns["X_restored"]))
    }
    restored = int(np.sum(err["UnlabeledPCA"][permuted] < 0.05))
    pca_restored = int(np.sum(err["plain PCA"][permuted] < 0.05))
    n_perm = int(permuted.sum())

    def plot(fig):
        ax = fig.subplots()
        bins = np.logspace(-3.5, 0.5, 41)
        for name, values in err.items():
            ax.hist(values[permuted], bins=bins, histtype="step", linewidth=2, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("relative error of a scrambled row (log scale)")
        ax.set_ylabel("number of rows")
        ax.set_title(f"UnlabeledPCA: {restored} of {n_perm} scrambled rows restored")
        ax.legend()

    return Report(
        data=(
            f"{X.shape[0]} rows of {X.shape[1]} numbers near a 3-dimensional subspace, "
            f"with noise; in {n_perm} rows, 30% of the entries were shuffled."
        ),
        did=(
            f"found the subspace despite the scrambled rows, flagged "
            f"{int(upca.permuted_mask_.sum())} rows as scrambled and put their "
            "entries back in order."
        ),
        results=[
            f"restored {restored} of {n_perm} scrambled rows to within 5% "
            f"(plain PCA's reconstruction: {pca_restored})",
            f"error on the whole table {total['UnlabeledPCA']:.3f} vs "
            f"{total['plain PCA']:.2f} for plain PCA",
        ],
        plot=plot,
        warnings=raised,
    )
