# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared test configuration: data location, headless plotting, the test plugin.

The test plugin ``tests/plugins/skpapers_dummy_plugin`` (one working estimator,
one deliberately broken entry, one name clash with a built-in) is installed for
the test session only: its module and a ``.dist-info`` folder are written to a
temporary directory that is put on ``sys.path`` (and on ``PYTHONPATH`` for the
command-line tests that start a subprocess), then removed at the end of the
session. Nothing is left in the user's environment.
"""

import importlib.metadata
import os
import shutil
import sys
import tempfile
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

_ROOT = Path(__file__).resolve().parents[1]
_SHARED_DATA = _ROOT.parent / "shared" / "data"
if "SKPAPERS_DATA" not in os.environ and _SHARED_DATA.is_dir():
    os.environ["SKPAPERS_DATA"] = str(_SHARED_DATA)

_PLUGIN_SOURCE = _ROOT / "tests" / "plugins" / "skpapers_dummy_plugin"
_PLUGIN_DIST = "skpapers-dummy-plugin"
_session_site = {}


def _read_project(pyproject):
    """Name, version and ``skpapers.estimators`` entry points of ``pyproject.toml``."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    entries = project["entry-points"]["skpapers.estimators"]
    return project["name"], project["version"], entries


def _install_plugin(site):
    """Write the test plugin as an installed distribution under ``site``."""
    name, version, entries = _read_project(_PLUGIN_SOURCE / "pyproject.toml")
    package = name.replace("-", "_")
    shutil.copytree(
        _PLUGIN_SOURCE / package,
        site / package,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    info = site / f"{package}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = "".join(f"{key} = {value}\n" for key, value in entries.items())
    (info / "entry_points.txt").write_text(f"[skpapers.estimators]\n{lines}", encoding="utf-8")
    (info / "top_level.txt").write_text(f"{package}\n", encoding="utf-8")
    (info / "INSTALLER").write_text("skpapers-tests\n", encoding="utf-8")


def _plugin_installed():
    try:
        importlib.metadata.distribution(_PLUGIN_DIST)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def pytest_configure(config):
    """Install the test plugin into a temporary site directory for this session."""
    if _plugin_installed():  # installed by hand (``pip install ./tests/plugins/...``)
        return
    site = Path(tempfile.mkdtemp(prefix="skpapers-test-plugin-"))
    _install_plugin(site)
    _session_site.update(
        path=site,
        sys_path=list(sys.path),
        pythonpath=os.environ.get("PYTHONPATH"),
    )
    sys.path.insert(0, str(site))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(site), *filter(None, [_session_site["pythonpath"]])]
    )
    importlib.invalidate_caches()
    if "skpapers.registry" in sys.modules:
        sys.modules["skpapers.registry"].refresh()


def pytest_unconfigure(config):
    """Remove the temporary installation; the environment is as it was."""
    site = _session_site.pop("path", None)
    if site is None:
        return
    with_site = str(site)
    sys.path[:] = [entry for entry in sys.path if entry != with_site]
    pythonpath = _session_site.pop("pythonpath")
    if pythonpath is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = pythonpath
    for module in [m for m in sys.modules if m.split(".")[0] == "skpapers_dummy_plugin"]:
        del sys.modules[module]
    importlib.invalidate_caches()
    if "skpapers.registry" in sys.modules:
        sys.modules["skpapers.registry"].refresh()
    shutil.rmtree(site, ignore_errors=True)


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test drew (the displays' tests draw many)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


@pytest.fixture
def data_home():
    """Directory of the real data sets; skips the test when it is absent."""
    path = Path(os.environ.get("SKPAPERS_DATA", _SHARED_DATA))
    if not path.is_dir():
        pytest.skip(f"real data directory {path} is absent (set SKPAPERS_DATA)")
    return path
