# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""What no estimator can do: a tilt hidden by response-only corruption.

Clean rows ``y = f(<beta, x>) + noise`` (x ~ N(0, I_d), the benchmark's t(2.5)
noise with sigma = 0.5) and the tilted coefficient ``beta' = beta + t u``
(u a unit vector orthogonal to beta). The two joint laws of (x, y) differ in
total variation by ``TV(t) = E_x TV(p(. - f(<beta, x>)), p(. - f(<beta', x>)))``
(p the noise density), computed by Gauss-Hermite quadrature over
``(<beta, x>, <u, x>)``. An adversary who may change a fraction eps of the
responses (x kept) turns data drawn at ``beta`` into data drawn exactly at
``beta'`` whenever ``TV(t) <= eps``: it redraws each response by the maximal
coupling of the two conditional laws. Both data sets are then the same clean
single-index model, so any estimator errs by at least ``t* / 2`` at one of
them, with ``t*`` the largest tilt of ``TV(t) = eps``.

T1, per link and eps: ``t*``, the lower bound ``t* / 2``, and one simulated
data set (n rows, d features) with the coupling at ``TV = 0.97 eps``: the
fraction of responses changed, the error of the estimator at its defaults
against ``beta`` and against ``beta'``, and the oracle's error (the estimator
on the data before the change, started at the truth, no trimming).

Run: ``python benchmarks/robust_sim_limits.py [--seeds N] [--first-seed S] [--n N] [--d D]``.
"""

import warnings

import numpy as np
from _harness import Report, parser, seed_list, seed_span, summarise
from scipy import optimize, stats
from scipy.special import ndtr

from skpapers.datasets import make_contaminated_sim
from skpapers.linear_model import RobustSingleIndexRegressor

LINKS = {"gelu": lambda z: z * ndtr(z), "relu": lambda z: np.maximum(z, 0.0), "tanh": np.tanh}
DF, SIGMA = 2.5, 0.5
NOISE = stats.t(DF, scale=SIGMA * np.sqrt((DF - 2.0) / DF))  # the generator's (2.5, 0.5)


def hidden_fraction(f, t, nodes=80):
    """Total variation between the clean laws at beta and at beta + t u."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / np.sqrt(2.0 * np.pi)
    z, v = np.meshgrid(x, x, indexing="ij")
    shift = np.abs(f(z + t * v) - f(z))
    # two copies of a symmetric unimodal density shifted by s: TV = 2 F(s / 2) - 1
    return float(np.sum(np.outer(w, w) * (2.0 * NOISE.cdf(shift / 2.0) - 1.0)))


def largest_hidden_tilt(f, eps):
    return optimize.brentq(lambda t: hidden_fraction(f, t) - eps, 1e-8, 5.0)


def couple(y, a, a2, rng):
    """Redraw responses so that y - a2 follows the noise law (maximal coupling)."""
    y = y.copy()
    ratio = NOISE.pdf(y - a2) / NOISE.pdf(y - a)
    change = rng.uniform(size=y.shape[0]) > np.minimum(1.0, ratio)
    pending = np.flatnonzero(change)
    while pending.size:  # draw from (p2 - p1)_+ by rejection from p2
        draw = a2[pending] + NOISE.rvs(size=pending.size, random_state=rng)
        p1, p2 = NOISE.pdf(draw - a[pending]), NOISE.pdf(draw - a2[pending])
        ok = rng.uniform(size=pending.size) < np.maximum(0.0, 1.0 - p1 / p2)
        y[pending[ok]] = draw[ok]
        pending = pending[~ok]
    return y, change


def run(link, eps, n, d, seed):
    f = LINKS[link]
    t_star = largest_hidden_tilt(f, eps)
    X, y, beta, _ = make_contaminated_sim(n, d, link, (DF, SIGMA), 0.0, None, random_state=seed)
    rng = np.random.RandomState(10_000 + seed)
    u = rng.standard_normal(d)
    u -= (u @ beta) * beta
    u /= np.linalg.norm(u)
    t = largest_hidden_tilt(f, 0.97 * eps)  # the number of changed rows stays below eps n
    beta2 = beta + t * u
    y2, changed = couple(y, f(X @ beta), f(X @ beta2), rng)
    ours = RobustSingleIndexRegressor(link, random_state=seed).fit(X, y2).coef_
    oracle = (
        RobustSingleIndexRegressor(link, contamination=0, aggregator="mean", whiten=None, init=beta)
        .fit(X, y)
        .coef_
    )
    return {
        "link": link,
        "eps": eps,
        "seed": seed,
        "t*": t_star,
        "bound t*/2": t_star / 2,
        "changed": float(changed.mean()),
        "ours vs beta": float(np.linalg.norm(ours - beta)),
        "ours vs beta'": float(np.linalg.norm(ours - beta2)),
        "oracle": float(np.linalg.norm(oracle - beta)),
    }


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--d", type=int, default=20)
    p.add_argument("--eps", default="0.05,0.1,0.2")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    seeds = seed_list(args)[:1] if args.quick else seed_list(args)
    rows = []
    for link in LINKS:
        for eps in map(float, args.eps.split(",")):
            for seed in seeds:
                rows.append(run(link, eps, args.n, args.d, seed))
                print(rows[-1], flush=True)
    values = ["t*", "bound t*/2", "changed", "ours vs beta", "ours vs beta'", "oracle"]
    table = summarise(rows, ["link", "eps"], values)
    report = Report(
        "robust_sim_limits", "Robust single-index regression: a hidden tilt", out=args.out
    )
    report.section(
        "T1",
        "Largest tilt that eps corrupted responses can hide",
        table,
        raw=rows,
        note=f"n = {args.n}, d = {args.d}, t(2.5) noise with sigma = 0.5, seeds "
        f"{seed_span(seeds)}; mean ± sd and worst seed. Lower bound on the worst-case error "
        "of any estimator: t*/2.",
    )
    report.write()


if __name__ == "__main__":
    main()
