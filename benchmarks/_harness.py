# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared benchmark harness: timing, summaries, provenance, Markdown and CSV output.

Every script in ``benchmarks/`` uses these helpers, so a table always carries
the same header (command, date, machine, BLAS threads, package versions, load)
and the same statistics: per cell, the mean and the sample standard deviation
(``ddof=1``) over seeds, the worst seed's value next to them, and the seeds
used. Every script runs 8 seeds by default (``--seeds``), from ``--first-seed``
on, so that a claim can be checked on seeds it was not developed on. A figure
quoted in the docs, the README or the changelog is the worst seed's unless the
text says otherwise.

Typical use::

    from _harness import Report, summarise, timed

    report = Report("transport_clustering", "Transport clustering benchmark")
    args = parser("...").parse_args()
    rows = [{"method": "ours", "seed": s, "cost": ..., "accuracy": ...}
            for s in seed_list(args)]
    table = summarise(rows, keys=["method"], values=["cost", "accuracy"],
                      higher_is_better=["accuracy"])
    report.section("T1", "Cost on shifted Gaussians", table, raw=rows, note="...")
    report.write()
"""

import argparse
import datetime
import importlib.metadata
import os
import platform
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).parent / "results"
_PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "POT", "skpapers")


def timed(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)``; return ``(result, seconds)`` (wall clock)."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def clocked(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)``; return ``(result, wall seconds, CPU seconds)``.

    CPU seconds are those of this process, all threads included.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def peak_rss_mb():
    """Peak resident set size of this process image (VmHWM on Linux), in MB.

    Unlike ``ru_maxrss``, which a child inherits across fork + exec, VmHWM
    belongs to the current address space: run a fit in a fresh subprocess to
    measure its peak.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def mean_sd(values):
    """Mean and sample standard deviation (``ddof=1``; 0 for fewer than two values)."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return np.nan, np.nan
    sd = float(np.std(values, ddof=1)) if values.size > 1 else 0.0
    return float(np.mean(values)), sd


def seed_list(args):
    """The seeds of a run: ``--seeds`` of them from ``--first-seed`` on."""
    return list(range(args.first_seed, args.first_seed + args.seeds))


def seed_span(seeds):
    """Seeds as short text: ``[0, 1, 2, 5]`` -> ``"0-2, 5"``."""
    seeds = sorted({int(s) for s in seeds})
    spans, start = [], None
    for i, seed in enumerate(seeds):
        start = seed if start is None else start
        if i + 1 == len(seeds) or seeds[i + 1] != seed + 1:
            spans.append(str(seed) if seed == start else f"{start}-{seed}")
            start = None
    return ", ".join(spans)


def summarise(rows, keys, values, digits=4, higher_is_better=(), timings=()):
    """Group ``rows`` by ``keys``: per value column, the mean ± sd and the worst seed.

    Parameters
    ----------
    rows : list of dict or DataFrame
        One row per run (a seed, a method, ...); a ``seed`` column names the
        seed of each run.
    keys : list of str
        Columns that identify a cell of the table.
    values : list of str
        Numeric columns to summarise over the runs of a cell.
    digits : int, default=4
        Significant digits of the mean and the worst value (the sd gets two).
    higher_is_better : list of str, default=()
        Value columns whose worst run is the smallest (accuracies, recalls);
        for the others (errors, costs, ratios) it is the largest.
    timings : list of str, default=()
        Value columns that are times: no worst column (speed is compared in
        ratios measured side by side, not per seed). Columns whose name holds
        "seconds" are timings too.

    Returns
    -------
    table : DataFrame
        One row per cell: ``<value>`` ("mean ± sd"), ``<value> worst`` (the
        worst run's value) for each accuracy column, ``runs`` and ``seeds``.
    """
    frame = pd.DataFrame(rows)
    out = []
    for key, group in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key, strict=True))
        for col in values:
            column = group[col].astype(float) if col in group else pd.Series([np.nan])
            m, s = mean_sd(column)
            row[col] = "n/a" if np.isnan(m) else f"{m:.{digits}g} ± {s:.2g}"
            if col in timings or "seconds" in col:
                continue
            worst = column.min() if col in higher_is_better else column.max()
            row[f"{col} worst"] = "n/a" if np.isnan(worst) else f"{worst:.{digits}g}"
        row["runs"] = len(group)
        row["seeds"] = seed_span(group["seed"]) if "seed" in group else "n/a"
        out.append(row)
    return pd.DataFrame(out)


def markdown(df):
    """A DataFrame as a Markdown table (no extra dependency)."""
    cells = [list(map(str, df.columns))]
    cells += [[str(v) for v in row] for row in df.itertuples(index=False)]
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    lines.insert(1, "|" + "---|" * len(df.columns))
    return "\n".join(lines)


def blas_threads():
    """Threads of every BLAS library loaded (threadpoolctl)."""
    from threadpoolctl import threadpool_info

    return [f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info()
            if i["user_api"] == "blas"]


def provenance():
    """Lines describing the command, date, machine, BLAS, versions and load."""
    versions = []
    for name in _PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
    return [
        f"- Command: `{command.strip()}`",
        f"- Date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"- Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        f"- BLAS threads: {', '.join(blas_threads()) or 'none found'}",
        f"- Versions: {', '.join(versions)}",
        f"- 1-minute load average at the start: {os.getloadavg()[0]:.2f}",
        "- Statistics: mean ± sample standard deviation (ddof = 1) over runs, and the "
        "worst run's value (`worst` columns); the `seeds` column names the seeds.",
    ]


class Report:
    """Results of one benchmark script: CSV files and one Markdown file.

    Sections are keyed by a short id (``"T1"``); writing merges them into an
    existing ``results/<name>.md``, replacing the sections run now and keeping
    the others, so a partial run (``--only``) updates only its tables.

    Parameters
    ----------
    name : str
        File stem of the results (``results/<name>.md``, ``results/<name>_<id>.csv``).
    title : str
        Heading of the Markdown file.
    out : path-like, default=benchmarks/results
        Output folder.
    """

    def __init__(self, name, title, out=RESULTS):
        self.name, self.title, self.out = name, title, Path(out)
        self.sections = {}

    def section(self, key, title, table, *, raw=None, note=""):
        """Add a table (and its raw rows) under ``key``; write its CSV files now."""
        self.out.mkdir(parents=True, exist_ok=True)
        stem = f"{self.name}_{key.lower()}"
        table.to_csv(self.out / f"{stem}.csv", index=False)
        if raw is not None:
            pd.DataFrame(raw).to_csv(self.out / f"{stem}_raw.csv", index=False)
        text = f"## {key} {title}\n\n" + "\n".join(provenance())
        if note:
            text += f"\n\n{note}"
        text += f"\n\n{markdown(table)}\n"
        self.sections[key] = text
        print(text, flush=True)

    def write(self):
        """Merge the sections into ``results/<name>.md``; return its path."""
        path = self.out / f"{self.name}.md"
        kept = {}
        if path.exists():
            for block in re.split(r"\n(?=## )", path.read_text()):
                match = re.match(r"## (\S+) ", block)
                if match:
                    kept[match.group(1)] = block.rstrip() + "\n"
        kept.update(self.sections)
        path.write_text(f"# {self.title}\n\n" + "\n".join(kept[k] for k in sorted(kept)))
        return path


def parser(description, tables=()):
    """Argument parser: ``--quick``, ``--seeds``, ``--first-seed``, ``--only``, ``--out``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="a smoke run of a few minutes")
    p.add_argument("--seeds", type=int, default=8, help="seeds per cell (default 8)")
    p.add_argument("--first-seed", type=int, default=0,
                   help="first seed (default 0); a fresh range checks a claim on held-out seeds")
    if tables:
        p.add_argument("--only", default=",".join(tables),
                       help=f"comma-separated tables among {', '.join(tables)}")
    p.add_argument("--out", default=str(RESULTS), help="output folder")
    return p
