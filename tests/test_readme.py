# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The README is a tested document: its examples run, its claims match the code."""

import doctest
import re
import time
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_FENCE = re.compile(r"(<!-- not run[^>]*-->\s*)?```(\w*)\n(.*?)```", re.S)


def _python_blocks():
    text = README.read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        skipped, language, code = match.groups()
        if language == "python" and not skipped:
            line = text.count("\n", 0, match.start()) + 2
            blocks.append(pytest.param(code, line, id=f"line{line}"))
    return blocks


BLOCKS = _python_blocks()


def test_readme_has_an_example_per_method():
    codes = "\n".join(block.values[0] for block in BLOCKS)
    for name in (
        "UnlabeledPCA",
        "FairHierarchicalClustering",
        "TransportClustering",
        "RobustSingleIndexRegressor",
    ):
        assert f"import {name}" in codes


@pytest.mark.parametrize(("code", "line"), BLOCKS)
def test_readme_example_runs(code, line):
    if ">>>" not in code:  # a plain script block
        exec(compile(code, f"README.md:{line}", "exec"), {})  # noqa: S102
        return
    test = doctest.DocTestParser().get_doctest(code, {}, f"README.md:{line}", str(README), line)
    runner = doctest.DocTestRunner(
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False
    )
    out = []
    start = time.perf_counter()
    runner.run(test, out=out.append)
    seconds = time.perf_counter() - start
    assert runner.failures == 0, "".join(out)
    assert runner.tries > 0
    # README examples are meant to be quick; generous bound for a loaded machine.
    assert seconds < 30, f"README example at line {line} took {seconds:.1f} s"


def test_readme_lists_exactly_the_expected_failures():
    from skpapers.testing import PER_ESTIMATOR_XFAIL_CHECKS

    text = README.read_text(encoding="utf-8")
    table = text[text.index("| estimator | expected failure |") :].split("\n\n")[0]
    rows = [row.split("|")[1:3] for row in table.splitlines()[2:]]
    listed = {est.strip(" `"): check.strip(" `") for est, check in rows}
    classes = {
        "upca": "UnlabeledPCA",
        "fair_hierarchical": "FairHierarchicalClustering",
        "transport_clustering": "TransportClustering",
        "robust_sim": "RobustSingleIndexRegressor",
    }
    for name, cls in classes.items():
        expected = ", ".join(sorted(PER_ESTIMATOR_XFAIL_CHECKS.get(name, {}))) or "none"
        assert listed[cls] == expected, cls


def test_readme_commands():
    text = README.read_text(encoding="utf-8")
    assert "python -m skpapers demo" in text
    assert 'pip install -e ".[dev]" && python -m pytest' in text
    assert "pip install ./tests/plugins" not in text  # the suite installs its plugin itself
