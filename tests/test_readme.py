# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The README is a tested document: its examples run, its claims match the code."""

import doctest
import re
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
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
    assert runner.tries > 0


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


def _ci_command(name):
    text = README.read_text(encoding="utf-8")
    found = re.findall(rf"<!-- ci: {name}\b[^>]*-->\s*```bash\n(.*?)```", text, re.S)
    assert len(found) == 1, f"one command marked 'ci: {name}' (read by .ci/run)"
    return found[0].strip()


def test_readme_commands_start_from_a_fresh_environment():
    # .ci/run runs these verbatim in fresh clones: each must make its own venv
    for name, tail in [
        ("demo", "pip install . && python -m skpapers demo"),
        ("tests", 'pip install -e ".[dev]" && python -m pytest'),
        ("docs", "python -m sphinx -W -b html docs docs/_build/html"),
    ]:
        command = _ci_command(name)
        assert "\n" not in command
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && ")
        assert command.endswith(tail)
    assert "pip install ./tests/plugins" not in README.read_text(encoding="utf-8")


def test_docs_extra_installs_what_the_gallery_imports():
    pyproject = (README.parent / "pyproject.toml").read_text()
    docs = re.search(r"^docs = \[(.*?)^\]", pyproject, re.S | re.M).group(1)
    gallery = " ".join(p.read_text() for p in (README.parent / "examples").rglob("*.py"))
    if "dask" in gallery:
        assert "skpapers[dask]" in docs
    for name in ("matplotlib", "sphinx-gallery"):
        assert name in docs


def test_readme_claims_set_output_only_where_there_is_transform():
    from skpapers.cluster import FairHierarchicalClustering, TransportClustering
    from skpapers.decomposition import UnlabeledPCA
    from skpapers.linear_model import RobustSingleIndexRegressor

    text = README.read_text(encoding="utf-8")
    claim = text[text.index("All of them work in") : text.index("support\n`set_output")]
    for cls in (
        UnlabeledPCA, FairHierarchicalClustering, TransportClustering, RobustSingleIndexRegressor
    ):
        assert (f"`{cls.__name__}`" in claim) == hasattr(cls, "transform"), cls.__name__
