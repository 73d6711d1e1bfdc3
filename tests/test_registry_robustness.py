# Authors: The skpapers developers
# SPDX-License-Identifier: BSD-3-Clause
"""The registry and the command line with broken distributions and plugins.

Every distribution is written into ``tmp_path`` (``<name>-0.1.dist-info`` plus its
modules) and put on ``sys.path``; nothing is installed.
"""

import os
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skpapers
from skpapers import registry
from skpapers.exceptions import SkpapersPluginWarning

ROOT = Path(__file__).resolve().parents[1]
BUILTINS = {"upca", "fair_hierarchical", "transport_clustering", "robust_sim"}

ESTIMATOR_MODULE = """
from sklearn.base import BaseEstimator


class GoodEstimator(BaseEstimator):
    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fit(self, X, y=None):
        return self
"""


def write_dist(root, dist, entry_points, *, metadata=None, modules=None):
    """Write ``<dist>-0.1.dist-info`` with raw file contents (str or bytes) into ``root``.

    ``metadata=None`` writes a valid METADATA, ``False`` writes none.
    """
    info = Path(root) / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(exist_ok=True)
    if metadata is None:
        metadata = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n"
    files = {"METADATA": metadata, "entry_points.txt": entry_points}
    for name, content in files.items():
        path = info / name
        if content is False:
            path.unlink(missing_ok=True)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    for name, source in (modules or {}).items():
        (Path(root) / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return info


def section(*lines):
    return "\n".join([f"[{registry.GROUP}]", *lines, ""])


@pytest.fixture
def site(tmp_path, monkeypatch):
    """``tmp_path`` on ``sys.path``; the installed test plugin is hidden, modules forgotten."""
    monkeypatch.syspath_prepend(str(tmp_path))
    real = registry._entry_points
    monkeypatch.setattr(
        registry,
        "_entry_points",
        lambda group: [ep for ep in real(group) if ep.dist.name != "skpapers-dummy-plugin"],
    )
    before = set(sys.modules)
    registry.refresh()
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("brk_"):
            del sys.modules[name]
    registry.refresh()


def exercise_api():
    """Call every registry entry point; return the plugin warnings they emitted."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        names = registry.available()
        assert BUILTINS <= set(names), names
        assert BUILTINS <= {spec.name for spec in registry.specs()}
        assert registry.get("upca").__name__ == "UnlabeledPCA"
        assert registry.get("skpapers:upca").__name__ == "UnlabeledPCA"
        assert BUILTINS <= set(dict(registry.all_estimators()))
    unexpected = [w for w in record if not issubclass(w.category, SkpapersPluginWarning)]
    assert not unexpected, [str(w.message) for w in unexpected]
    return [str(w.message) for w in record]


def only_one_naming(messages, needle):
    found = [m for m in messages if needle in m]
    assert len(found) == 1, messages
    return found[0]


# -- unreadable metadata ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "metadata", [False, "", "Metadata-Version: 2.1\n"], ids=["none", "empty", "no-name"]
)
def test_missing_or_empty_metadata_is_one_warning(site, metadata):
    info = write_dist(
        site,
        "brk-nometa",
        section("nometa = brk_nometa:GoodEstimator"),
        metadata=metadata,
        modules={"brk_nometa": ESTIMATOR_MODULE},
    )
    write_dist(
        site,
        "brk-fine",
        section("fine = brk_fine:GoodEstimator"),
        modules={"brk_fine": ESTIMATOR_MODULE},
    )
    registry.refresh()
    messages = exercise_api()
    message = only_one_naming(messages, str(info))
    assert "METADATA" in message
    assert "nometa" not in registry.available()
    assert registry.get("fine").__module__ == "brk_fine"
    assert exercise_api() == []  # once only


def test_line_without_equals_is_one_warning_and_the_valid_lines_load(site):
    write_dist(
        site,
        "brk-noeq",
        section("good = brk_noeq:GoodEstimator", "a line without an equals sign", "x ="),
        modules={"brk_noeq": ESTIMATOR_MODULE},
    )
    registry.refresh()
    message = only_one_naming(exercise_api(), "brk-noeq 0.1")
    assert "a line without an equals sign" in message and "'x ='" in message
    assert registry.get("good").__module__ == "brk_noeq"


def test_malformed_other_section_is_not_our_business(site):
    write_dist(site, "brk-other", "[console_scripts]\nno equals here\n")
    registry.refresh()
    assert exercise_api() == []


@pytest.mark.parametrize("which", ["entry_points.txt", "METADATA"])
def test_non_utf8_file_is_one_warning(site, which):
    entry_points = section("latin = brk_latin:GoodEstimator")
    metadata = "Metadata-Version: 2.1\nName: brk-latin\nVersion: 0.1\nSummary: caf\u00e9\n"
    if which == "entry_points.txt":
        entry_points = entry_points.encode() + "# caf\u00e9\n".encode("latin-1")
    else:
        metadata = metadata.encode("latin-1")
    info = write_dist(
        site, "brk-latin", entry_points, metadata=metadata, modules={"brk_latin": ESTIMATOR_MODULE}
    )
    registry.refresh()
    only_one_naming(exercise_api(), str(info))
    assert "latin" not in registry.available()


def test_non_utf8_file_of_an_unrelated_distribution_is_ignored(site):
    write_dist(site, "brk-unrelated", b"[console_scripts]\ncaf\xe9 = somewhere:main\n")
    registry.refresh()
    assert exercise_api() == []


def test_disable_plugins_survives_broken_distributions(site, monkeypatch):
    write_dist(site, "brk-noeq", section("no equals"), metadata=False)
    write_dist(site, "brk-latin", b"[console_scripts]\ncaf\xe9\n")
    monkeypatch.setenv("SKPAPERS_DISABLE_PLUGINS", "1")
    registry.refresh()
    assert exercise_api() == []
    assert set(registry.available()) == BUILTINS


# -- plugins raising BaseException at import -------------------------------------------------

RAISING = {
    "sys_exit": "import sys\nsys.exit(3)\n",
    "keyboard_interrupt": "raise KeyboardInterrupt('raised by the plugin, no signal')\n",
    "base_exception": "class Odd(BaseException):\n    pass\n\n\nraise Odd('odd')\n",
}


@pytest.mark.parametrize("kind", sorted(RAISING))
def test_plugin_raising_base_exception_is_broken_for_that_entry_only(site, kind):
    write_dist(
        site,
        "brk-raise",
        section(f"bad = brk_raise_{kind}:Anything", "fine = brk_fine:GoodEstimator"),
        modules={f"brk_raise_{kind}": RAISING[kind], "brk_fine": ESTIMATOR_MODULE},
    )
    registry.refresh()
    messages = exercise_api()
    message = only_one_naming(messages, "could not load plugin 'bad'")
    assert "'brk-raise 0.1'" in message
    assert "fine" in dict(registry.all_estimators())
    with pytest.raises(registry.PluginLoadError, match="brk-raise") as info:
        registry.get("bad")
    expected = {"sys_exit": SystemExit, "keyboard_interrupt": KeyboardInterrupt}
    assert isinstance(info.value.__cause__, expected.get(kind, BaseException))


@pytest.mark.skipif(
    not hasattr(signal, "raise_signal")
    or signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="needs Python's own SIGINT handler in the main thread",
)
@pytest.mark.parametrize("swallowed", [False, True], ids=["raised", "swallowed-by-plugin"])
def test_real_sigint_during_import_is_an_interrupt(site, swallowed):
    body = "signal.raise_signal(signal.SIGINT)"
    if swallowed:
        body = f"try:\n    {body}\nexcept KeyboardInterrupt:\n    pass"
    source = f"import signal\n\n{body}\n\n\nclass Anything:\n    pass\n"
    write_dist(
        site, "brk-sigint", section("ctrlc = brk_sigint:Anything"), modules={"brk_sigint": source}
    )
    registry.refresh()
    for _ in range(2):  # not cached: asking again imports again
        with pytest.raises(KeyboardInterrupt):
            registry.get("ctrlc")
        sys.modules.pop("brk_sigint", None)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# -- names and warnings ----------------------------------------------------------------------


def test_third_party_qualified_name_cannot_shadow_a_builtin(site):
    write_dist(
        site,
        "brk-qualified",
        section(
            "skpapers:upca = brk_qualified:GoodEstimator",
            "other:thing = brk_qualified:GoodEstimator",
            "fine = brk_qualified:GoodEstimator",
        ),
        modules={"brk_qualified": ESTIMATOR_MODULE},
    )
    registry.refresh()
    messages = exercise_api()
    assert "reserved" in only_one_naming(messages, "'skpapers:upca'")
    only_one_naming(messages, "'other:thing'")
    assert registry.get("skpapers:upca").__module__.startswith("skpapers.")
    assert {"skpapers:upca", "other:thing"}.isdisjoint(registry.available())
    assert registry.get("brk-qualified:fine").__module__ == "brk_qualified"


def test_warnings_turned_into_errors_do_not_break_builtin_lookups(site, capsys):
    write_dist(
        site,
        "brk-strict",
        section("upca = brk_strict:GoodEstimator", "bad = brk_strict_missing:Anything"),
        modules={"brk_strict": ESTIMATOR_MODULE},
    )
    registry.refresh()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # the cache is not poisoned by the first, raising, warning
            assert registry.get("upca").__module__.startswith("skpapers.")
            assert BUILTINS <= set(registry.available())
            assert BUILTINS <= set(dict(registry.all_estimators()))
        with pytest.raises(registry.PluginLoadError):
            registry.get("bad")
    err = capsys.readouterr().err
    assert err.count("SkpapersPluginWarning") == 2, err
    assert err.count("'brk-strict'") == 1 and err.count("could not load plugin 'bad'") == 1


# -- property: malformed metadata never raises -----------------------------------------------

_LINE = st.one_of(
    st.just(f"[{registry.GROUP}]"),
    st.sampled_from(["[console_scripts]", "[", "]", "[]", "#", ";", "=", " = ", ":"]),
    st.builds(
        lambda name, sep, value: f"{name}{sep}{value}",
        st.one_of(st.sampled_from(["upca", "skpapers:upca", "x", ""]), st.text(max_size=8)),
        st.sampled_from(["=", " = ", "", "=="]),
        st.one_of(
            st.sampled_from(
                ["skpapers.decomposition:UnlabeledPCA", "brk_hyp_nomod:X", "brk_hyp_nomod", ""]
            ),
            st.text(max_size=10).map(lambda text: f"brk_hyp_nomod{text}"),
        ),
    ),
)
_TEXT = st.lists(_LINE, max_size=6).map("\n".join)
_CONTENT = st.one_of(
    _TEXT.map(str.encode), st.binary(max_size=40), _TEXT.map(lambda t: t.encode() + b"\xff")
)
_METADATA = st.one_of(
    st.none(),
    st.just(False),
    st.binary(max_size=40),
    st.text(max_size=20).map(lambda name: f"Metadata-Version: 2.1\nName: {name}\n".encode()),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entry_points=_CONTENT, metadata=_METADATA)
def test_malformed_metadata_never_raises(site, entry_points, metadata):
    write_dist(site, "brk-hyp", entry_points, metadata=metadata)
    registry.refresh()
    exercise_api()


# -- command line ----------------------------------------------------------------------------


def cli(site, *args, env=None, **kwargs):
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    environ.pop("PYTHONIOENCODING", None)
    environ.update(env or {})
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "skpapers", *args],
        stderr=subprocess.PIPE,
        env=environ,
        cwd=ROOT,
        **{"timeout": 120, **kwargs},
    )


def test_cli_list_into_a_closed_pipe_ends_quietly(site):
    write_dist(site, "brk-many", section(*(f"e{i} = brk_many:E" for i in range(2000))))
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skpapers", "list", "--no-load"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environ,
        cwd=ROOT,
    )
    proc.stdout.readline()  # like head -1
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err, err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full exists on Linux only")
def test_cli_list_to_a_full_device_is_a_short_error(site):
    with open("/dev/full", "wb") as full:
        result = cli(site, "list", "--no-load", stdout=full, env={"PYTHONUNBUFFERED": ""})
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert "No space left on device" in err
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_cli_list_with_odd_plugins_under_an_ascii_locale(site):
    # A non-ASCII name, a plugin printing at import, a plugin calling sys.exit at import.
    write_dist(
        site,
        "brk-odd",
        section(
            "caf\u00e9 = brk_odd_fine:GoodEstimator",
            "chatty = brk_odd_chatty:GoodEstimator",
            "exits = brk_odd_exit:Anything",
        ),
        modules={
            "brk_odd_fine": ESTIMATOR_MODULE,
            "brk_odd_chatty": "print('HELLO FROM PLUGIN')\n" + ESTIMATOR_MODULE,
            "brk_odd_exit": "import sys\n\nsys.exit(5)\n",
        },
    )
    result = cli(site, "list", env={"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"})
    out, err = result.stdout.decode("ascii"), result.stderr.decode("ascii")
    assert result.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["name", "class"], out
    assert "HELLO FROM PLUGIN" not in out and "HELLO FROM PLUGIN" in err
    rows = {line.split()[0]: line for line in lines[2:]}
    assert BUILTINS <= set(rows), out
    assert rows["caf\\xe9"].split()[-1] == "ok", out
    assert rows["chatty"].split()[-1] == "ok", out
    assert "broken: SystemExit" in rows["exits"], out


def test_cli_list_real_ctrl_c_at_import_interrupts(site):
    source = "import os, signal, time\n\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n"
    write_dist(
        site, "brk-ctrlc", section("ctrlc = brk_ctrlc:Anything"), modules={"brk_ctrlc": source}
    )
    # the CLI with the default SIGINT disposition, also when this run ignores
    # SIGINT (a background job), which the child would otherwise inherit
    result = cli(site, "list", preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    err = result.stderr.decode()
    assert result.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err, err


CHECK_MODULE = (
    ESTIMATOR_MODULE
    + """

class NeedsArgs(BaseEstimator):
    def __init__(self, required):
        self.required = required

    def fit(self, X, y=None):
        return self


class ExitsInFit(BaseEstimator):
    def fit(self, X, y=None):
        import sys

        sys.exit(4)
"""
)


def test_cli_check_reports_each_failing_entry_and_carries_on(site):
    write_dist(
        site,
        "brk-check",
        section("needs_args = brk_check:NeedsArgs", "exits_in_fit = brk_check:ExitsInFit"),
        modules={"brk_check": CHECK_MODULE},
    )
    result = cli(site, "check", "brk-check")
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 1, out + err
    assert "Traceback" not in err, err
    rows = [line.split(None, 3) for line in out.splitlines()[2:] if line.strip()]
    needs_args = [r for r in rows if r[0] == "needs_args"]
    assert len(needs_args) == 1 and needs_args[0][1:3] == ["instantiate", "failed"], out
    assert "TypeError" in needs_args[0][3]
    assert any(
        r[0] == "exits_in_fit" and r[2] == "failed" and "SystemExit: 4" in r[3] for r in rows
    )
    summary = {line.split(":")[0]: line for line in out.splitlines() if ": " in line}
    assert summary["needs_args"] == "needs_args: 1 failed", out
    assert "failed" in summary["exits_in_fit"] and "passed" in summary["exits_in_fit"], out


# -- an impostor claiming to be skpapers -------------------------------------------------------


@pytest.mark.parametrize("disabled", ["", "1"])
def test_a_package_claiming_to_be_skpapers_is_not_built_in(site, monkeypatch, disabled):
    monkeypatch.setenv("SKPAPERS_DISABLE_PLUGINS", disabled)
    write_dist(
        site,
        "brk-impostor",
        section(
            "upca = brk_impostor:GoodEstimator",
            "robust_sim = skpapers.linear_model:RobustSingleIndexRegressor",
            "backdoor = brk_impostor:GoodEstimator",
        ),
        metadata="Metadata-Version: 2.1\nName: skpapers\nVersion: 99.0\n",
        modules={"brk_impostor": "raise RuntimeError('the impostor was imported')\n"},
    )
    registry.refresh()
    messages = exercise_api()
    assert "impostor" in only_one_naming(messages, "'upca' = 'brk_impostor:GoodEstimator'")
    assert str(site) in only_one_naming(messages, "'backdoor'")
    assert registry.get("upca").__module__.startswith("skpapers.")
    assert registry.get("skpapers:upca").__module__.startswith("skpapers.")
    assert "backdoor" not in registry.available()
    assert "brk_impostor" not in sys.modules
    builtins = {spec.name: spec for spec in registry.specs() if spec.builtin}
    assert set(builtins) == BUILTINS
    assert {spec.version for spec in builtins.values()} == {skpapers.__version__}


HOSTILE_CHECK_MODULE = (
    ESTIMATOR_MODULE
    + """
import os
import time
from pathlib import Path


def first_time(name):
    # misbehave in the first fit of the whole run only, so that the test stays quick
    marker = Path(__file__).with_name(name + ".done")
    if marker.exists():
        return False
    marker.touch()
    return True


class HardExitInFit(BaseEstimator):
    def fit(self, X, y=None):
        if first_time("exits"):
            os._exit(3)
        return self


class HangsInFit(BaseEstimator):
    def fit(self, X, y=None):
        if first_time("hangs"):
            while True:
                time.sleep(1)
        return self


class LeavesATempFile(BaseEstimator):
    def fit(self, X, y=None):
        import tempfile

        if first_time("litters"):
            fd, _ = tempfile.mkstemp(prefix="brk-left-")
            os.close(fd)
            os._exit(5)
        return self
"""
)


def test_cli_check_survives_a_hard_exit_and_a_hang_and_leaves_no_files(site, tmp_path_factory):
    write_dist(
        site,
        "brk-hostile",
        section(
            "exits = brk_hostile:HardExitInFit",
            "hangs = brk_hostile:HangsInFit",
            "litters = brk_hostile:LeavesATempFile",
            "fine = brk_hostile:GoodEstimator",
        ),
        modules={"brk_hostile": HOSTILE_CHECK_MODULE},
    )
    tmp = tmp_path_factory.mktemp("tmpdir")
    result = cli(site, "check", "brk-hostile", "--time-limit", "3", env={"TMPDIR": str(tmp)},
                 timeout=600)
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 1, out + err
    assert "Traceback" not in err, err
    summary = {line.split(":")[0]: line for line in out.splitlines() if ": " in line}
    for name in ("exits", "hangs", "litters"):
        assert "failed" in summary[name] and "passed" in summary[name], out
    rows = {name: [line for line in out.splitlines() if line.startswith(name + " ")]
            for name in summary}
    assert any("exit status 3" in row for row in rows["exits"]), out
    assert any("no answer within 3 s" in row for row in rows["hangs"]), out
    assert any("exit status 5" in row for row in rows["litters"]), out
    # each misbehaved once: one check more failed than for a plain estimator
    failed = {name: len(lines) for name, lines in rows.items()}
    assert failed["exits"] == failed["hangs"] == failed["litters"] == failed["fine"] + 1, out
    assert list(tmp.iterdir()) == [], "the checks left temporary files behind"


LOUD_MODULE = (
    ESTIMATOR_MODULE
    + """
import os
import sys
import threading
import time

print("printed at import")
if os.environ.get("BRK_FORK") and os.fork() == 0:
    time.sleep(0.2)  # the forked copy returns into skpapers' list


def chatter():
    for _ in range(200):
        print("a plugin thread talking")
        time.sleep(0.001)


threading.Thread(target=chatter, daemon=True).start()

from skpapers import registry

registry.all_estimators()  # the registry asked for at import, this entry included
"""
)


@pytest.mark.parametrize("fork", ["", "1"])
def test_cli_list_is_one_clean_table_whatever_plugins_do_at_import(site, fork):
    modules = {"brk_loud": LOUD_MODULE}
    write_dist(site, "brk-loud", section("loud = brk_loud:GoodEstimator"), modules=modules)
    result = cli(site, "list", env={"BRK_FORK": fork})
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, out + err
    lines = out.splitlines()
    assert lines[0].split() == ["name", "class", "distribution", "version", "status"], out
    assert out.count("\nloud ") == 1 and "talking" not in out and "printed" not in out, out
    assert [line.split()[0] for line in lines[2:]] == sorted(line.split()[0] for line in lines[2:])
    loud = next(line for line in lines if line.startswith("loud "))
    assert loud.split()[-1] == "ok", out
    assert "could not load" not in err, err
