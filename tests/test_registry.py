# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""Registry behaviour with fake plugin distributions on ``sys.path`` and a real one."""

import importlib.metadata
import subprocess
import sys
import textwrap
import warnings

import pytest

from skpapers import registry
from skpapers.exceptions import SkpapersPluginWarning

GOOD_MODULE = '''
from sklearn.base import BaseEstimator


class GoodEstimator(BaseEstimator):
    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fit(self, X, y=None):
        return self


class OtherEstimator(GoodEstimator):
    pass



NOT_AN_ESTIMATOR = 42
'''


@pytest.fixture
def make_dist(tmp_path, monkeypatch):
    """Write ``<dist>-0.1.dist-info`` folders and modules, put them on ``sys.path``.

    The real test plugin, if installed, is hidden so that only the fakes count.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    real = registry._entry_points
    monkeypatch.setattr(
        registry,
        "_entry_points",
        lambda group: [ep for ep in real(group) if ep.dist.name != "skpapers-dummy-plugin"],
    )
    created = []

    def make(dist, entries, modules=None):
        info = tmp_path / f"{dist.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        lines = "\n".join(f"{name} = {value}" for name, value in entries.items())
        (info / "entry_points.txt").write_text(f"[{registry.GROUP}]\n{lines}\n")
        for name, source in (modules or {}).items():
            (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
            created.append(name)
        registry.refresh()

    yield make
    for name in created:
        sys.modules.pop(name, None)
    registry.refresh()

BUILTIN_NAMES = ["fair_hierarchical", "robust_sim", "transport_clustering", "upca"]


def _plugin_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, SkpapersPluginWarning)]


def test_builtins_are_declared_as_entry_points_of_skpapers():
    declared = {
        ep.name: ep.value
        for ep in importlib.metadata.entry_points(group=registry.GROUP)
        if ep.dist.name == "skpapers"
    }
    assert declared == {
        "upca": "skpapers.decomposition:UnlabeledPCA",
        "fair_hierarchical": "skpapers.cluster:FairHierarchicalClustering",
        "transport_clustering": "skpapers.cluster:TransportClustering",
        "robust_sim": "skpapers.linear_model:RobustSingleIndexRegressor",
    }
    assert declared == registry._BUILTINS  # the registry's own table says the same
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkpapersPluginWarning)
        assert registry.get("skpapers:upca") is registry.get("upca")


def test_import_is_lazy():
    code = (
        "import sys, skpapers\n"
        "assert 'skpapers.registry' not in sys.modules\n"
        "from skpapers import registry\n"
        "names = registry.available()\n"
        "assert 'upca' in names, names\n"
        "heavy = [m for m in sys.modules if m.startswith(('skpapers.cluster',"
        " 'skpapers.decomposition', 'skpapers.linear_model', 'skpapers_dummy_plugin'))]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-W", "ignore", "-c", code], check=True)


def test_plugin_is_found_created_and_listed(make_dist):
    make_dist("fake-good", {"good": "fake_good_mod:GoodEstimator"}, {"fake_good_mod": GOOD_MODULE})
    assert "good" in registry.available()
    assert "fake_good_mod" not in sys.modules  # metadata only until asked
    spec = next(s for s in registry.specs() if s.name == "good")
    assert (spec.dist, spec.version, spec.builtin) == ("fake-good", "0.1", False)
    est = registry.create("good", alpha=2.0)
    assert type(est).__name__ == "GoodEstimator" and est.alpha == 2.0
    assert registry.get("fake-good:good") is type(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkpapersPluginWarning)
        names = dict(registry.all_estimators())
        builtins = dict(registry.all_estimators(include_plugins=False))
    assert "good" in names and "good" not in builtins and "upca" in builtins


def test_clash_with_builtin_keeps_builtin(make_dist):
    make_dist(
        "fake-clash", {"upca": "fake_clash_mod:OtherEstimator"}, {"fake_clash_mod": GOOD_MODULE}
    )
    with pytest.warns(SkpapersPluginWarning) as record:
        cls = registry.get("upca")
    assert cls.__module__.startswith("skpapers.")
    messages = _plugin_warnings(record)
    assert len(messages) == 1
    assert "'skpapers'" in messages[0] and "'fake-clash'" in messages[0]
    assert registry.get("fake-clash:upca").__module__ == "fake_clash_mod"
    shadowed = next(s for s in registry.specs() if s.name == "fake-clash:upca")
    assert shadowed.shadowed_by == "skpapers"


def test_clash_between_plugins_first_sorted_distribution_wins(make_dist):
    make_dist("zzz-plugin", {"shared": "zzz_mod:GoodEstimator"}, {"zzz_mod": GOOD_MODULE})
    make_dist("aaa-plugin", {"shared": "aaa_mod:OtherEstimator"}, {"aaa_mod": GOOD_MODULE})
    with pytest.warns(SkpapersPluginWarning, match="'aaa-plugin'.*'zzz-plugin'"):
        assert registry.get("shared").__module__ == "aaa_mod"
    assert registry.get("zzz-plugin:shared").__module__ == "zzz_mod"


def test_identical_duplicate_is_dropped_silently(make_dist):
    make_dist("dup-a", {"upca": "skpapers.decomposition:UnlabeledPCA"})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert registry.available().count("upca") == 1
        assert not [n for n in registry.available() if n.endswith(":upca")]
    assert not _plugin_warnings(record)


def test_broken_plugins_warn_once_and_the_rest_loads(make_dist):
    make_dist(
        "fake-broken",
        {
            "missing": "fake_missing_mod:Anything",
            "raises": "fake_raises_mod:Anything",
            "not_estimator": "fake_ok_mod:NOT_AN_ESTIMATOR",
            "fine": "fake_ok_mod:GoodEstimator",
        },
        {
            "fake_missing_mod": "import a_module_that_does_not_exist\n",
            "fake_raises_mod": "raise RuntimeError('boom at import')\n",
            "fake_ok_mod": GOOD_MODULE,
        },
    )
    with pytest.warns(SkpapersPluginWarning) as record:
        names = dict(registry.all_estimators())
    messages = _plugin_warnings(record)
    assert len(messages) == 3
    assert any("ModuleNotFoundError" in m and "'fake-broken 0.1'" in m for m in messages)
    assert any("RuntimeError: boom at import" in m for m in messages)
    assert any("not a concrete scikit-learn estimator" in m for m in messages)
    assert "fine" in names and "upca" in names
    assert not {"missing", "raises", "not_estimator"} & set(names)
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        registry.all_estimators()
    assert not _plugin_warnings(again), "warned once only"
    with pytest.raises(registry.PluginLoadError, match="fake-broken.*boom at import") as info:
        registry.get("raises")
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(registry.PluginLoadError):
        registry.all_estimators(on_error="raise")


def test_disable_plugins_hides_third_party_entries(make_dist, monkeypatch):
    make_dist("fake-good", {"good": "fake_good_mod:GoodEstimator"}, {"fake_good_mod": GOOD_MODULE})
    monkeypatch.setenv("SKPAPERS_DISABLE_PLUGINS", "1")
    registry.refresh()
    assert "good" not in registry.available()
    assert {"upca", "robust_sim"} <= set(registry.available())
    assert all(spec.builtin for spec in registry.specs())


def test_entry_points_seam_and_filters(monkeypatch):
    fake = importlib.metadata.EntryPoints(
        [
            importlib.metadata.EntryPoint(
                "kmeans", "sklearn.cluster:KMeans", registry.GROUP
            ),
            importlib.metadata.EntryPoint(
                "ridge", "sklearn.linear_model:Ridge", registry.GROUP
            ),
        ]
    )
    monkeypatch.setattr(registry, "_entry_points", lambda group: fake.select(group=group))
    registry.refresh()
    try:
        with pytest.warns(SkpapersPluginWarning, match="install the package"):
            names = registry.available()
        # no metadata declares the built-ins here: they come from skpapers' own table
        assert names == sorted([*BUILTIN_NAMES, "kmeans", "ridge"])
        clusterers = [n for n, _ in registry.all_estimators("cluster")]
        assert clusterers == ["fair_hierarchical", "kmeans", "transport_clustering"]
        assert [n for n, _ in registry.all_estimators(["regressor"])] == ["ridge", "robust_sim"]
        with pytest.raises(ValueError, match="Unknown type_filter"):
            registry.all_estimators("forest")
        with pytest.raises(ValueError, match="Did you mean 'kmeans'"):
            registry.get("kmean")
    finally:
        monkeypatch.undo()
        registry.refresh()


def _dummy_installed():
    try:
        importlib.metadata.distribution("skpapers-dummy-plugin")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


plugin_install = pytest.mark.skipif(
    not _dummy_installed(),
    reason="install it with: pip install ./tests/plugins/skpapers_dummy_plugin",
)


def _cli(*args, env=None):
    import os

    return subprocess.run(
        [sys.executable, "-m", "skpapers", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.plugin_install
@plugin_install
def test_cli_list_with_installed_plugin():
    result = _cli("list")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[2:]}
    assert {"upca", "fair_hierarchical", "transport_clustering", "robust_sim"} <= set(rows)
    assert rows["mean_centerer"].split()[-1] == "ok"
    assert "broken: ModuleNotFoundError" in rows["broken"]
    assert "shadowed by skpapers" in rows["skpapers-dummy-plugin:upca"]
    assert result.stderr.count("could not load plugin 'broken'") == 1
    hidden = _cli("list", env={"SKPAPERS_DISABLE_PLUGINS": "1"})
    assert "mean_centerer" not in hidden.stdout and "upca" in hidden.stdout


@pytest.mark.plugin_install
@plugin_install
def test_cli_check_reports_sklearn_checks_per_estimator():
    result = _cli("check", "skpapers-dummy-plugin", "--verbose")
    assert result.returncode == 1  # the deliberately broken entry fails to load
    assert "check_estimators_pickle" in result.stdout
    assert "check_registry_roundtrip" in result.stdout
    assert "broken: 1 failed" in result.stdout
    summary = next(line for line in result.stdout.splitlines() if line.startswith("mean_centerer:"))
    assert "passed" in summary and "failed" not in summary
