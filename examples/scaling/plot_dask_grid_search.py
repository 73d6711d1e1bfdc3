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
# Each fit records the id of the process it ran in through a second scorer.
with (
    LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
    Client(cluster) as client,
):
    search = GridSearchCV(
        UnlabeledPCA(n_components=3),
        {"n_components": [2, 3, 4]},
        scoring={"score": None, "pid": process_id_scorer},
        refit="score",
        cv=3,
        n_jobs=-1,
    )
    with joblib.parallel_config(backend="dask"):
        search.fit(X)
    workers = set(client.run(os.getpid).values())

fit_pids = {int(search.cv_results_[f"split{k}_test_pid"][i]) for k in range(3) for i in range(3)}
print("best:", search.best_params_)
print("fits ran in worker processes:", fit_pids <= workers, "; main process:", os.getpid())
print("mean permutation-invariant score per n_components:",
      np.round(search.cv_results_["mean_test_score"], 4))
