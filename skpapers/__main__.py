# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Command line: ``python -m skpapers {list, check DIST, demo}``."""

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
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _out(text="", file=None):
    """Print ``text``; characters the stream cannot encode are backslash-escaped.

    A reader closing the pipe (``skpapers list | head -1``) silences the rest of
    the output; any other write error raises :class:`_OutputError`.
    """
    stream = sys.stdout if file is None else file
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
        if stream is sys.stdout:
            _silence_stdout()
    except OSError as exc:
        if stream is not sys.stdout:
            return
        raise _OutputError(exc) from exc


def _plugin_output_to_stderr():
    """Send what plugin code prints to stderr, so it never lands inside a table."""
    return contextlib.redirect_stdout(sys.stderr)


def _list(args):
    rows = []
    with _plugin_output_to_stderr():
        for spec in registry.specs():
            status = "ok" if args.load else "not loaded"
            if spec.shadowed_by is not None:
                status = f"shadowed by {spec.shadowed_by}"
            elif args.load:
                try:
                    registry.get(spec.name)
                except registry.PluginLoadError as error:
                    status = f"broken: {type(error.__cause__).__name__}"
            rows.append((spec.name, spec.value, spec.dist, spec.version, status))
    _out(_table(rows, ("name", "class", "distribution", "version", "status")))
    return 0


def _check(args):
    from skpapers.testing import check_plugin

    try:
        with _plugin_output_to_stderr():
            report = check_plugin(args.dist)
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


def _demo(args):
    from skpapers._demo import SECTIONS

    failed = False
    total = time.perf_counter()
    print("skpapers demo: the four built-in methods on small embedded or generated data\n")
    for name in SECTIONS:
        start = time.perf_counter()
        try:
            module = importlib.import_module(f"skpapers._demo.{name}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = module.run()
        except Exception:
            failed = True
            print(f"== {name}: FAILED ==\n{traceback.format_exc()}")
            continue
        seconds = time.perf_counter() - start
        print(f"== {module.TITLE} ({seconds:.1f} s) ==")
        body = [(metric, f"{value:.4g}", expected) for metric, value, expected in rows]
        print(_table(body, ("metric", "value", "expected")), end="\n\n")
    print(f"total {time.perf_counter() - total:.1f} s")
    return 1 if failed else 0


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
    parser = argparse.ArgumentParser(prog="python -m skpapers", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="list the registered estimators")
    listing.add_argument(
        "--no-load",
        dest="load",
        action="store_false",
        help="read metadata only; do not import the classes to validate them",
    )
    check = commands.add_parser("check", help="run the plugin contract on a distribution")
    check.add_argument("dist", help="distribution name, e.g. skpapers-dummy-plugin")
    check.add_argument("-v", "--verbose", action="store_true", help="show passed checks too")
    commands.add_parser("demo", help="run a short demo of the four built-in methods")
    args = parser.parse_args(argv)
    command = {"list": _list, "check": _check, "demo": _demo}[args.command]
    original, warnings.showwarning = warnings.showwarning, _show_warning
    status = 0
    try:
        status = command(args)
        if sys.stdout is not None:
            sys.stdout.flush()
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
    return status


if __name__ == "__main__":
    sys.exit(main())
