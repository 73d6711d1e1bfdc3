# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Progress reports of long fits through :mod:`logging`, one convention for all methods.

Every method logs to ``logging.getLogger("skpapers.<method>")``. The estimator's
``verbose`` parameter sets what is reported: 0 nothing, 1 one line per stage
with the elapsed seconds, 2 also per-iteration lines, at most one every
``interval`` seconds (the objective, and why an iterative solver stopped). When
``verbose > 0`` and no handler is configured anywhere (neither on the
``skpapers`` loggers nor on the root logger), a handler printing to standard
error is attached to the ``skpapers`` logger, so a plain ``verbose=1`` shows
something, while an application that configured :mod:`logging` keeps full
control of where the lines go.
"""

import logging
import sys
import time

__all__ = ["Progress"]

_ROOT = "skpapers"


def _ensure_handler():
    logger = logging.getLogger(_ROOT)
    if not logger.hasHandlers():
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
        logger.addHandler(handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)


class Progress:
    """Stage and iteration reports of one fit.

    Parameters
    ----------
    method : str
        Logger suffix, e.g. ``"transport"`` for ``skpapers.transport``.
    verbose : int
        0 silent, 1 stages, 2 stages and iterations.
    interval : float, default=2.0
        Smallest number of seconds between two iteration lines.

    Examples
    --------
    >>> progress = Progress("example", verbose=0)
    >>> progress.stage("whitening")  # silent at verbose=0
    >>> progress.elapsed() >= 0
    True
    """

    def __init__(self, method, verbose, interval=2.0):
        self.logger = logging.getLogger(f"{_ROOT}.{method}")
        self.verbose = int(verbose or 0)
        self.interval = interval
        self.start = time.perf_counter()
        self._last_iteration = -float("inf")
        if self.verbose > 0:
            _ensure_handler()

    def elapsed(self):
        """Seconds since the fit started."""
        return time.perf_counter() - self.start

    def stage(self, message):
        """Report a stage (``verbose >= 1``), with the elapsed seconds."""
        if self.verbose >= 1:
            self.logger.info("%s (%.1f s)", message, self.elapsed())

    def iteration(self, message, *, force=False):
        """Report an iteration (``verbose >= 2``), at most once per ``interval``.

        ``force=True`` reports it whatever the time since the last line (use it
        for the final iteration and the stopping reason).
        """
        if self.verbose < 2:
            return
        now = time.perf_counter()
        if force or now - self._last_iteration >= self.interval:
            self._last_iteration = now
            self.logger.info("%s (%.1f s)", message, now - self.start)
