# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""
Scaling a grid search with Dask
===============================

skpapers estimators parallelise through joblib, like scikit-learn's. To run a
grid search on a Dask cluster, select joblib's ``"dask"`` backend; here the
cluster is a two-worker :class:`~distributed.LocalCluster` on this machine, but
the same code runs on a remote cluster given its scheduler address.
"""

# %%
import os

import joblib
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster
from sklearn.model_selection import GridSearchCV

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.testing import process_id_scorer

X, X_true, components, permuted = make_permuted_subspace(
    n_samples=300, n_features=30, n_components=3, random_state=0
)

# %%
# Each fit also records, through a second scorer, the id of the process it ran in.
# The ranks below the true one (1 and 2) leave most samples far from the fitted
# subspace, so their fits emit a ``FlaggingWarning`` in the workers' logs: the
# warning is right, those ranks are too small.
param_grid = {"n_components": [1, 2, 3, 4, 5]}
with (
    LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
    Client(cluster) as client,
):
    search = GridSearchCV(
        UnlabeledPCA(n_components=3),
        param_grid,
        scoring={"score": None, "pid": process_id_scorer},
        refit="score",
        cv=3,
        n_jobs=-1,
    )
    with joblib.parallel_config(backend="dask"):
        search.fit(X)
    workers = sorted(set(client.run(os.getpid).values()))

# %%
# The score picks the true dimension (3); every fit ran in one of the two workers,
# none in this process.
results = search.cv_results_
pids = np.array([[results[f"split{k}_test_pid"][i] for k in range(3)]
                 for i in range(len(param_grid["n_components"]))]).astype(int)
print("best n_components:", search.best_params_["n_components"])
print("fits per worker:", [int((pids == pid).sum()) for pid in workers],
      "; fits in this process:", int((pids == os.getpid()).sum()))

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.errorbar(param_grid["n_components"], results["mean_test_score"],
            yerr=results["std_test_score"], marker="o", capsize=3)
ax.axvline(search.best_params_["n_components"], color="tab:red", linestyle="--",
           label="best n_components")
ax.set_xticks(param_grid["n_components"])
ax.set_xlabel("n_components")
ax.set_ylabel("mean cross-validated score")
ax.set_title("Grid search of UnlabeledPCA on a 2-worker Dask cluster")
ax.legend()
plt.show()
