# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the unlabeled PCA benchmarks (``upca_*.py``), public API only."""

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from scipy.io import loadmat, savemat

from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import relative_restoration_error


def top_right(X, r):
    """Top ``r`` right singular vectors (rows): the uncentred PCA subspace."""
    return np.linalg.svd(X, full_matrices=False)[2][:r]


def pca_projection(X, r):
    """The papers' PCA-proj baseline: projection on the top-``r`` uncentred subspace."""
    V = top_right(X, r)
    return (X @ V.T) @ V


def recovery(X_hat, X_true, permuted, tol=1e-2):
    """Fraction of the permuted samples restored to a relative error below ``tol``."""
    err = np.linalg.norm(X_hat - X_true, axis=1) / np.linalg.norm(X_true, axis=1)
    return float(np.mean(err[permuted] < tol)) if permuted.any() else np.nan


def compute_err(Z_true, Z_hat, norms, means):
    """The authors' ``ComputeErr``: error in original units relative to the raw table."""
    return relative_restoration_error(Z_true * norms + means, Z_hat * norms + means)


def lsrf_textbook(A, y):
    """LSRF for one sample written literally: a fresh least-squares fit per deletion."""
    m, r = A.shape
    keep = np.arange(m)
    x = np.linalg.lstsq(A, y, rcond=None)[0]
    for _ in range(m - r):
        x = np.linalg.lstsq(A[keep], y[keep], rcond=None)[0]
        keep = np.delete(keep, np.argmax(np.abs(y[keep] - A[keep] @ x)))
    return x


def lsrf_downdated(A, y):
    """LSRF for one sample, one row per step, downdated normal equations (the paper's steps)."""
    m, r = A.shape
    keep = np.ones(m, dtype=bool)
    G, h = A.T @ A, A.T @ y
    x = np.linalg.solve(G, h)
    for _ in range(m - r):
        x = np.linalg.solve(G, h)
        res = np.abs(y - A @ x)
        res[~keep] = -1.0
        t = np.argmax(res)
        keep[t] = False
        G -= np.outer(A[t], A[t])
        h -= A[t] * y[t]
    return x


def with_components(components, X, **params):
    """An estimator fitted on ``X`` whose subspace is then replaced by ``components``.

    The "-GT" oracles: the same Stage II on the true subspace. The flagging
    threshold is the one fitted on ``X``; use ``restore_samples="all"`` for an
    oracle that does not depend on it.
    """
    est = UnlabeledPCA(components.shape[0], **params).fit(X)
    est.components_ = np.asarray(components, dtype=np.float64)
    return est


def shuffle_faces(faces, rng, n_corrupted=16, h=192, w=168, v=12, hp=7, n_fixed=50):
    """The authors' face corruption: shuffle the first 34 of 84 patches of 16 images."""
    X = faces.copy()
    ids = rng.permutation(len(faces))[:n_corrupted]
    if 0 not in ids:
        ids[0] = 0
    if 22 not in ids:
        ids[1] = 22
    vb, hb = h // v, w // hp
    n_shuffled = v * hp - n_fixed
    for j in ids:
        img = faces[j].reshape(h, w, order="F")
        blocks = img.reshape(v, vb, hp, hb).transpose(0, 2, 1, 3).reshape(v * hp, vb, hb)
        pattern = np.r_[rng.permutation(n_shuffled), np.arange(n_shuffled, v * hp)]
        out = blocks[pattern].reshape(v, hp, vb, hb).transpose(0, 2, 1, 3).reshape(h, w)
        X[j] = out.reshape(-1, order="F")
    mask = np.zeros(len(faces), dtype=bool)
    mask[ids] = True
    return X, mask


def subspace_floor(X_clean, r):
    """How close a restoration can bring each sample: its leave-one-out rank-r distance.

    A restoration returns a point of the rank-``r`` subspace, so it cannot come
    closer to a sample's true values than their distance to that subspace (the
    uncentred rank-``r`` subspace of the other clean samples). A permuted sample
    that moved less than this (``restorable``: moved farther) is made worse even
    by perfect flags and a perfect restoration.
    """
    floor = np.empty(len(X_clean))
    for j in range(len(X_clean)):
        V = top_right(np.delete(X_clean, j, axis=0), r)
        floor[j] = np.linalg.norm(X_clean[j] - (X_clean[j] @ V.T) @ V)
    return floor


def flag_rates(flagged, truly_permuted, off_subspace=None):
    """Fraction of clean samples flagged and of permuted samples flagged.

    ``off_subspace`` restricts the second rate to the permuted samples that
    actually moved off the subspace (a permutation among equal values is invisible).
    """
    clean = ~truly_permuted
    perm = truly_permuted if off_subspace is None else truly_permuted & off_subspace
    return (
        float(flagged[clean].mean()) if clean.any() else np.nan,
        float(flagged[perm].mean()) if perm.any() else np.nan,
    )


def octave_checkout(checkout, needed, tools=("octave",)):
    """The authors' checkout as a resolved path, or None and the reason it cannot be used.

    ``needed``: a file of the checkout that must exist; ``tools``: programs that
    must be on PATH.
    """
    if not checkout:
        return None, "set SKPAPERS_UPCA_AUTHORS or --authors to a checkout of the authors' code"
    root = Path(checkout).resolve()
    if not (root / needed).exists():
        return None, f"no {needed} under {root}"
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        return None, f"{' and '.join(missing)} not on PATH"
    return root, None


def octave_version():
    """First line of ``octave --version`` (e.g. "GNU Octave, version 7.3.0")."""
    done = subprocess.run(["octave", "--version"], capture_output=True, text=True)
    return done.stdout.splitlines()[0]


def run_octave(paths, driver, call, inputs):
    """Run ``call`` under Octave on ``inputs``; return the variables it saved.

    ``inputs`` (a dict of arrays) is saved to ``in.mat`` in a temporary folder,
    ``driver`` (the source of an Octave function file, whose name is the first
    word after ``function ... =`` or ``function``) is written there, the
    ``paths`` are added to Octave's path, and ``call`` is evaluated in that
    folder; it must save its results to ``out.mat`` (``save('-v7', ...)``).
    """
    header = driver.split("(", 1)[0].split()
    name = header[-1].split("=")[-1]
    with tempfile.TemporaryDirectory() as tmp:
        savemat(Path(tmp) / "in.mat", inputs)
        (Path(tmp) / f"{name}.m").write_text(driver)
        adds = "".join(f"addpath('{p}'); " for p in paths)
        subprocess.run(
            ["octave", "--no-gui", "--no-window-system", "--quiet", "--eval",
             f"{adds}cd('{tmp}'); {call}"],
            check=True, capture_output=True,
        )  # fmt: skip
        return loadmat(Path(tmp) / "out.mat")
