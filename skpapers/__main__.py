# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Command line of skpapers: list the estimators, check a plugin, run the demo.

Usage: python -m skpapers {list, check DIST, demo [METHOD] [--plots DIR]}
"""

import argparse
import contextlib
import errno
import importlib
import os
import sys
import time
import traceback
import warnings

from skpapers import registry

__all__ = ["main"]


def _table(rows, header):
    """Format rows as a fixed-width text table."""
    rows = [tuple(str(cell) for cell in row) for row in rows]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(
        [line.format(*header), line.format(*("-" * w for w in widths))]
        + [line.format(*row) for row in rows]
    )


class _OutputError(Exception):
    """Standard output cannot be written (e.g. a full device)."""


def _silence_stdout():
    """Point the stdout descriptor at the null device.

    After a closed pipe or a full device, the interpreter's final flush of
    stdout would fail again and print a traceback; writing to the null device
    lets the process end quietly.
    """
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, _OUTPUT.get("stdout", sys.stdout).fileno())
        os.close(devnull)


def _out(text="", file=None):
    """Print ``text``; characters the stream cannot encode are backslash-escaped.

    A reader closing the pipe (``skpapers list | head -1``) silences the rest of
    the output; any other write error raises :class:`_OutputError`.
    """
    stream = _OUTPUT.get("stdout", sys.stdout) if file is None else file
    if stream is None:
        return
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text = text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:
        text = text.encode("ascii", "backslashreplace").decode("ascii")
    try:
        print(text, file=stream, flush=True)
    except BrokenPipeError:
        if file is None:
            _silence_stdout()
    except OSError as exc:
        if file is not None:
            return
        raise _OutputError(exc) from exc


# the command's own output stream; while a command runs, sys.stdout is stderr, so
# that what plugin code prints (at import, or later from its threads) never lands
# inside a table
_OUTPUT = {}


def _list(args):
    rows = []
    pid = os.getpid()
    for declared in registry.specs():
        status = "ok" if args.load else "not loaded"
        if declared.shadowed_by is not None:
            status = f"shadowed by {declared.shadowed_by}"
        elif args.load:
            try:
                registry.get(declared.name)
            except registry.PluginLoadError as error:
                status = f"broken: {type(error.__cause__).__name__}"
            if os.getpid() != pid:  # a plugin forked at import: its copy must not print
                os._exit(0)
        rows.append((declared.name, declared.value, declared.dist, declared.version, status))
    _out(_table(rows, ("name", "class", "distribution", "version", "status")))
    return 0


def _positive_seconds(text):
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _check(args):
    from skpapers.testing import check_plugin

    try:
        report = check_plugin(args.dist, time_limit=args.time_limit)
    except ValueError as error:
        _out(f"error: {error}", file=sys.stderr)
        return 2
    if not args.verbose:
        shown = [r for r in report if r["status"] in ("failed", "xfail")]
    else:
        shown = report
    rows = [(r["estimator"], r["check"], r["status"], r["reason"][:100]) for r in shown]
    if rows:
        _out(_table(rows, ("estimator", "check", "status", "reason")))
    counts = {}
    for row in report:
        key = (row["estimator"], row["status"])
        counts[key] = counts.get(key, 0) + 1
    _out()
    for name in sorted({row["estimator"] for row in report}):
        summary = ", ".join(
            f"{counts[(name, status)]} {status}"
            for status in ("passed", "failed", "xfail", "skipped")
            if (name, status) in counts
        )
        _out(f"{name}: {summary}")
    return 1 if any(row["status"] == "failed" for row in report) else 0


def _indent(text, prefix="    "):
    import textwrap

    return textwrap.indent(textwrap.dedent(text).strip("\n"), prefix)


def _wrap(text, first, rest):
    import textwrap

    return textwrap.fill(text, width=88, initial_indent=first, subsequent_indent=rest)


def _demo_section(name, plots):
    """Run one demo section and print what it did; return True on success."""
    module = importlib.import_module(f"skpapers._demo.{name}")
    _out(f"== {module.TITLE} ==")
    _out(_wrap(module.PROBLEM, "", ""))
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = module.run()
    except Exception:
        _out(f"FAILED:\n{traceback.format_exc()}")
        return False
    seconds = time.perf_counter() - start
    _out()
    _out(_wrap(report.data, "  Data:         ", " " * 16))
    _out(_wrap(report.did, "  What it did:  ", " " * 16))
    for i, line in enumerate(report.results):
        _out(_wrap(line, "  Results:      - " if i == 0 else " " * 16 + "- ", " " * 18))
    for text in report.warnings:
        _out(_wrap(text, "  Warning:      ", " " * 16))
    others = []
    for warning in caught:
        text = f"{warning.category.__name__}: {warning.message}"
        if text not in report.warnings and text not in others:
            others.append(text)
            _out(_wrap(f"(while fitting the alternatives) {text}", "  Warning:      ",
                       " " * 16))
    _out(f"  Code (the section took {seconds:.1f} s, comparisons included):")
    _out(_indent(module.CODE, "      "))
    if plots is not None and report.plot is not None:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(7, 4.5), layout="constrained")
        report.plot(fig)
        path = os.path.join(plots, f"{name}.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        _out(f"  Figure:       {path}")
    _out()
    return True


def _demo(args):
    from skpapers._demo import SECTIONS

    sections = SECTIONS if args.method is None else (args.method,)
    if args.plots is not None:
        try:
            import matplotlib
        except ImportError:
            _out("error: --plots needs matplotlib (pip install matplotlib)", file=sys.stderr)
            return 2
        matplotlib.use("Agg")
        try:
            os.makedirs(args.plots, exist_ok=True)
        except OSError as error:
            _out(f"error: cannot write figures to {args.plots}: {error.strerror}", file=sys.stderr)
            return 2
    ok = True
    total = time.perf_counter()
    _out("skpapers demo: what each method does, on small generated data\n")
    for name in sections:
        ok = _demo_section(name, args.plots) and ok
    _out(f"total {time.perf_counter() - total:.1f} s")
    return 0 if ok else 1


def _show_warning(message, category, filename, lineno, file=None, line=None):
    with contextlib.suppress(OSError):
        _out(f"{category.__name__}: {message}", file=sys.stderr)


def _is_output_error(exc):
    return isinstance(exc, BrokenPipeError) or exc.errno in (errno.ENOSPC, errno.EDQUOT)


def _write_error(exc):
    _silence_stdout()
    with contextlib.suppress(OSError):
        _out(f"python -m skpapers: write error: {exc.strerror or exc}", file=sys.stderr)
    return 1


def main(argv=None):
    """Run the skpapers command line.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments; ``None`` reads ``sys.argv``.

    Returns
    -------
    status : int
        Process exit status: 0 on success (also when the reader of a pipe
        stops early, as in ``skpapers list | head -1``), 1 on a failed check
        or a write error such as a full device, 2 on a usage error, 130 on
        Ctrl-C.
    """
    from skpapers._demo import SECTIONS

    parser = argparse.ArgumentParser(
        prog="python -m skpapers",
        description="skpapers: scikit-learn estimators for recent machine-learning papers.",
        epilog="Run 'python -m skpapers COMMAND --help' for the options of a command.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    listing = commands.add_parser(
        "list",
        help="list the registered estimators",
        description="List every registered estimator (built-in and plugins) with its "
        "class, distribution, version and status.",
    )
    listing.add_argument(
        "--no-load",
        dest="load",
        action="store_false",
        help="read metadata only; do not import the classes to validate them",
    )
    check = commands.add_parser(
        "check",
        help="run the plugin contract on a distribution",
        description="Run scikit-learn's estimator checks and skpapers' own checks on "
        "every estimator a distribution registers; exit status 1 on a failure.",
    )
    check.add_argument("dist", help="distribution name, e.g. skpapers-dummy-plugin")
    check.add_argument("-v", "--verbose", action="store_true", help="show passed checks too")
    check.add_argument(
        "--time-limit",
        type=_positive_seconds,
        default=300.0,
        metavar="SECONDS",
        help="seconds each check may take (default 300); the checks run in child "
        "processes, so a check that hangs or ends the process is a failed row",
    )
    demo = commands.add_parser(
        "demo",
        help="show what each built-in method does, on small generated data",
        description="For each built-in method: the data, what the method did, the "
        "headline result next to the naive alternative, and the lines of code that did "
        "it. A few seconds per method.",
    )
    demo.add_argument(
        "method",
        nargs="?",
        choices=SECTIONS,
        metavar="METHOD",
        help=f"one of {', '.join(SECTIONS)} (default: all four)",
    )
    demo.add_argument(
        "--plots",
        metavar="DIR",
        help="also write one figure per method to DIR as METHOD.png (needs matplotlib)",
    )
    args = parser.parse_args(argv)
    command = {"list": _list, "check": _check, "demo": _demo}[args.command]
    original, warnings.showwarning = warnings.showwarning, _show_warning
    _OUTPUT["stdout"] = sys.stdout
    status = 0
    try:
        with contextlib.redirect_stdout(sys.stderr):
            status = command(args)
        if _OUTPUT["stdout"] is not None:
            _OUTPUT["stdout"].flush()
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            _out("python -m skpapers: interrupted", file=sys.stderr)
        return 130
    except _OutputError as error:
        return _write_error(error.__cause__)
    except OSError as exc:
        if not _is_output_error(exc):
            raise
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            return status
        return _write_error(exc)
    finally:
        warnings.showwarning = original
        _OUTPUT.pop("stdout", None)
    return status


if __name__ == "__main__":
    sys.exit(main())
