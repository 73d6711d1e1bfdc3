# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""
=========================================================
Restoring images with shuffled patches by unlabeled PCA
=========================================================

Every image here is a mix of three smooth "basis images" (a rank-3 linear
model) plus a little noise. In 80% of the images, three of the sixteen 4x4
patches change places, each image with its own unknown permutation.
:class:`~skpapers.decomposition.UnlabeledPCA` estimates the subspace while
treating the shuffled images as outliers (Stage I, DPCP), flags them by their
distance to it, and restores each flagged image as the point of the subspace
whose pixels match the shuffled ones up to a permutation (Stage II, least squares
with recursive filtration). Plain PCA projection is shown for comparison.

The model needs data close to a low-dimensional linear subspace: real images
such as scikit-learn's digits are far from rank ``n_components`` and are not
restored this way (see the user guide); the paper's face images are closer.
"""

# %%
# Low-rank images with shuffled patches
# -------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import principal_angle, relative_restoration_error

rng = np.random.default_rng(0)
yy, xx = np.mgrid[0:16, 0:16] / 15.0
basis = np.stack(
    [np.exp(-((xx - 0.3) ** 2 + (yy - 0.3) ** 2) / 0.05),
     np.exp(-((xx - 0.7) ** 2 + (yy - 0.6) ** 2) / 0.08),
     np.sin(3 * xx) * np.cos(2 * yy)]
).reshape(3, -1)  # fmt: skip
n_images = 300
X_clean = rng.standard_normal((n_images, 3)) @ basis
X = X_clean + 0.005 * rng.standard_normal(X_clean.shape)
patches = np.arange(256).reshape(4, 4, 4, 4).transpose(0, 2, 1, 3).reshape(16, 16)
corrupted = rng.random(n_images) < 0.8
for j in np.flatnonzero(corrupted):  # three patches change places
    chosen = rng.choice(16, 3, replace=False)
    X[j, patches[chosen].ravel()] = X[j, patches[np.roll(chosen, 1)].ravel()]

# %%
# Fit and restore
# ---------------
upca = UnlabeledPCA(3, lsrf_tol="auto")
X_restored = upca.fit_restore(X)
_, _, Vt = np.linalg.svd(X, full_matrices=False)
X_pca = X @ Vt[:3].T @ Vt[:3]

print(f"angle to the true subspace: UPCA {principal_angle(upca.components_, basis):.2f} deg, "
      f"PCA {principal_angle(Vt[:3], basis):.2f} deg")  # fmt: skip
flagged = upca.permuted_mask_
print(f"flagged {flagged.sum()} images, {(flagged & corrupted).sum()} of the "
      f"{corrupted.sum()} shuffled ones")  # fmt: skip
for name, X_hat in (("shuffled", X), ("PCA projection", X_pca), ("UnlabeledPCA", X_restored)):
    err = relative_restoration_error(X_clean, X_hat)
    print(f"{name:>15}: relative error {err:.3f}")

# %%
# Shuffled and restored images
# ----------------------------
shown = np.flatnonzero(corrupted)[:6]
fig, axes = plt.subplots(4, len(shown), figsize=(1.6 * len(shown), 6.6))
rows = (("original", X_clean), ("shuffled", X), ("PCA proj.", X_pca), ("UPCA", X_restored))
for i, (label, data) in enumerate(rows):
    for ax, j in zip(axes[i], shown, strict=True):
        lim = np.abs(X_clean[j]).max()
        ax.imshow(data[j].reshape(16, 16), cmap="RdBu", vmin=-lim, vmax=lim)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[i, 0].set_ylabel(label)
fig.tight_layout()
plt.show()
