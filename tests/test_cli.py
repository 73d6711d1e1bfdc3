# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The command line: ``demo`` runs every section, ``list`` and ``check`` work."""

import importlib
import subprocess
import sys

from skpapers import __version__
from skpapers._demo import SECTIONS


def test_demo_runs_every_method_and_reports():
    result = subprocess.run(
        [sys.executable, "-m", "skpapers", "demo"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for name in SECTIONS:
        assert importlib.import_module(f"skpapers._demo.{name}").TITLE in result.stdout
    assert "FAILED" not in result.stdout


def test_list_shows_builtins_with_their_distribution():
    result = subprocess.run(
        [sys.executable, "-m", "skpapers", "list", "--no-load"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[2:]}
    for name in ("upca", "fair_hierarchical", "transport_clustering", "robust_sim"):
        assert rows[name][2:4] == ["skpapers", __version__]


def test_check_unknown_distribution_is_a_clear_error():
    result = subprocess.run(
        [sys.executable, "-m", "skpapers", "check", "no-such-dist"],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "registers no estimator" in result.stderr
