# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA on fully shuffled samples with missing entries (unlabeled matrix completion).

* U7: n = 300 samples of a random r-dimensional subspace of R^m (noise 0.01,
  :func:`~skpapers.datasets.make_permuted_subspace` without permutations), a
  fraction ``missing`` of the entries set to NaN, then the observed entries of
  all but ``clean`` samples shuffled among themselves (never by the identity):
  the mask is drawn before the permutation, so a shuffled sample's observed
  values are its own. Cells: m = 50 with r = 3-5 at 30% and 50% missing and
  30 clean samples; m = 200 with r = 3 and 5 at 50% and 30 clean; m = 50,
  r = 3 with 10 clean samples at 30% and 50%; m = 50, r = 4 with 20 clean at
  30%. For the default ``UnlabeledPCA(r)`` (as a user calls it) and the same
  estimator with the true subspace ("GT"): the fraction of the shuffled
  samples restored (relative error below 0.05 over the whole sample, missing
  entries filled from the subspace), the largest principal angle of the
  fitted subspace, whether a ``FlaggingWarning`` was emitted, CPU seconds.

Run: ``python benchmarks/upca_missing.py [--quick] [--seeds N] [--first-seed S]``.
"""

import warnings

import numpy as np
from _harness import Report, clocked, parser, seed_list, seed_span, summarise
from upca_common import recovery, with_components

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.exceptions import FlaggingWarning
from skpapers.metrics import principal_angle

CELLS = [  # (m, r, missing, clean samples of 300)
    (50, 3, 0.3, 30), (50, 3, 0.5, 30), (50, 4, 0.5, 30), (50, 5, 0.3, 30),
    (50, 5, 0.5, 30), (200, 3, 0.5, 30), (200, 5, 0.5, 30), (50, 3, 0.3, 10),
    (50, 3, 0.5, 10), (50, 4, 0.3, 20),
]  # fmt: skip


def shuffled_observed(n_features, rank, missing, clean, seed, n_samples=300):
    """Samples with NaN entries, the observed entries of all but ``clean`` shuffled."""
    X, X_true, components, _ = make_permuted_subspace(
        n_samples, n_features, rank, outlier_ratio=0, noise=0.01, random_state=seed
    )
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < missing] = np.nan
    shuffled = np.zeros(n_samples, dtype=bool)
    shuffled[rng.permutation(n_samples)[: n_samples - clean]] = True
    for i in np.flatnonzero(shuffled):
        seen = np.flatnonzero(~np.isnan(X[i]))
        order = rng.permutation(seen.size)
        while np.all(order == np.arange(seen.size)):
            order = rng.permutation(seen.size)
        X[i, seen] = X[i, seen[order]]
    return X, X_true, components, shuffled


def table_u7(seeds, quick):
    rows = []
    for m, r, missing, clean in CELLS[:2] if quick else CELLS:
        for seed in seeds:
            X, X_true, components, shuffled = shuffled_observed(m, r, missing, clean, seed)
            for method in ("default UnlabeledPCA(r)", "GT (true subspace)"):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", FlaggingWarning)
                    if method.startswith("GT"):
                        est, _, cpu = clocked(with_components, components, X)
                        X_hat, _, more = clocked(est.restore, X)
                        cpu += more
                    else:
                        est = UnlabeledPCA(r, random_state=0)
                        X_hat, _, cpu = clocked(est.fit_restore, X)
                rows.append({
                    "m": m, "r": r, "missing": missing, "clean": clean, "method": method,
                    "seed": seed, "restored": recovery(X_hat, X_true, shuffled, tol=0.05),
                    "angle (deg)": principal_angle(est.components_, components),
                    "warned": float(any(w.category is FlaggingWarning for w in caught)),
                    "CPU seconds": cpu,
                })  # fmt: skip
            print(rows[-2], flush=True)
    return rows


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    args = p.parse_args(argv)
    seeds = seed_list(args)[:2] if args.quick else seed_list(args)
    rows = table_u7(seeds, args.quick)
    report = Report("upca_missing", "Unlabeled PCA: shuffled samples with missing entries",
                    out=args.out)
    report.section(
        "U7", "Fully shuffled samples with missing entries (n = 300, noise 0.01)",
        summarise(rows, ["m", "r", "missing", "clean", "method"],
                  ["restored", "angle (deg)", "warned", "CPU seconds"],
                  higher_is_better=["restored"]),
        raw=rows,
        note=f"Seeds {seed_span(seeds)}. 'restored': shuffled samples with relative error "
             "below 0.05 (whole sample, missing entries filled from the subspace); "
             "'warned': fits that emitted a FlaggingWarning. GT: the default estimator "
             "with its subspace replaced by the true one.",
    )  # fmt: skip
    print(report.write())


if __name__ == "__main__":
    main()
