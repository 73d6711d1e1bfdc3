# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The plugin contract in child processes, so that no plugin can kill or hang it.

The parent starts ``python -m skpapers.testing._isolated`` with what is done
already; the child runs the rest in order and reports on a pipe of its own
(what the plugin prints goes to a log file instead): one JSON line when an
entry starts, when a check starts and with each row. A child that ends without
saying it is done, or says nothing for ``time_limit`` seconds, is stopped (its
whole process group; its own start-up, Python and scikit-learn's imports before
it says it is ready, has ``_STARTUP_SECONDS`` instead, so that a loaded machine
does not fail a check that has not started); the check it was running (or the entry it was
collecting) becomes a failed row and a new child carries on after it. The
checks' temporary files go to a folder of the run, removed at the end.
"""

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

_FD_ENV = "SKPAPERS_CHECK_FD"
_STARTUP_SECONDS = 120.0


def check_in_child_processes(dist, expected_failed_checks, time_limit):
    """Rows of the contract of ``dist``, run in child processes."""
    from skpapers.testing import _row

    if callable(expected_failed_checks):
        raise TypeError(
            "expected_failed_checks must be a dict when the checks run in a child "
            "process (time_limit is set); a callable cannot be sent there."
        )
    folder = tempfile.mkdtemp(prefix="skpapers-check-")
    state = {"dist": dist, "xfails": expected_failed_checks, "done": {}, "skip_entries": []}
    rows = []
    try:
        while True:
            why, entry, check = _child(state, rows, time_limit, folder)
            if why is None:
                return rows
            if check is not None:  # this check failed; the next child starts after it
                rows.append(_row(entry, check, "failed", why))
                state["done"][entry] = state["done"].get(entry, 0) + 1
            elif entry is not None:  # collecting this entry's checks failed: skip it
                rows.append(_row(entry, "collect checks", "failed", why))
                state["skip_entries"].append(entry)
            else:
                rows.append(_row(dist, "collect checks", "failed", why))
                return rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _child(state, rows, time_limit, folder):
    """Run one child, appending its rows; return ``(why, entry, check)``, why None if done."""
    read_end, write_end = os.pipe()
    env = {**os.environ, _FD_ENV: str(write_end), "TMPDIR": folder}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if isinstance(p, str) and p)
    with open(os.path.join(folder, "output.log"), "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "skpapers.testing._isolated", json.dumps(state)],
            pass_fds=(write_end,), env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True, cwd=folder,
        )
        os.close(write_end)
        try:
            return _follow(proc, read_end, state, rows, time_limit)
        finally:
            os.close(read_end)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _follow(proc, read_end, state, rows, time_limit):
    entry = check = None
    ready = False
    buffer = b""
    selector = selectors.DefaultSelector()
    selector.register(read_end, selectors.EVENT_READ)
    deadline = time.monotonic() + max(time_limit, _STARTUP_SECONDS)
    while True:
        if not selector.select(timeout=max(deadline - time.monotonic(), 0)):
            os.killpg(proc.pid, signal.SIGKILL)
            if not ready:
                return f"the check process did not start within {_STARTUP_SECONDS:g} s", None, None
            return f"no answer within {time_limit:g} s: the check was stopped", entry, check
        chunk = os.read(read_end, 65536)
        if not chunk:
            code = proc.wait()
            return f"the process ended during this check (exit status {code})", entry, check
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            deadline = time.monotonic() + time_limit
            if "ready" in message:
                ready = True
            elif "entry" in message:
                entry, check = message["entry"], None
            elif "start" in message:
                check = message["start"]
            elif "row" in message:
                rows.append(message["row"])
                state["done"][entry] = state["done"].get(entry, 0) + 1
                check = None
            elif "done" in message:
                return None, None, None


def _main(state):
    """Run, in the child, what ``state`` says is left, reporting on the pipe."""
    from skpapers.exceptions import SensitiveFeaturesWarning, SkpapersPluginWarning
    from skpapers.testing import _dist_specs, _entry_units

    out = os.fdopen(int(os.environ.pop(_FD_ENV)), "w", buffering=1)

    def send(message):
        out.write(json.dumps(message, default=str) + "\n")

    send({"ready": True})  # the imports above are done: the time limit starts here

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkpapersPluginWarning)
        warnings.simplefilter("ignore", SensitiveFeaturesWarning)
        for declared in _dist_specs(state["dist"]):
            if declared.name in state["skip_entries"]:
                continue
            send({"entry": declared.name})
            done = state["done"].get(declared.name, 0)
            for index, (_, step, run) in enumerate(_entry_units(declared, state["xfails"])):
                if index >= done:
                    send({"start": step})
                    send({"row": run()})
    send({"done": True})
    out.close()


if __name__ == "__main__":
    _main(json.loads(sys.argv[1]))
