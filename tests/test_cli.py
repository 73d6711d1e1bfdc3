# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The command line: ``demo`` runs every section, ``list`` and ``check`` work."""

import importlib
import re
import subprocess
import sys

from skpapers import __version__
from skpapers._demo import SECTIONS


def _demo(*args):
    return subprocess.run(
        [sys.executable, "-m", "skpapers", "demo", *args], capture_output=True, text=True
    )


def test_demo_tells_each_method_and_its_headline_result(tmp_path):
    result = _demo("--plots", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "FAILED" not in out and "Traceback" not in result.stderr
    for name in SECTIONS:
        module = importlib.import_module(f"skpapers._demo.{name}")
        assert module.TITLE in out
        # the code shown is the code that ran, line for line
        for line in module.CODE.strip().splitlines():
            assert line.strip() in out
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
    assert out.count("  Data:") == out.count("  What it did:") == out.count("  Results:") == 4
    # the headline numbers are there, next to the naive alternative, and good
    restored, scrambled, pca = map(
        int, re.search(r"restored (\d+) of (\d+) scrambled rows.*?: (\d+)\)", out, re.S).groups()
    )
    assert restored >= 0.9 * scrambled and pca < restored
    ours, alone = map(float, re.search(r"transport cost ([\d.]+) vs ([\d.]+)", out).groups())
    assert ours < alone
    # no verification jargon, no rst markup
    for word in (r"\bexpected\b", r"\bprototype\b", r"\bspec\b", "``", ":class:"):
        assert re.search(word, out) is None, word


def test_demo_one_method_and_clean_help():
    result = _demo("fair_hierarchical")
    assert result.returncode == 0, result.stderr
    assert "FairHierarchicalClustering" in result.stdout
    assert "UnlabeledPCA" not in result.stdout
    shares = re.search(r"(\d+)% to (\d+)% vs (\d+)% to (\d+)%", result.stdout)
    fair_low, fair_high, plain_low, plain_high = map(int, shares.groups())
    assert fair_high - fair_low < plain_high - plain_low
    for args in ([], ["demo"]):
        text = subprocess.run(
            [sys.executable, "-m", "skpapers", *args, "--help"], capture_output=True, text=True
        ).stdout
        assert "usage: python -m skpapers" in text
        assert "``" not in text and ":class:" not in text and ":func:" not in text
    assert "--plots DIR" in text and "METHOD" in text


def test_demo_rejects_unknown_method_and_unwritable_plots(tmp_path):
    result = _demo("no_such_method")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    result = _demo("upca", "--plots", str(blocker / "figures"))
    assert result.returncode == 2
    assert "cannot write figures" in result.stderr and "Traceback" not in result.stderr


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
