# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""UnlabeledPCA on densely permuted samples (every entry shuffled, alpha = 1).

* U5: m = 50, n = 100, noise 0.01, r in {3, 4, 5} (and m = 200, r in {3, 4, 5} with ``--wide``),
  10 to 25 inliers. For each Stage II on the DPCP subspace: the fraction of
  the permuted samples restored (relative error below 0.05), the refined error,
  the largest principal angle of the subspace, seconds.

  - ``hard_em`` (``UnlabeledPCA(stage2="hard_em")``): hard EM started on the set
    of coefficients that match the first two power sums of the sample, round
    after round until the sample fits to the noise level.
  - the same Stage II on the true subspace ("GT").
  - hard EM from random starts ``N(0, I) |y| / sqrt(r)`` plus the LAD and LSRF
    solutions, keeping the best ``|sort(y) - sort(A c)|``: 50 random starts
    (the package's earlier ``hard_em``) and 500, written here.
  - the default estimator, ``UnlabeledPCA(r)`` (``stage2="auto"``: LSRF, then
    hard EM for the samples LSRF does not restore), as a user would call it;
  - LSRF (``UnlabeledPCA(stage2="lsrf", restore_samples="all")``): the sparse
    solver, as a reference.
  - the authors' AIEM (algebraic initialisation + hard EM, MATLAB) run under
    GNU Octave on the same matrices, on the DPCP subspace fitted by
    ``UnlabeledPCA`` and on the true one, restoring every sample as their
    ``denseSLRsolver2`` does. Optional: the authors' code is not distributed
    with skpapers; point ``--authors`` (or ``SKPAPERS_UPCA_AUTHORS``) at a
    checkout of it and have ``octave`` and ``mkoctfile`` on PATH plus the Eigen
    headers (Debian: ``octave liboctave-dev libeigen3-dev``). Their C++ solvers
    for r = 3 and 4 are compiled once into ``<checkout>/octave-mex`` (with
    ``-DNDEBUG``, as MATLAB's ``mex`` does: the r = 3 solver reads one entry past
    a 6 x 6 matrix, a value it then overwrites, which trips Eigen's bound checks
    otherwise); r >= 5 calls Bertini and is not run. Without the checkout or
    Octave these rows are skipped with a note. "seconds" is the solver time
    measured inside Octave (plus the DPCP fit for the DPCP row), without
    Octave's start-up.

"CPU seconds" is the processor time of this process (our rows, all BLAS
threads) or of the Octave process (the authors' rows).

Run: ``[SKPAPERS_UPCA_AUTHORS=<checkout>] python benchmarks/upca_dense.py
[--quick] [--seeds N] [--first-seed S] [--wide] [--authors DIR]``.
"""

import os
import shutil
import subprocess

import numpy as np
from _harness import Report, clocked, parser, seed_list, seed_span, summarise
from upca_common import octave_checkout, octave_version, recovery, run_octave, with_components

from skpapers.datasets import make_permuted_subspace
from skpapers.decomposition import UnlabeledPCA
from skpapers.metrics import principal_angle, refined_restoration_error


def _hard_em_one(A, y, starts, max_iter=1000, tol=1e-4):
    """Hard EM (sort and match, least squares) for one sample from every start."""
    ys = np.sort(y)
    X = starts.copy()
    best = np.full(len(X), np.inf)
    run = np.arange(len(X))  # starts still improving by at least tol |y|
    pinv = np.linalg.pinv(A)
    for _ in range(max_iter):
        Z = X[run] @ A.T
        order = np.argsort(Z, axis=1)
        err = np.linalg.norm(ys - np.take_along_axis(Z, order, axis=1), axis=1)
        going = best[run] - err >= tol * np.linalg.norm(y)
        best[run] = np.minimum(best[run], err)
        run, order = run[going], order[going]
        if run.size == 0:
            break
        matched = np.empty((run.size, len(y)))
        np.put_along_axis(matched, order, np.broadcast_to(ys, matched.shape), axis=1)
        X[run] = matched @ pinv.T
    err = np.linalg.norm(ys - np.sort(X @ A.T, axis=1), axis=1)
    return X[np.argmin(err)]


# Restores every column of X (m x n) on U (m x r) with the authors' solver,
# timing the loop inside Octave (wall and CPU).
_OCTAVE_DRIVER = """\
function restore_all(solver)
  S = load('in.mat');
  C = zeros(size(S.U, 2), size(S.X, 2));
  c0 = cputime(); t0 = tic();
  for j = 1:size(S.X, 2)
    C(:, j) = feval(solver, S.U, S.X(:, j));
  end
  sec = toc(t0); cpu = cputime() - c0;
  save('-v7', 'out.mat', 'C', 'sec', 'cpu');
end
"""

_MEX = {
    "sympol3Mat": "LRWC_methods/AIEM/Matlab_solver_n3_n4/sympol3Mat.cpp",
    "sympol4Mat": "LRWC_methods/AIEM/Matlab_solver_n3_n4/sympol4Mat.cpp",
}


def authors_aiem(checkout):
    """The authors' AIEM under Octave as ``run(X, components)`` and a description.

    None and the reason instead where the checkout, Octave or the compiler is missing.
    """
    root, why = octave_checkout(checkout, "LRWC_methods/AIEM/AIEM.m", ("octave", "mkoctfile"))
    if root is None:
        return None, why
    build = root / "octave-mex"
    build.mkdir(exist_ok=True)
    env = {**os.environ, "CXXFLAGS": "-O2 -DNDEBUG -fpermissive"}
    for name, source in _MEX.items():
        if not (build / f"{name}.mex").exists():
            # a copy outside the checkout's folder, whose bundled Eigen is incomplete
            shutil.copy(root / source, build / f"{name}.cpp")
            done = subprocess.run(
                ["mkoctfile", "--mex", "-I/usr/include", f"{name}.cpp"],
                cwd=build, env=env, capture_output=True, text=True,
            )  # fmt: skip
            if done.returncode:
                return None, f"mkoctfile failed on {name}.cpp: {done.stderr[-300:]}"
    paths = [build, root / "LRWC_methods/AIEM"]
    about = f"{octave_version()}, SKPAPERS_UPCA_AUTHORS=<checkout>"

    def run(X, components):
        """Restore every sample (row) of X; return ``(X_hat, seconds, CPU seconds)``."""
        out = run_octave(
            paths, _OCTAVE_DRIVER, "restore_all('AIEM')", {"X": X.T, "U": components.T}
        )
        return out["C"].T @ components, float(out["sec"][0, 0]), float(out["cpu"][0, 0])

    return run, about


def random_start_hard_em(est, X, n_starts, seed):
    """Restore every sample by hard EM from LAD, LSRF and ``n_starts`` random starts."""
    r = est.components_.shape[0]
    A = est.components_.T
    lad = est.set_params(stage2="l1", restore_samples="all").transform(X)
    lsrf = est.set_params(stage2="lsrf").transform(X)
    rng = np.random.default_rng(seed)
    C = np.empty((len(X), r))
    for j, y in enumerate(X):
        rand = rng.standard_normal((n_starts, r)) * np.linalg.norm(y) / np.sqrt(r)
        C[j] = _hard_em_one(A, y, np.vstack([lad[j], lsrf[j], rand]))
    return C @ est.components_


def table_u5(seeds, quick, wide, aiem=None):
    rows = []
    settings = [(50, 3), (50, 4), (50, 5)] + ([(200, 3), (200, 4), (200, 5)] if wide else [])
    for m, r in settings[:1] if quick else settings:
        for inliers in (10, 15, 20, 25):
            for seed in seeds:
                X, X_true, comp, permuted = make_permuted_subspace(
                    100, m, r, outlier_ratio=1 - inliers / 100, shuffled_ratio=1.0,
                    random_state=seed,
                )  # fmt: skip

                def add(
                    method,
                    X_hat,
                    sec,
                    cpu,
                    angle,
                    m=m,
                    r=r,
                    inliers=inliers,
                    X_true=X_true,
                    p=permuted,
                    seed=seed,
                ):
                    rows.append(
                        {"m": m, "r": r, "inliers": inliers, "method": method, "seed": seed,
                         "restored fraction": recovery(X_hat, X_true, p, tol=0.05),
                         "refined error": refined_restoration_error(X_true, X_hat, r),
                         "angle (deg)": angle, "seconds": sec, "CPU seconds": cpu}
                    )  # fmt: skip

                est = UnlabeledPCA(r, stage2="hard_em", random_state=seed)
                X_hat, sec, cpu = clocked(est.fit_restore, X)
                angle = principal_angle(est.components_, comp)
                add("DPCP+hard_em", X_hat, sec, cpu, angle)
                gt = with_components(comp, X, stage2="hard_em", random_state=seed)
                add("GT+hard_em", *clocked(gt.restore, X), 0.0)
                if aiem is not None and r in (3, 4):
                    dpcp, fit_sec, fit_cpu = clocked(UnlabeledPCA(r).fit, X)
                    X_hat, sec, cpu = aiem(X, dpcp.components_)
                    add(
                        "DPCP+AIEM (authors, Octave)",
                        X_hat,
                        fit_sec + sec,
                        fit_cpu + cpu,
                        principal_angle(dpcp.components_, comp),
                    )
                    add("GT+AIEM (authors, Octave)", *aiem(X, comp), 0.0)
                n_starts = (50, 500) if r == 3 else (50,)
                for n in n_starts:
                    base = UnlabeledPCA(r).fit(X)
                    add(
                        f"DPCP+hard EM, {n} random starts",
                        *clocked(random_start_hard_em, base, X, n, seed),
                        angle,
                    )
                lsrf = UnlabeledPCA(r, stage2="lsrf", restore_samples="all")
                add("DPCP+LSRF", *clocked(lsrf.fit_restore, X), angle)
                default = UnlabeledPCA(r, random_state=seed)
                X_hat, sec, cpu = clocked(default.fit_restore, X)
                add("default UnlabeledPCA(r)", X_hat, sec, cpu,
                    principal_angle(default.components_, comp))
    return rows


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--wide", action="store_true", help="also m = 200")
    p.add_argument(
        "--authors",
        default=os.environ.get("SKPAPERS_UPCA_AUTHORS"),
        help="checkout of the authors' code (default: $SKPAPERS_UPCA_AUTHORS)",
    )
    args = p.parse_args(argv)
    seeds = seed_list(args)[:2] if args.quick else seed_list(args)
    aiem, about = authors_aiem(args.authors)
    if aiem is None:
        print(f"The authors' AIEM rows are skipped: {about}.")
        skipped = f" The authors' AIEM rows are skipped: {about}."
    else:
        skipped = (
            f" The authors' AIEM ({about}) runs for r = 3 and 4 only (r >= 5 calls"
            " Bertini); it restores every sample, as their code does. Its seconds are"
            " measured inside Octave (plus our DPCP fit on the DPCP row), without Octave's"
            " start-up of about 0.3 s."
        )
    rows = table_u5(seeds, args.quick, args.wide, aiem)
    report = Report("upca_dense", "Unlabeled PCA: dense permutations", out=args.out)
    report.section(
        "U5", "Dense permutations (n=100, alpha=1, noise 0.01)",
        summarise(rows, ["m", "r", "inliers", "method"],
                  ["restored fraction", "refined error", "angle (deg)", "seconds",
                   "CPU seconds"], higher_is_better=["restored fraction"]),
        raw=rows,
        note=f"Seeds {seed_span(seeds)}. "
             "'restored': permuted samples with relative error below 0.05. The random-start "
             "solvers, LSRF and AIEM run on the DPCP subspace fitted by UnlabeledPCA." + skipped,
    )  # fmt: skip
    print(report.write())


if __name__ == "__main__":
    main()
