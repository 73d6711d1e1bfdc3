# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""
=============================================
Unlabeled PCA: what the benchmarks measured
=============================================

This example draws the figures of the unlabeled PCA user guide from the CSV
files that the benchmark scripts in ``benchmarks/`` write to
``benchmarks/results/`` (nothing is recomputed here):

* densely permuted samples (every entry shuffled): the fraction of permuted
  samples restored by ``stage2="hard_em"`` and by hard EM from random starts,
  as the number of inliers grows (``benchmarks/upca_dense.py``);
* how many clean and permuted samples the default flagging rule flags
  (``benchmarks/upca_records.py``);
* the time of ``fit`` + ``restore`` against scikit-learn's PCA
  (``benchmarks/upca_speed.py``).
"""

# %%
# Locate the results
# ------------------
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd


def _results():
    here = Path(globals().get("__file__", "plot_upca_benchmarks.py")).resolve().parent
    for base in (here, Path.cwd()):
        for parent in (base, *base.parents):
            candidate = parent / "benchmarks" / "results"
            if candidate.is_dir():
                return candidate
    raise FileNotFoundError("benchmarks/results not found; run the benchmark scripts first")


results = _results()

# %%
# Dense permutations
# ------------------
# Each point is the mean over seeds of the fraction of permuted samples
# restored to a relative error below 0.05 (m = 50 features, n = 100 samples).
dense = pd.read_csv(results / "upca_dense_u5_raw.csv")
dense = dense[dense["m"] == 50]
methods = [m for m in dense["method"].unique() if m != "DPCP+LSRF"]
fig, axes = plt.subplots(1, dense["r"].nunique(), figsize=(10, 3), sharey=True, squeeze=False)
for ax, (r, part) in zip(axes[0], dense.groupby("r"), strict=True):
    for method in methods:
        curve = part[part["method"] == method].groupby("inliers")["restored fraction"].mean()
        if len(curve):
            ax.plot(curve.index, curve.values, marker="o", label=method)
    ax.set_title(f"r = {r}")
    ax.set_xlabel("inliers (of 100 samples)")
axes[0, 0].set_ylabel("permuted samples restored")
axes[0, -1].legend(fontsize=7)
fig.tight_layout()

# %%
# Flagging
# --------
# Fraction of clean samples flagged (should be near 0) and of permuted samples
# flagged, among all that the shuffle moved and among those that restoring can
# improve (moved farther than their true values lie from the subspace: on the
# breast-cancer records with 10% shuffled, a third of the shuffled attributes).
flags = pd.read_csv(results / "upca_records_f1_raw.csv")
summary = flags.groupby(["data", "setting"], sort=False)[
    ["clean flagged", "moved permuted flagged", "restorable permuted flagged"]
].mean()
fig, ax = plt.subplots(figsize=(8, 5.5), layout="constrained")
summary.plot.barh(ax=ax, legend=False)
ax.set_xlabel("fraction flagged")
ax.set_ylabel("")
ax.invert_yaxis()
fig.legend(loc="outside lower center", ncols=3, fontsize=8)
plt.show()

# %%
# Time against PCA
# ----------------
# ``fit`` + ``restore`` of UnlabeledPCA and ``fit`` + ``inverse_transform`` of
# scikit-learn's PCA on the same data, in the same process (50 features, r = 5,
# 90% of the samples with 10% of their entries shuffled).
speed = pd.read_csv(results / "upca_speed_s1_raw.csv").groupby("n_samples").mean()
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.loglog(speed.index, speed["PCA fit+inverse s"], marker="o", label="PCA")
ax.loglog(speed.index, speed["UPCA total s"], marker="o", label="UnlabeledPCA")
ax.set_xlabel("n_samples")
ax.set_ylabel("seconds")
ax.legend()
plt.show()
