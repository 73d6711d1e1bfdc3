# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Demo: robust single-index regression under strong contamination (generated data)."""

import numpy as np

TITLE = "Robust single-index model regression (Das, Chatterjee, Batra, ICML 2026)"

_NON_ROBUST = dict(
    contamination=0, aggregator="mean", whiten=None, spectral_clip=None, init="spectral"
)


def _huber_1d(X, y, link):
    """HuberRegressor direction + the estimator's trimmed 1-D scale fit."""
    from sklearn.linear_model import HuberRegressor

    from skpapers.linear_model import fit_link_scale

    w = HuberRegressor(max_iter=500).fit(X, y).coef_
    w = w / np.linalg.norm(w)
    t, _ = fit_link_scale(X @ w, y, link, contamination=0.1)
    return t * w


def run():
    """Fit on contaminated GeLU, tanh and z^2 data; return (metric, value, expected) rows."""
    from skpapers.datasets import make_contaminated_sim
    from skpapers.linear_model import RobustSingleIndexRegressor

    rows = []
    noise = (2.5, 0.5)  # Student t(2.5) scaled to standard deviation 0.5
    X, y, coef, outliers = make_contaminated_sim(
        10_000, 50, "gelu", noise, 0.1, "hijack", random_state=0
    )
    est = RobustSingleIndexRegressor("gelu", random_state=0).fit(X, y)
    err = np.linalg.norm(est.coef_ - coef)
    rows.append(("GeLU, hijack eps=0.1 (n=1e4, d=50): ||coef - beta*||", err,
                 "<= 0.07 (spec Table 1 target; prototype 0.057)"))
    rows.append(("  same, init only (max_iter=0)", np.linalg.norm(est.init_coef_ - coef),
                 "in the basin (< 0.5), above the GD error"))
    plain = RobustSingleIndexRegressor("gelu", random_state=0, **_NON_ROBUST).fit(X, y)
    rows.append(("  non-robust spectral + plain GD, same data",
                 np.linalg.norm(plain.coef_ - coef), ">= 0.8 (spec; prototype 1.02)"))
    huber = _huber_1d(X, y, est.link_)
    rows.append(("  HuberRegressor + 1-D scale fit, same data",
                 np.linalg.norm(huber - coef), f">= 3x ours ({3 * err:.3g})"))
    rows.append(("  hijack rows removed by the covariate filter (of 1000)",
                 float((~est.inlier_mask_ & outliers).sum()),
                 "some: bounds their spectral mass only"))

    X, y, coef, _ = make_contaminated_sim(2000, 20, "gelu", noise, 0.1, "labels", random_state=1)
    est = RobustSingleIndexRegressor("gelu", random_state=0).fit(X, y)
    rows.append(("GeLU, labels eps=0.1: ||coef - beta*||", np.linalg.norm(est.coef_ - coef),
                 "<= 0.3 (spec CI bound; prototype 0.079)"))

    X, y, coef, _ = make_contaminated_sim(2000, 20, "tanh", noise, 0.1, "hijack", random_state=2)
    est = RobustSingleIndexRegressor("tanh", whiten=None, random_state=0).fit(X, y)
    rows.append(("tanh, hijack eps=0.1, whiten=None: ||coef - beta*||",
                 np.linalg.norm(est.coef_ - coef), "<= 0.2 (spec CI bound; prototype 0.127)"))
    rows.append(("tanh ESC constant E[f(Z)^2 (Z^2 - 1)]", est.esc_constant_,
                 "0.364 (spec table)"))

    X, y, coef, _ = make_contaminated_sim(
        2000, 20, "quadratic", noise, 0.05, "hijack", random_state=3
    )
    est = RobustSingleIndexRegressor("quadratic", max_iter=400, random_state=0).fit(X, y)
    err = min(np.linalg.norm(est.coef_ - coef), np.linalg.norm(est.coef_ + coef))
    rows.append(("z^2 (phase retrieval), hijack eps=0.05: error up to sign", err,
                 "<= 0.1 (prototype 0.013 at n=1e4, d=50)"))
    return rows
