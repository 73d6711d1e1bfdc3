# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""
Robust single-index regression under strong contamination
==========================================================

A GeLU single-index model with 10 % "hijack" outliers, fitted by
:class:`~skpapers.linear_model.RobustSingleIndexRegressor`, compared with
scikit-learn's robust linear regressors (each turned into a single-index model by
a trimmed 1-D scale fit along its direction).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import HuberRegressor, LinearRegression

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import (
    RobustSingleIndexRegressor,
    SingleIndexDisplay,
    fit_link_scale,
)

X, y, coef, outliers = make_contaminated_sim(
    2000, 20, "gelu", (2.5, 0.5), 0.1, "hijack", random_state=0
)
est = RobustSingleIndexRegressor(random_state=0).fit(X, y)
# the fitted link over the index, the rows the filters left out, the residuals
display = SingleIndexDisplay.from_estimator(est, X, y)
marked = display.removed | display.unexplained
print(f"{marked[outliers].mean():.0%} of the hijack rows are left out or unexplained")

# %%
# Error against the contamination level
epss = [0.0, 0.05, 0.1, 0.15]
errors = {"ours": [], "Huber+1D": [], "OLS+1D": []}
for eps in epss:
    X, y, coef, _ = make_contaminated_sim(2000, 20, "gelu", (2.5, 0.5), eps, "hijack",
                                          random_state=1)
    errors["ours"].append(np.linalg.norm(
        RobustSingleIndexRegressor(random_state=0).fit(X, y).coef_ - coef))
    for name, model in (("Huber+1D", HuberRegressor(max_iter=500)),
                        ("OLS+1D", LinearRegression())):
        w = model.fit(X, y).coef_
        w = w / np.linalg.norm(w)
        t, _ = fit_link_scale(X @ w, y, "gelu", contamination=0.1)
        errors[name].append(np.linalg.norm(t * w - coef))
fig, ax = plt.subplots(layout="constrained")
for name, values in errors.items():
    ax.plot(epss, values, marker="o", label=name)
ax.set_xlabel("contamination eps (hijack)")
ax.set_ylabel("||coef - beta*||")
ax.set_yscale("log")
ax.legend()
plt.show()
