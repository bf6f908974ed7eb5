"""The guard's and the classifier's pure rules, without running anything."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from relay.loop.agents import Signal, read_contract
from relay.loop.checks import GateChecks, junit_tests, not_run, read_gate, worse
from relay.loop.classify import is_transient
from relay.loop.contract import ENV_ONLY_MAKER
from relay.loop.guard import (
    ALLOW_ENV_ONLY,
    NEW_TOP_MODULE,
    baseline_suite,
    branch_moved,
    config_pythonpath,
    env_only_refusal,
    gate_definition_touched,
    gate_scripts,
    git_meta_changed,
    importable_dirs,
    is_test_file,
    new_top_modules,
    opens_with_project,
    orphan_group,
    project_hooks_touched,
    runs_the_tree,
    shadow_names,
    shadowed_name,
    spine_touched,
    suppressions_added,
    tool_plugins,
    unreviewed_test_edits,
)
from relay.ratchet.judge import installed_names, site_folders

# the names a new module may not take, as the drivers ask the interpreter for them
INSTALLED = installed_names()


@pytest.mark.parametrize(
    "output",
    ["HTTP 529", "status 503", 'File "agent.py", line 529, in main', "rate limit exceeded"],
)
def test_a_commands_output_never_makes_it_transient(output: str) -> None:
    now = datetime(2026, 12, 2, tzinfo=UTC)
    assert read_contract(exit_code=1, output=output, now=now).signal is Signal.FAILED
    assert read_contract(exit_code=75, output=output, now=now).signal is Signal.TRANSIENT
    assert not is_transient(exit_code=1) and is_transient(exit_code=75)


def test_what_defines_the_gates() -> None:
    base = ["Makefile", "pyproject.toml", "tests/test_calc.py", "src/calc.py"]
    py = '[project]\nname = "x"\n[tool.coverage.run]\nsource = ["src"]\n'
    omit = py + 'omit = ["src/big.py"]\n'
    deps = py.replace('name = "x"', 'name = "x"\ndependencies = ["attrs"]')

    def hit(changes: list[str], deleted: list[str] = (), **texts: tuple[str, str]) -> list[str]:
        found = gate_definition_touched(
            changes,
            at_baseline=base,
            deleted=list(deleted),
            texts={k.replace("_", "."): v for k, v in texts.items()},
            installed=INSTALLED,
        )
        return [p for p, _ in found]

    assert hit(["Makefile"]) == ["Makefile"]
    assert hit(["tests/conftest.py"]) == ["tests/conftest.py"]  # new, and still refused
    assert hit(["pyproject.toml"], pyproject_toml=(py, omit)) == ["pyproject.toml"]
    assert hit(["pyproject.toml"], pyproject_toml=(py, deps)) == []
    assert hit(["tests/test_calc.py"], ["tests/test_calc.py"]) == ["tests/test_calc.py"]
    assert hit(["tests/test_calc.py", "src/calc.py"]) == []  # edited: the re-run uses the old
    assert is_test_file("tests/helpers.py") and is_test_file("pkg/test_x.py")
    assert not is_test_file("src/calc.py")


def test_the_spine_and_the_machinery() -> None:
    assert [p for p, _ in spine_touched(["docs/loop/BOARD.md", "docs/loop/LOOP.md", "a"])] == [
        "docs/loop/BOARD.md"
    ]  # LOOP.md is judged by revise.loop_md_touched
    spine = ["docs/loop/learned-rules.md", "docs/loop/relay/roster.json", "docs/loop/new.md"]
    assert [p for p, _ in spine_touched([*spine, "docs/loops.md"])] == spine
    assert git_meta_changed({"config": b"a", "hooks/x": b"1"}, {"config": b"b", "info/e": b""}) == [
        "config",
        "hooks/x",
        "info/e",
    ]
    assert branch_moved("refs/heads/main", "refs/heads/main") is None
    assert "from refs/heads/main to a detached HEAD" in (
        branch_moved("refs/heads/main", None) or ""
    )


def test_an_orphan_is_stopped_only_when_it_is_ours() -> None:
    assert orphan_group("4242 100\n", "100") == 4242
    assert orphan_group("4242 100\n", None) == 4242  # its leader gone, the group lives on
    assert orphan_group("4242 100\n", "999") is None  # the pid is someone else's now
    assert orphan_group("4242 -\n", "999") == 4242
    assert orphan_group("garbage", None) is None and orphan_group("1 -", None) is None


def test_new_gate_files_and_file_wide_suppressions_are_gate_changes() -> None:
    """A new pytest.ini, ruff.toml or conftest.py, and a new `# ruff: noqa` line, weaken
    the gates; --may-edit-tests lets a new gate file or suppression through, never an
    edited baseline one."""
    base = ["src/calc.py", "setup.cfg", "tests/test_calc.py"]
    new = ["pytest.ini", "ruff.toml", "sub/.coveragerc", "tests/conftest.py"]
    texts = {"src/calc.py": ("x = 1\n", "# ruff: noqa\nx = 1\n")}
    found = gate_definition_touched(
        [*new, "src/calc.py"], at_baseline=base, deleted=[], texts=texts, installed=INSTALLED
    )
    assert [p for p, _ in found] == [*new, "src/calc.py"]
    assert "gained `# ruff: noqa`" in found[-1][1]
    allowed = gate_definition_touched(
        [*new, "src/calc.py", "setup.cfg"],
        at_baseline=base,
        deleted=[],
        texts=texts,
        may_edit_tests=True,
        installed=INSTALLED,
    )
    assert [p for p, _ in allowed] == ["tests/conftest.py", "setup.cfg"]
    assert suppressions_added("# ruff: noqa\n", "# ruff: noqa\nimport os\n") == []
    assert suppressions_added("", "  # Flake8: NOQA\n// @ts-nocheck\nx = 1  # noqa\n") == [
        "# Flake8: NOQA",
        "// @ts-nocheck",
        "x = 1  # noqa",
    ]


def test_start_up_files_and_hidden_pytest_configuration_are_gate_files() -> None:
    new = [".pytest.ini", "pytest.toml", "src/sitecustomize.py", "usercustomize.py", "x.pth"]
    found = gate_definition_touched(
        new, at_baseline=["src/calc.py"], deleted=[], texts={}, installed=INSTALLED
    )
    assert [p for p, _ in found] == new
    said = dict(found)
    assert all("is a new file that defines how the gates run" in said[p] for p in new[:2])
    # where the interpreter imports them first, start-up files are refused outright
    assert all("imported in place of" in said[p] for p in new[2:])


def test_the_baselines_suite_is_what_the_baseline_had() -> None:
    """The re-run that judges the candidate's code gets the baseline's copy of every
    changed test and gate file and loses the goal's new tests and gate files; a goal
    that may edit tests keeps its edits and its new helpers, never its new test modules."""
    base = ["src/calc.py", "tests/test_calc.py", "tests/helpers.py", "pyproject.toml", "tox.ini"]
    changes = [
        "src/calc.py",
        "src/new.py",
        "tests/test_calc.py",
        "tests/helpers.py",
        "tox.ini",
        "tests/test_0_plugin.py",
        "tests/__init__.py",
        "tests/data.json",
        "pytest.ini",
        "src/calc/test_inline.py",
        "pyproject.toml",
    ]
    tool = '[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    same = {"pyproject.toml": (tool, tool.replace('"x"', '"y"'))}
    put, gone = baseline_suite(changes, at_baseline=base, texts=same, installed=INSTALLED)
    assert put == ["tests/test_calc.py", "tests/helpers.py", "tox.ini"]
    assert gone == [
        "tests/test_0_plugin.py",
        "tests/__init__.py",
        "tests/data.json",
        "pytest.ini",
        "src/calc/test_inline.py",
    ]
    deselect = {"pyproject.toml": (tool, tool.replace('"-q"', '"--deselect t"'))}
    put, gone = baseline_suite(
        changes, at_baseline=base, texts=deselect, may_edit_tests=True, installed=INSTALLED
    )
    assert put == ["tox.ini", "pyproject.toml"]
    assert gone == [
        "tests/test_0_plugin.py",
        "tests/__init__.py",
        "pytest.ini",
        "src/calc/test_inline.py",
    ]


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_m" name="test_a" file="tests/test_m.py" line="1" />
<testcase classname="tests.test_m.TestB" name="test_c" file="tests/test_m.py" line="3" />
<testcase classname="tests.test_m" name="test_p[2]" file="tests/test_m.py" line="5">
<failure message="assert 2 == 1">x</failure></testcase>
<testcase classname="tests.test_m" name="test_s" file="tests/test_m.py" line="7">
<skipped type="pytest.skip" message="no">x</skipped></testcase>
<testcase classname="" name="tests.test_bad" time="0.000"><error message="collection">x</error>
</testcase></testsuite></testsuites>"""


def test_a_junit_report_names_each_test_by_its_node_id() -> None:
    assert junit_tests(JUNIT) == (
        ("tests/test_m.py::TestB::test_c", "passed"),
        ("tests/test_m.py::test_a", "passed"),
        ("tests/test_m.py::test_p[2]", "failed"),
        ("tests/test_m.py::test_s", "skipped"),
    )
    assert junit_tests("not xml <") is None and junit_tests("<html></html>") is None


def test_a_baseline_test_that_did_not_run_is_failing() -> None:
    base = read_gate("test", output="", exit_code=0, timed_out=False, junit=JUNIT)
    gone = JUNIT.replace('name="test_a"', 'name="test_a_renamed"')
    skipped = JUNIT.replace('name="test_c" file="tests/test_m.py" line="3" />', (
        'name="test_c" file="tests/test_m.py" line="3"><skipped message="s">x</skipped>'
        "</testcase>"
    ))  # fmt: skip
    now = read_gate("test", output="", exit_code=0, timed_out=False, junit=gone)
    assert worse(base, now) == [
        "test tests/test_m.py::test_a did not run (it passed at the baseline)"
    ]
    assert worse(base, now, excused_gone=["tests/test_m.py::test_a"]) == []
    now = read_gate("test", output="", exit_code=0, timed_out=False, junit=skipped)
    assert not_run(base, now) == [
        "test tests/test_m.py::TestB::test_c did not run (it passed at the baseline)"
    ]
    # a failing test of the baseline that stops running is not fixed: it did not run
    red = JUNIT.replace('name="test_p[2]"', 'name="test_p[3]"')
    now = read_gate("test", output="", exit_code=0, timed_out=False, junit=red)
    assert not_run(base, now) == [
        "test tests/test_m.py::test_p[2] did not run (it ran at the baseline)"
    ]
    # with no report on either side (not pytest), nothing is said
    assert not_run(GateChecks("test", ran=True, passed=True), now) == []
    # with a report, the failing tests are the report's (test_p[2] fails in it), whatever
    # the output names: test_a, which the report does not hold, did not run
    out = "FAILED tests/test_m.py::test_a - assert 0\n"
    failing = read_gate("test", output=out, exit_code=1, timed_out=False, junit=gone)
    assert worse(base, failing) == [
        "test tests/test_m.py::test_p[2]",
        "test tests/test_m.py::test_a did not run (it passed at the baseline)",
    ]


def test_an_env_level_only_maker_runs_only_when_the_person_said_so() -> None:
    refused = env_only_refusal(True, allowed=False, authorised=(), unattended=False)
    assert refused is not None and ALLOW_ENV_ONLY in refused and "\n" not in refused
    assert env_only_refusal(True, allowed=True, authorised=(), unattended=False) is None
    assert env_only_refusal(False, allowed=False, authorised=(), unattended=True) is None
    unattended = env_only_refusal(True, allowed=True, authorised=("push",), unattended=True)
    assert unattended is not None and f"`- {ENV_ONLY_MAKER}`" in unattended
    assert ALLOW_ENV_ONLY not in unattended
    assert (
        env_only_refusal(True, allowed=False, authorised=(ENV_ONLY_MAKER,), unattended=True) is None
    )


@pytest.mark.parametrize(
    "line",
    [
        "#ruff:noqa",
        "#ruff: noqa",
        "# ruff:noqa",
        "# ruff : noqa",
        "#  RUFF:NOQA: F401",
        "#flake8:noqa",
        "# flake8 : NoQA",
        "#mypy:ignore-errors",
        "# mypy: ignore_errors=True",
        "# mypy: allow-untyped-defs",
        "#type:ignore",
        "# type : ignore[misc]",
        "# pylint:skip-file",
        "# pylint: disable=all",
        "# pylint: disable = C0114, all",
        "# pyright: basic",
        "#pyright:ignore",
        "# pyright: reportGeneralTypeIssues=false",
        "# pytype: skip-file",
        "/*eslint-disable*/",
        "/* eslint-disable no-undef */",
        "//eslint-disable",
        "//  @ts-nocheck",
        "x = slow()  # pragma: no cover",
        "if debug:  #pragma:no cover",
        "else:  # PRAGMA NO COVER",
        "def f():  # pragma: no branch",
    ],
)
def test_a_file_wide_suppression_is_found_whatever_its_spacing_and_case(line: str) -> None:
    before = "import os\n\nX = 1\n"
    after = (
        f"{line}\n{before}"
        if not line.startswith(("x ", "if", "else", "def"))
        else (before + line + "\n")
    )
    assert suppressions_added(before, after) == [line.strip()]
    assert suppressions_added(after, after) == []  # what the baseline had already
    found = gate_definition_touched(
        ["src/calc.py"],
        at_baseline=["src/calc.py"],
        deleted=[],
        texts={"src/calc.py": (before, after)},
        installed=INSTALLED,
    )
    assert found and "switches a gate off" in found[0][1]


def test_strict_settings_and_notes_are_no_suppression_but_line_level_ones_are() -> None:
    assert suppressions_added("", "# pyright: strict\n# a note about ruff: it is fast\n") == []
    text = (
        "import os  # noqa: F401\n"
        "x = 1  # type: ignore[assignment]\n"
        "// eslint-disable-next-line no-undef\n"
        "foo(); // eslint-disable-line\n"
    )
    assert suppressions_added("", text) == text.splitlines()
    assert suppressions_added(text, text) == []
    # a second copy of a pragma the baseline had once is a new one
    one = "a()  # pragma: no cover\n"
    assert suppressions_added(one, one + one) == ["a()  # pragma: no cover"]


def test_a_distributions_metadata_and_a_module_shadowing_a_gate_tool_define_the_gates() -> None:
    new = [
        "calc_tools-0.1.dist-info/entry_points.txt",
        "calc_tools-0.1.dist-info/METADATA",
        "src/calc.egg-info/PKG-INFO",
        "vendor/entry_points.txt",
        "pytest.py",
        "src/_pytest/__init__.py",
        "coverage.py",
    ]
    ok = ["src/calc.py", "src/pytest_helpers.py", "docs/pytest.py", "src/calc/pytest.py"]
    found = gate_definition_touched(
        [*new, *ok], at_baseline=ok[:1], deleted=[], texts={}, installed=INSTALLED
    )
    assert [p for p, _ in found] == new
    assert all("new file that defines how the gates run" in why for _, why in found[:4])
    assert all("imported in place of" in why for _, why in found[4:])
    allowed = gate_definition_touched(
        new, at_baseline=[], deleted=[], texts={}, may_edit_tests=True, installed=INSTALLED
    )
    assert [p for p, _ in allowed] == new[4:]  # a shadow is never kept, whatever declared
    # the re-run with the baseline's tests leaves them out even for such a goal
    assert baseline_suite(new, at_baseline=[], may_edit_tests=True, installed=INSTALLED) == (
        [],
        new,
    )
    # a project whose own package has such a name keeps working on it
    assert gate_definition_touched(["src/_pytest/python.py"], at_baseline=["src/_pytest/python.py"],
                                   deleted=[], texts={}, installed=INSTALLED) == []  # fmt: skip


def test_a_new_module_named_like_the_stdlib_relay_or_a_tool_where_it_imports_first() -> None:
    """A new top-level ``sysconfig.py`` turned ruff's launcher off, ``tomllib.py`` ran
    before pytest's plugins, a ``relay/`` package ran as relay at the next fire: where
    such a module imports as top-level (the root, src/, a test folder with no
    ``__init__.py``) it is refused even for a goal that may edit tests."""
    tree = ["src/calc.py", "tests/test_calc.py", "pkg/__init__.py", "pkg/test_pkg.py"]
    shadows = {
        "sysconfig.py": "sysconfig",
        "tomllib.py": "tomllib",
        "relay/__init__.py": "relay",
        "src/relay/__init__.py": "relay",
        "tests/json.py": "json",
        "tests/logging/__init__.py": "logging",
        "src/types.pyi": "types",
        "ruff.py": "ruff",
    }
    fine = ["pkg/json.py", "docs/pytest.py", "src/calc/types.py", "tests/helpers.py", "relay.md"]
    dirs = importable_dirs(tree + list(shadows))
    assert {p: shadowed_name(p, dirs, INSTALLED) for p in [*shadows, *fine]} == {
        **shadows, **dict.fromkeys(fine)
    }  # fmt: skip
    for may in (False, True):
        got = gate_definition_touched(
            [*shadows, *fine],
            at_baseline=tree,
            deleted=[],
            texts={},
            may_edit_tests=may,
            installed=INSTALLED,
        )
        assert [p for p, _ in got if "imported in place of" in _] == list(shadows)
    assert "`relay`" in dict(got)["relay/__init__.py"]
    # a module the baseline already had is the project's own
    assert gate_definition_touched(["tests/json.py"], at_baseline=[*tree, "tests/json.py"],
                                   deleted=[], texts={}, installed=INSTALLED) == []  # fmt: skip
    # the re-run with the baseline's tests leaves a new one out
    assert baseline_suite(
        ["sysconfig.py", "src/calc.py"], at_baseline=tree, installed=INSTALLED
    ) == (
        [],
        ["sysconfig.py"],
    )


def test_a_new_module_named_like_anything_the_interpreter_imports_is_refused() -> None:
    """A top-level ``_sysconfigdata__linux_x86_64-linux-gnu.py`` was imported by ruff's
    launcher through sysconfig and switched the lint gate off for good; pytest's plugins
    import ``typing_extensions``, ``pygments``, ``execnet`` by name. Any name the
    interpreter can import apart from the clone (stdlib, built-in, site-packages),
    sysconfig's data and a start-up ``.pth`` is refused where it imports first."""
    tree = ["src/calc.py", "tests/test_calc.py"]
    shadows = {
        "_sysconfigdata__linux_x86_64-linux-gnu.py": "_sysconfigdata__linux_x86_64-linux-gnu",
        "_sysconfigdata_t_darwin.py": "_sysconfigdata_t_darwin",
        "typing_extensions.py": "typing_extensions",  # installed beside relay
        "src/pygments/__init__.py": "pygments",
        "tests/iniconfig.py": "iniconfig",
        "sys.py": "sys",  # a built-in
        "sitecustomize.py": "sitecustomize",
        "usercustomize.py": "usercustomize",
        "evil.pth": "evil.pth",
        "src/pluggy.cpython-312-x86_64-linux-gnu.so": "pluggy",
    }
    fine = ["calc_helpers.py", "pkg/typing_extensions.py", "tests/test_more.py", "docs/x.pth"]
    dirs = importable_dirs(tree + list(shadows))
    assert {p: shadowed_name(p, dirs, INSTALLED) for p in [*shadows, *fine]} == {
        **shadows, **dict.fromkeys(fine)
    }  # fmt: skip
    got = gate_definition_touched(
        [*shadows, *fine],
        at_baseline=tree,
        deleted=[],
        texts={},
        may_edit_tests=True,
        installed=INSTALLED,
    )
    assert [p for p, why in got if "imported in place of" in why] == list(shadows)
    # a project's usual folders are its own, whatever a distribution installs
    assert shadowed_name("tests/__init__.py", dirs, INSTALLED) is None


def test_pytests_pythonpath_setting_is_an_importable_dir() -> None:
    """pytest's ``pythonpath`` puts its folders first on sys.path: a new module named
    like an installed one there is imported in place of it, as at the clone's top."""
    texts = {
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["lib", "./tools/"]\n',
        "pytest.ini": "[pytest]\npythonpath = vendor .\n",
        "setup.cfg": "[tool:pytest]\npythonpath = scripts\n",
        "tox.ini": "[tox]\nenvlist = py\n",
    }
    assert config_pythonpath(texts) == ["vendor", "", "lib", "tools", "scripts"]
    assert config_pythonpath({"pyproject.toml": "not = [toml", "setup.cfg": "[x"}) == []
    assert config_pythonpath({"pytest.ini": "[pytest]\npythonpath = ../up\n"}) == []
    paths = config_pythonpath(texts)
    dirs = importable_dirs(["src/calc.py"], paths)
    assert shadowed_name("lib/json.py", dirs, INSTALLED) == "json"
    assert shadowed_name("lib/json.py", importable_dirs(["src/calc.py"]), INSTALLED) is None
    got = gate_definition_touched(
        ["tools/pytest.py"],
        at_baseline=["src/calc.py"],
        deleted=[],
        texts={},
        pythonpath=paths,
        installed=INSTALLED,
    )
    assert [p for p, _ in got] == ["tools/pytest.py"]
    put, gone = baseline_suite(
        ["lib/json.py"], at_baseline=["src/calc.py"], pythonpath=paths, installed=INSTALLED
    )
    assert (put, gone) == ([], ["lib/json.py"])


def test_the_type_checkers_import_folders_are_importable_dirs() -> None:
    """mypy's ``mypy_path`` and pyright's ``extraPaths`` (each execution environment's
    too) are where the type checkers find modules: a new stub there named like an
    installed package is read in its place, so it is refused as one on sys.path is."""
    texts = {
        "mypy.ini": "[mypy]\nmypy_path = stubs:$MYPY_CONFIG_FILE_DIR/more, ../up\n",
        "pyrightconfig.json": '{"extraPaths": ["libs"], // comment\n'
        ' "executionEnvironments": [{"root": "app", "extraPaths": ["vendor/x"]}]}',
        "pyproject.toml": '[tool.basedpyright]\nextraPaths = ["third"]\n'
        '[tool.mypy]\nmypy_path = "typ"\n',
    }
    paths = config_pythonpath(texts)
    assert sorted(paths) == ["libs", "more", "stubs", "third", "typ", "vendor/x"]
    new = ["stubs/requests.pyi", "vendor/x/json.py", "libs/typing_extensions/__init__.pyi"]
    got = gate_definition_touched(
        new, at_baseline=["src/calc.py"], deleted=[], texts={}, pythonpath=paths,
        installed=INSTALLED | {"requests"},
    )  # fmt: skip
    assert [p for p, _ in got] == new
    assert all("imported in place of" in why for _, why in got)


def test_ignore_files_are_gate_files() -> None:
    """ruff skips what .gitignore or .ignore name, tracked or not: `src/*.py` there
    switches the lint gate off, so an edited one (at any depth) is a gate change and a
    new one needs --may-edit-tests, as for any gate file."""
    base = ["src/calc.py", ".gitignore", "pkg/.gitignore"]
    changes = [".gitignore", "pkg/.gitignore", ".ignore", "sub/.rgignore", "src/calc.py"]
    found = gate_definition_touched(
        changes, at_baseline=base, deleted=[], texts={}, installed=INSTALLED
    )
    assert [p for p, _ in found] == changes[:4]
    assert "defines how the gates run" in found[0][1]
    allowed = gate_definition_touched(
        changes, at_baseline=base, deleted=[], texts={}, may_edit_tests=True, installed=INSTALLED
    )
    assert [p for p, _ in allowed] == [".gitignore", "pkg/.gitignore"]
    put, gone = baseline_suite(changes, at_baseline=base, installed=INSTALLED)
    assert put == [".gitignore", "pkg/.gitignore"] and gone == [".ignore", "sub/.rgignore"]


@pytest.mark.parametrize(
    "line",
    [
        "import os  # noqa",
        "l = 1  # noqa: E741, F841",
        "x = f()  #NOQA:E501",
        "y: int = g()  # type: ignore[assignment]",
        "y = g()  # Type:Ignore",
        "z = h()  # pyright: ignore[reportGeneralTypeIssues]",
        "if debug:  # pragma: no cover",
        "q = 1  # pylint: disable=unused-variable",
        "a = b  // eslint-disable-line",
        "// @ts-ignore",
    ],
)
def test_line_level_suppressions_on_added_lines_are_gate_changes(line: str) -> None:
    before = "import sys\nx = 1\n"
    after = f"import sys\n{line}\nx = 1\n"
    assert suppressions_added(before, after) == [line]
    found = gate_definition_touched(
        ["src/calc.py"], at_baseline=["src/calc.py"], deleted=[],
        texts={"src/calc.py": (before, after)},
        installed=INSTALLED,
    )  # fmt: skip
    assert [p for p, _ in found] == ["src/calc.py"] and "switches a gate off" in found[0][1]


def test_the_baselines_own_line_suppressions_are_not_counted() -> None:
    before = "import os  # noqa: F401\nv = w()  # type: ignore\n"
    after = "import re\nimport os  # noqa: F401\nv = w()  # type: ignore\nu = 2\n"
    assert suppressions_added(before, after) == []
    assert suppressions_added("a = 1  # noqa\n", "a = 1  # noqa\nb = 2  # noqa\n") == [
        "b = 2  # noqa"
    ]  # a second one is new, though the same comment
    assert suppressions_added("x = 1\n", "x = 1  # the noqa rule\n") == []


def test_files_that_run_when_the_project_opens_are_protected() -> None:
    """An editor's tasks, an agent's hooks and instructions, direnv, CI: they run outside
    any box with the person's credentials, so a maker's change to one is put back unless
    the goal lists the path."""
    hooks = [
        ".claude/settings.json",
        ".claude/commands/ship.md",
        ".envrc",
        ".vscode/tasks.json",
        ".vscode/settings.json",
        ".idea/runConfigurations/x.xml",
        ".devcontainer/devcontainer.json",
        "AGENTS.md",
        "pkg/CLAUDE.md",
        ".cursorrules",
        ".github/workflows/ci.yml",
        # known by shape, not by a list: any dot folder or file, agents' instructions
        ".gemini/settings.json",
        ".codex/config.toml",
        ".mcp.json",
        ".zed/tasks.json",
        ".github/CODEOWNERS",
        ".vscode-notes.md",
        "GEMINI.md",
        "CONVENTIONS.md",
        "AGENT.md",
        "docs/AGENTS.override.md",
        "rules/style.mdc",
        "mise.toml",
        ".mise.toml",
        # what agents and editors read on open without a dot, by shape where there is one
        "CLAUDE.local.md",
        "pkg/AGENTS.local.md",
        "QWEN.md",
        "CRUSH.md",
        "WARP.md",
        "NEXTAGENT.md",
        "opencode.json",
        "opencode.jsonc",
        "crush.json",
        "mise/config.toml",
        "mise/tasks/build",
        "calc.code-workspace",
        "devcontainer.json",
        ".devcontainer.json",
    ]
    plain = [
        "src/calc.py",
        "README.md",
        "CHANGELOG.md",
        "CONTRIBUTING.md",
        "CODE_OF_CONDUCT.md",
        "SECURITY.md",
        "docs/DESIGN.md",
        "docs/mise.md",
        "docs/AGENTS.txt",
        "docs/agent.md",
        "src/agents.py",
        ".gitignore",  # a gate file, judged as one
    ]
    assert all(opens_with_project(p) for p in hooks)
    assert not any(opens_with_project(p) for p in plain)
    found = project_hooks_touched([*plain, *hooks])
    assert [p for p, _ in found] == hooks
    assert "runs when a person opens the project" in found[0][1]
    declared = project_hooks_touched(
        hooks, declared=(".github/workflows/", "AGENTS.md", ".vscode/*")
    )
    assert [p for p, _ in declared] == [
        p for p in hooks if p not in (".github/workflows/ci.yml", "AGENTS.md")
        and not p.startswith(".vscode/")
    ]  # fmt: skip
    # with the baseline known, any new top-level JSON or workspace is one too
    new = ["zed.json", "tool.jsonc", "x.code-workspace", "tsconfig.json"]
    at = project_hooks_touched([*new, "src/x.json"], at_baseline=["tsconfig.json"])
    assert [p for p, _ in at] == new[:3]
    assert project_hooks_touched(new) == [("x.code-workspace", at[2][1])]


def test_test_edits_under_may_edit_tests_need_a_reviewer() -> None:
    """Recorded *and reviewed*: a goal that may edit tests and changed a baseline test goes
    to a person when no checker reads the change."""
    edited = ["tests/test_calc.py::test_total", "tests/test_calc.py::test_sum"]
    why = unreviewed_test_edits(edited, may_edit_tests=True, checkers=0)
    assert why is not None and why.startswith(
        "tests edited under --may-edit-tests need a checker or a person's review"
    )
    assert "tests/test_calc.py::test_total" in why
    assert unreviewed_test_edits(edited, may_edit_tests=True, checkers=1) is None
    assert unreviewed_test_edits([], may_edit_tests=True, checkers=0) is None
    assert unreviewed_test_edits(edited, may_edit_tests=False, checkers=0) is None


def test_the_names_a_new_module_may_not_take_are_handed_in_not_looked_up() -> None:
    """The pure rule asks nothing of the interpreter: the driver lists its site-packages
    once (``installed_names``) and hands the names in."""
    names = shadow_names(["calc_vendor", "tests", "docs"])
    assert {"calc_vendor", "json", "sys", "relay", "pytest", "sitecustomize"} <= names
    assert "tests" not in names and "docs" not in names and "__main__" not in names
    dirs = importable_dirs(["src/calc.py"])
    assert shadowed_name("calc_vendor.py", dirs, names) == "calc_vendor"
    assert shadowed_name("calc_vendor.py", dirs, shadow_names([])) is None
    assert shadowed_name("_sysconfigdata_x.py", dirs, frozenset()) == "_sysconfigdata_x"
    # what the drivers hand in holds what this interpreter has installed beside relay
    assert {"typing_extensions", "pygments"} <= INSTALLED and shadow_names([]) <= INSTALLED


def test_every_module_relay_imports_only_when_installed_is_a_name_a_new_module_may_not_take() -> (
    None
):
    """Relay's optional extras (keyring for the loop's secrets, anthropic for the managed
    roster) are imported by relay's own process when they are there: a clone's
    ``src/keyring/`` that reaches relay's sys.path would run as relay, so the name is
    refused whether this interpreter has the extra or not. Every import relay's source
    makes under ``except ImportError`` is on the list."""
    import ast

    optional: set[str] = set()
    for path in sorted(Path(__file__).resolve().parents[2].joinpath("relay").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try) or not any(
                h.type is not None and "ImportError" in ast.dump(h.type) for h in node.handlers
            ):
                continue
            for each in (n for stmt in node.body for n in ast.walk(stmt)):
                if isinstance(each, ast.Import):
                    optional |= {a.name.split(".")[0] for a in each.names}
                elif isinstance(each, ast.ImportFrom) and each.level == 0 and each.module:
                    optional.add(each.module.split(".")[0])
    assert {"keyring", "anthropic"} <= optional
    assert optional <= shadow_names([])  # with nothing installed at all
    dirs = importable_dirs(["src/calc.py"])
    assert shadowed_name("src/keyring/__init__.py", dirs, shadow_names([])) == "keyring"


def test_any_new_top_level_module_where_the_gates_import_first_is_for_a_person() -> None:
    """A module only the gates' interpreter has (``mypy_extensions``) is on no list of
    relay's: a new module at the top of an import folder is held whatever its name, but
    for the project's growth (beside its own modules, imported by the change); tests and
    conftest.py may always be added."""
    base = ["src/calc/__init__.py", "src/calc/core.py", "tests/test_calc.py", "setup.py"]
    new = {
        # the clone's top holds none of the project's modules: held, imported or not
        "mypy_extensions.py": "mypy_extensions",
        "src/helpers.py": "helpers",  # beside the project's package, but nothing uses it
        "src/newpkg/__init__.py": None,  # beside it and imported: the project grows
        "src/stubbed.pyi": "stubbed",
        "tests/helpers_lib/__init__.py": None,  # test code: tests may grow
        "tests/test_more.py": None,
        "conftest.py": None,
        "src/calc/extra.py": None,  # inside the project's package
        "docs/notes.py": None,  # no gate imports from docs/
        "README.md": None,
    }
    imported = frozenset({"mypy_extensions", "newpkg", "calc"})
    got = new_top_modules(
        [*new, "gone.py"], at_baseline=base, present=[*base, *new], imported=imported
    )
    assert got == [(p, n) for p, n in new.items() if n], got
    said = NEW_TOP_MODULE.format(name="mypy_extensions")
    assert said == (
        "a new top-level module mypy_extensions: modules at the top of an import folder can"
        " shadow what a gate imports"
    )
    # a flat project grows at its top as in src/, and pytest's pythonpath folders are
    # import folders too
    flat = ["calc.py", "tests/test_calc.py"]
    grown = ["neg.py", "lib/tool.py", "unused.py"]
    got = new_top_modules(
        grown,
        at_baseline=flat,
        present=[*flat, *grown],
        pythonpath=["lib"],
        imported=frozenset({"neg", "tool"}),
    )
    assert got == [("lib/tool.py", "tool"), ("unused.py", "unused")], got


def test_the_installed_names_include_the_folders_a_pth_file_adds(tmp_path: Path) -> None:
    site_dir, other, stray = tmp_path / "site", tmp_path / "shared", tmp_path / "stray"
    for folder in (site_dir, other, stray):
        folder.mkdir()
    (other / "only_there.py").write_text("")
    (site_dir / "a.pth").write_text(
        f"# a comment\n{other}\nimport os; print('no')\n../stray\nmissing\n"
    )
    assert site_folders([str(site_dir)]) == [str(site_dir), str(other), str(stray)]
    assert site_folders([str(tmp_path / "nowhere")]) == [str(tmp_path / "nowhere")]


def test_the_installed_names_include_the_projects_own_virtualenvs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the gates run on the project's interpreter: a package only its .venv has (relay
    # installed apart) is a name a new top-level module may not take either
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    venv = tmp_path / ".venv"
    site_dir = venv / "lib/python3.11/site-packages"
    (site_dir / "only_in_the_project_venv").mkdir(parents=True)
    (site_dir / "only_in_the_project_venv/__init__.py").write_text("")
    (site_dir / "project_single_module.py").write_text("")
    assert "only_in_the_project_venv" not in installed_names()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    names = installed_names(tmp_path)
    assert {"only_in_the_project_venv", "project_single_module"} <= names
    assert names >= INSTALLED
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "lib/python3.11/site-packages/named_by_virtual_env").mkdir(parents=True)
    (elsewhere / "lib/python3.11/site-packages/named_by_virtual_env/__init__.py").write_text("")
    (elsewhere / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setenv("VIRTUAL_ENV", str(elsewhere))
    assert "named_by_virtual_env" in installed_names(tmp_path / "no-such-clone")


def test_the_files_a_gate_command_runs_are_gate_files() -> None:
    """The script a gate runs (given to an interpreter, the program itself, a makefile
    named or read by default, a configuration an option names, and what such a script
    or recipe runs in turn) defines the gate as a Makefile does; the source a gate
    checks, a test and a subcommand word do not."""
    tree = [
        "scripts/check.sh", "tools/lint.py", "tools/helper.sh", "tools/mod/__main__.py",
        "check", "ci.mk", "lint.cfg", "sub/Makefile", "Makefile", "src/calc.py",
        "tests/test_calc.py",
    ]  # fmt: skip
    texts = {
        "scripts/check.sh": "#!/bin/sh\n# not tools/lint.py\nsh tools/helper.sh\n"
        "ruff check src/calc.py\n",
        "Makefile": "lint:\n\t@python tools/lint.py --config lint.cfg\n",
    }  # fmt: skip

    def named(command: str) -> list[str]:
        return sorted(gate_scripts([command], tree, texts.get, root="/home/p/calc"))

    # with a script, every file beside it (a script reaches its folder in forms no reading
    # follows: ``. "$(dirname "$0")/lib.sh"``)
    tools = ["tools/helper.sh", "tools/lint.py"]
    assert named("sh scripts/check.sh") == ["scripts/check.sh", *tools]
    assert named("python tools/lint.py") == named("python3 -u tools/lint.py") == tools
    assert named("./check") == named("/home/p/calc/check") == ["check"]
    assert named("make -f ci.mk") == named("make --file=ci.mk") == ["ci.mk"]
    assert named("make -C sub test") == ["sub/Makefile"]
    assert named("make lint") == ["Makefile", "lint.cfg", *tools]  # its recipes
    assert named("uv run python -m tools.mod") == ["tools/mod/__main__.py"]
    assert named("env A=1 timeout 60 bash -c 'cd . && ./check'") == ["check"]
    assert named("ruff check src/calc.py --config lint.cfg") == ["lint.cfg"]
    assert named("mypy src/calc.py") == named("pytest -q tests/test_calc.py") == []
    # a Python script's neighbours it imports (its folder is first on sys.path), and the
    # top-level modules a script at the top imports (its rules may be one), not a package
    texts["tools/lint.py"] = "import os\nfrom rules import NO_PRINT\nimport calc\n"
    texts["check.py"] = "import calc\nimport pkg\n"
    tree += ["tools/rules.py", "calc.py", "check.py", "pkg/__init__.py"]
    assert named("python tools/lint.py") == [*tools, "tools/rules.py"]
    assert named("python check.py") == ["calc.py", "check.py"]
    inline = "python -I -c \"import runpy; runpy.run_path('tests/test_calc.py')['t']()\""
    assert named(inline) == named("python -m pytest -q -p no:cacheprovider") == []
    # judged as the gate-definition rule judges a Makefile: edited or new, never kept
    found = gate_definition_touched(
        ["scripts/check.sh", "src/calc.py"],
        at_baseline=tree,
        deleted=[],
        texts={},
        installed=INSTALLED,
        gate_files=frozenset(named("sh scripts/check.sh")),
    )
    assert found == [("scripts/check.sh", "`scripts/check.sh` defines how the gates run")]
    put, gone = baseline_suite(
        ["scripts/check.sh", "src/calc.py"],
        at_baseline=tree,
        installed=INSTALLED,
        gate_files=frozenset({"scripts/check.sh"}),
    )
    assert (put, gone) == (["scripts/check.sh"], [])


def test_when_a_gate_runs_the_trees_files_only_source_and_tests_are_free() -> None:
    """What a gate's script reaches cannot all be read off it (a helper sourced from
    ``$(dirname "$0")``, a folder put on PATH, inline code, a module a top-level script
    imports, a rule list read from ``../docs/forbidden.md``): when a gate runs a file of
    the tree, every change that is neither the project's source nor a test is held,
    documentation too; with no such gate it is not."""
    tree = [
        "scripts/check.sh", "scripts/lib.sh", "scripts/rules.sh", "scripts/x.py",
        "tools/run", "tools/lint.py", "tools/cfg/rules.py", "bin/lint", "check.py",
        "checkrules.py", "lint.toml", "src/calc.py", "src/calc_util/__init__.py",
        "tests/test_calc.py", "README.md", "docs/guide.rst", "data/cases.json",
    ]  # fmt: skip
    texts = {
        "scripts/check.sh": '#!/bin/sh\n. "$(dirname "$0")/lib.sh"\nsh "${0%/*}/rules.sh"\n',
        "tools/run": '#!/bin/sh\nexec python3 "$(dirname "$0")/lint.py"\n',
        "tools/lint.py": "from cfg import rules\n",
        "check.py": "import checkrules\nraise SystemExit(checkrules.run())\n",
    }

    def held(command: str, changes: list[str]) -> list[str]:
        gates = gate_scripts([command], tree, texts.get)
        found = gate_definition_touched(
            changes, at_baseline=tree, deleted=[], texts={}, installed=INSTALLED,
            gate_files=gates, gates_run_tree=runs_the_tree([command], tree, scripts=gates),
        )  # fmt: skip
        return [p for p, _ in found]

    forms = {
        "sh scripts/check.sh": ["scripts/lib.sh", "scripts/rules.sh"],
        "cd scripts && sh check.sh": ["scripts/lib.sh", "scripts/check.sh"],
        "tools/run": ["tools/lint.py", "tools/cfg/rules.py"],
        "PATH=bin:$PATH lint": ["bin/lint"],
        "env PATH=./bin lint": ["bin/lint"],
        "python -c \"exec(open('scripts/x.py').read())\"": ["scripts/x.py"],
        "python check.py": ["checkrules.py"],
        "ruff check --config=lint.toml": ["lint.toml", "data/cases.json"],
    }
    honest = ["src/calc.py", "src/calc_util/__init__.py", "tests/test_calc.py"]
    docs = ["README.md", "docs/guide.rst"]
    for command, rewritten in forms.items():
        assert runs_the_tree([command], tree, scripts=gate_scripts([command], tree, texts.get))
        assert held(command, [*honest, *docs, *rewritten]) == [*docs, *rewritten], command
        assert held(command, honest) == [], command
    # a goal that declared --may-edit-tests may still add a gate file (a pytest.ini)
    declared = gate_definition_touched(
        ["pytest.ini", "data/new.json"], at_baseline=tree, deleted=[], texts={},
        installed=INSTALLED, may_edit_tests=True, gates_run_tree=True,
    )  # fmt: skip
    assert [p for p, _ in declared] == ["data/new.json"]
    # the usual gates run no file of the tree: a data file stays free
    for command in ("python -m pytest -q -p no:cacheprovider", "ruff check .", "mypy src",
                    "pytest -q tests/test_calc.py", "ruff check src/calc.py"):  # fmt: skip
        assert not gate_scripts([command], tree, texts.get)
        assert not runs_the_tree([command], tree), command
        assert held(command, [*honest, *docs, "data/cases.json"]) == [], command


def test_a_gate_script_that_reads_its_rules_from_the_docs_holds_the_docs() -> None:
    """``sh scripts/check.sh`` reads the calls src must never make from
    ``"$(dirname "$0")/../docs/forbidden.md"``, which no reading of the script follows:
    the gates run the tree, so the emptied list is held; source and tests are not."""
    tree = ["scripts/check.sh", "docs/forbidden.md", "src/calc.py", "tests/test_calc.py"]
    script = '#!/bin/sh\ngrep -v "^#" "$(dirname "$0")/../docs/forbidden.md" | grep -rF -f - src\n'
    command = "sh scripts/check.sh"
    gates = gate_scripts([command], tree, {"scripts/check.sh": script}.get)
    assert gates == {"scripts/check.sh"}

    def held(changes: list[str]) -> list[str]:
        found = gate_definition_touched(
            changes, at_baseline=tree, deleted=[], texts={}, installed=INSTALLED,
            gate_files=gates, gates_run_tree=runs_the_tree([command], tree, scripts=gates),
        )  # fmt: skip
        return [p for p, _ in found]

    assert held(["docs/forbidden.md", "src/calc.py", "tests/test_calc.py"]) == ["docs/forbidden.md"]
    assert held(["src/calc.py", "tests/test_calc.py"]) == []


PLUGIN = "from mypy.plugin import Plugin\n"
PLUGIN_FORMS: dict[str, tuple[dict[str, str], list[str]]] = {
    # a mypy plugin by path or by module name, in each file mypy reads its settings from
    "mypy path in pyproject": (
        {"pyproject.toml": '[tool.mypy]\nplugins = ["src/calc_mypy.py"]\n'},
        ["src/calc_mypy.py"],
    ),
    "mypy module in pyproject": (
        {"pyproject.toml": '[tool.mypy]\nmypy_path = "src"\nplugins = ["calc_mypy:plugin"]\n'},
        ["src/calc_mypy.py"],
    ),
    "mypy.ini": ({"mypy.ini": "[mypy]\nplugins = tools/typeplug.py\n"}, ["tools/typeplug.py"]),
    "setup.cfg mypy": (
        {"setup.cfg": "[mypy]\nplugins =\n  tools.typeplug,\n  calc_mypy\n"},
        ["src/calc_mypy.py", "tools/__init__.py", "tools/typeplug.py"],
    ),
    # pytest -p in addopts (each of pytest's files) and conftest.py's pytest_plugins
    "pytest addopts -p": (
        {"pytest.ini": "[pytest]\naddopts = -q -p tools.pyplug -p no:cacheprovider\n"},
        ["tools/__init__.py", "tools/pyplug.py"],
    ),
    "pyproject addopts -pNAME": (
        {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = ["-ptools.pyplug"]\n'},
        ["tools/__init__.py", "tools/pyplug.py"],
    ),
    "conftest pytest_plugins": (
        {"tests/conftest.py": 'pytest_plugins = ["tools.pyplug"]\n'},
        ["tools/__init__.py", "tools/pyplug.py"],
    ),
    "conftest pytest_plugins string": (
        {"conftest.py": 'pytest_plugins = "calc_rules"\n'},
        ["src/calc_rules.py"],
    ),
    # coverage's plugins, flake8's local plugins, pylint's load-plugins and init-hook
    "coverage plugins": (
        {".coveragerc": "[run]\nplugins = tools.covplug\n"},
        ["tools/__init__.py", "tools/covplug.py"],
    ),
    "coverage in pyproject": (
        {"pyproject.toml": '[tool.coverage.run]\nplugins = ["tools.covplug"]\n'},
        ["tools/__init__.py", "tools/covplug.py"],
    ),
    "flake8 local-plugins": (
        {".flake8": "[flake8:local-plugins]\nextension =\n X1 = xcheck:C\npaths = ./lintplug/\n"},
        ["lintplug/helpers.py", "lintplug/xcheck.py"],
    ),
    "pylint load-plugins": (
        {".pylintrc": "[MAIN]\nload-plugins = tools.pyl, calc_rules\n"},
        ["src/calc_rules.py", "tools/__init__.py", "tools/pyl.py"],
    ),
    "pylint in pyproject": (
        {"pyproject.toml": '[tool.pylint.main]\nload-plugins = ["tools.pyl"]\n'},
        ["tools/__init__.py", "tools/pyl.py"],
    ),
    "pylint init-hook": (
        {"pylintrc": "[MASTER]\ninit-hook='import sys;sys.path.append(\"lintplug\")'\n"},
        ["lintplug/helpers.py", "lintplug/xcheck.py"],
    ),
    # pyright's extended configuration (comments and trailing commas allowed), and its
    # stubs' folder: named, or ``typings`` when none is (a stub is read in place of the
    # module it stands for)
    "pyright extends": (
        {
            "pyrightconfig.json": '{\n  // the base\n  "extends": "./pyright/base.json",\n}\n',
            "pyright/base.json": '{"stubPath": "../stubs", "strict": ["src"]}\n',
        },
        ["pyright/base.json", "stubs/calc.pyi"],
    ),
    "pyright in pyproject": (
        {"pyproject.toml": "[tool.pyright]\nreportMissingImports = false\n"},
        ["typings/calc.pyi"],
    ),
    "basedpyright stubPath": (
        {"pyproject.toml": '[tool.basedpyright]\nstubPath = "stubs"\n'},
        ["stubs/calc.pyi"],
    ),
    # jest's setup files (and what they require), eslint's imported rules and extended
    # configurations; a folder jest searches (``roots``) is the project's, not a setup file
    "jest in package.json": (
        {
            "package.json": '{"jest": {"setupFiles": ["<rootDir>/tools/jest-setup.js"],'
            ' "globalSetup": "./tools/global", "roots": ["<rootDir>/src"]}}',
            "tools/jest-setup.js": "require('./jest-helpers');\n",
        },
        ["tools/global.js", "tools/jest-helpers.js", "tools/jest-setup.js"],
    ),
    "eslint flat config": (
        {
            "eslint.config.js": "import local from './eslint-rules';\n"
            "import base from './lint/eslint-base.mjs';\nexport default [local, base];\n",
            "eslint-rules/index.js": "module.exports = require('./no-bad');\n",
        },
        ["eslint-rules/index.js", "eslint-rules/no-bad.js", "lint/eslint-base.mjs"],
    ),
    "eslintrc extends": (
        {".eslintrc.yml": "extends:\n  - ./lint/eslint-base.mjs\nplugins: [local]\n"},
        ["lint/eslint-base.mjs"],
    ),
    # ruff's extended configuration, and the one it extends in turn
    "ruff extend": (
        {
            "ruff.toml": 'extend = "configs/ruff-base.toml"\n',
            "configs/ruff-base.toml": 'extend = "../ruff-root.toml"\n',
        },
        ["configs/ruff-base.toml", "ruff-root.toml"],
    ),
}


@pytest.mark.parametrize("form", sorted(PLUGIN_FORMS))
def test_a_module_a_gate_tools_settings_name_defines_the_gates(form: str) -> None:
    """A tool's plugin is the tool's own code: a maker that set mypy's ``ignore_errors``
    in the project's mypy plugin, or made a pytest plugin deselect every test, could pass
    any gate. Every module or path a gate tool's settings name (a module name through the
    tree's import folders) defines the gates, with the tree's modules it imports; the
    project's other source stays free."""
    tree = [
        "pyproject.toml", "src/calc.py", "src/calc_mypy.py", "src/calc_rules.py",
        "tests/test_calc.py", "tools/__init__.py", "tools/typeplug.py", "tools/pyplug.py",
        "tools/covplug.py", "tools/pyl.py", "lintplug/xcheck.py", "lintplug/helpers.py",
        "configs/ruff-base.toml", "ruff-root.toml", "README.md", "typings/calc.pyi",
        "stubs/calc.pyi", "src/index.js", "tools/jest-helpers.js", "tools/global.js",
        "eslint-rules/no-bad.js", "lint/eslint-base.mjs",
    ]  # fmt: skip
    settings, named = PLUGIN_FORMS[form]
    tree = sorted({*tree, *settings})
    texts = {"src/calc_mypy.py": PLUGIN, **settings}
    gates = gate_scripts(["python -m mypy src", "python -m pytest -q"], tree, texts.get)
    assert sorted(gates) == named
    changes = [*named, "src/calc.py", "tests/test_calc.py"]
    found = gate_definition_touched(
        changes, at_baseline=tree, deleted=[], texts={}, installed=INSTALLED,
        gate_files=gates, gates_run_tree=runs_the_tree(["mypy src"], tree, scripts=gates),
    )  # fmt: skip
    assert sorted(p for p, _ in found) == named
    assert "defines how the gates run" in found[0][1]


def test_a_javascript_tools_configuration_defines_the_gates_and_npm_runs_its_scripts() -> None:
    """eslint's, jest's, TypeScript's... configuration files define the gates by name at
    any depth (the project's own modules do not); a gate that runs ``npm test`` runs
    package.json's scripts, so what they run defines it too; a TypeScript configuration
    holds what it extends, never the source it compiles."""
    new = ["eslint.config.mjs", "packages/a/.eslintrc.json", "jest.config.ts",
           "tsconfig.base.json", "vitest.config.mts", ".prettierrc"]  # fmt: skip
    free = ["src/eslint.js", "src/config.js", "src/jest.ts"]
    found = gate_definition_touched(
        [*new, *free], at_baseline=["src/calc.js"], deleted=[], texts={}, installed=INSTALLED
    )
    assert [p for p, _ in found] == new
    tree = ["package.json", "tools/run-tests.js", "scripts/lint.sh", "src/index.js",
            "tsconfig.json", "tsconfig.base.json"]  # fmt: skip
    texts = {
        "package.json": '{"scripts": {"test": "node tools/run-tests.js && npm run lint",'
        ' "lint": "sh scripts/lint.sh"}}',
        "tsconfig.json": '{"extends": "./tsconfig.base.json", "files": ["./src/index.js"]}',
    }
    for command in ("npm test", "yarn lint", "pnpm run test", "CI=1 npm test -- --ci"):
        gates = gate_scripts([command], tree, texts.get)
        assert sorted(gates) == ["scripts/lint.sh", "tools/run-tests.js"], command
    assert not gate_scripts(["npx jest", "python -m pytest -q"], tree, texts.get)


def test_what_tox_and_nox_run_and_what_a_python_gate_script_names_define_the_gates() -> None:
    """``tox`` runs tox.ini's commands and ``nox`` noxfile.py's sessions: the files those
    run define the gate, as a Makefile's recipes do; so does what a Python gate script
    runs by literal words (``subprocess.run(["sh", ...])``, ``os.system(...)``), not what it
    only reads. A conftest.py or a start-up file at any depth is a gate file."""
    tree = ["tox.ini", "noxfile.py", "tools/lint.py", "scripts/check.sh", "extra/more.sh",
            "rules.txt", "data.txt", "ci/tox.ini", "src/calc.py", "tests/test_calc.py"]  # fmt: skip
    texts = {
        "tox.ini": "[tox]\nenv_list = lint\n\n[testenv:lint]\ncommands =\n"
        "    python tools/lint.py\n    sh {toxinidir}/scripts/check.sh\n",
        "ci/tox.ini": "[testenv]\ncommands = sh scripts/check.sh\n",
        "noxfile.py": "import nox\n\n\n@nox.session\ndef lint(session):\n"
        '    session.run("python", "tools/lint.py")\n    session.run("sh", "scripts/check.sh")\n',
        "tools/lint.py": 'import os, subprocess\nsubprocess.run(["sh", "extra/more.sh"])\n'
        'os.system("sh rules.txt")\nDATA = open("data.txt").read()\n',
    }
    runs = ["extra/more.sh", "rules.txt", "scripts/check.sh", "tools/lint.py"]
    for command, own in (
        ("tox -e lint", "tox.ini"),
        ("python -m tox -e lint", "tox.ini"),
        ("nox -s lint", "noxfile.py"),
        ("python -m nox --noxfile noxfile.py -s lint", "noxfile.py"),
    ):
        assert sorted(gate_scripts([command], tree, texts.get)) == sorted([*runs, own]), command
    assert sorted(gate_scripts(["tox -c ci/tox.ini"], tree, texts.get)) == [
        "ci/tox.ini", "scripts/check.sh",
    ]  # fmt: skip
    nested = ["src/calc/conftest.py", "lib/site/extra.pth", "pkg/sitecustomize.py"]
    found = gate_definition_touched(
        nested, at_baseline=["src/calc/__init__.py"], deleted=[], texts={}, installed=INSTALLED
    )
    assert [p for p, _ in found] == nested


def test_a_plugins_imports_of_the_tree_and_a_commands_plugin_define_the_gates() -> None:
    """What a plugin imports of the tree runs as the plugin (its own folder first on
    sys.path, as mypy puts a plugin's); ``pytest -p NAME`` on a gate's command loads one
    too, and ``-p no:NAME`` loads none. With no plugin named, nothing is held."""
    tree = ["pyproject.toml", "src/calc.py", "src/calc_mypy.py", "src/mypy_rules.py",
            "src/rules/__init__.py", "src/rules/deep.py", "tools/__init__.py", "tools/pyplug.py",
            "tests/test_calc.py"]  # fmt: skip
    texts = {
        "pyproject.toml": '[tool.mypy]\nplugins = ["src/calc_mypy.py"]\n',
        "src/calc_mypy.py": PLUGIN + "import mypy_rules\nfrom rules import deep\n",
    }
    assert tool_plugins(["mypy src"], tree, texts.get) == [
        "src/calc_mypy.py", "src/mypy_rules.py", "src/rules/__init__.py", "src/rules/deep.py",
    ]  # fmt: skip
    assert tool_plugins(["python -m pytest -q -p tools.pyplug"], tree) == [
        "tools/__init__.py", "tools/pyplug.py",
    ]  # fmt: skip
    assert tool_plugins(["mkdir -p tools && python -m pytest -q"], tree) == []
    plain = {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-q -p no:cacheprovider"\n'}
    for command in ("python -m pytest -q -p no:cacheprovider", "mypy src", "ruff check ."):
        assert tool_plugins([command], tree, plain.get) == []
        assert not gate_scripts([command], tree, plain.get)
    # another tool's table of a pyproject.toml names no gate's plugin
    other = {"pyproject.toml": '[tool.hatch.build]\npaths = ["src"]\nplugins = ["calc"]\n'}
    assert tool_plugins(["mypy src"], tree, other.get) == []


def test_a_snapshot_of_the_machinery_without_its_refs_puts_back_the_rest_and_no_ref(
    tmp_path: Path,
) -> None:
    """The judge's snapshots of the clone's machinery read no refs (it never puts them
    back): a hook written meanwhile is still put back, and asking such a snapshot to put
    refs back is refused rather than done with refs it never read."""
    import subprocess

    from relay.edges.worktree import WorkTree
    from relay.ratchet.judge import GitState

    root = tmp_path / "clone"
    root.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "one"]):
        subprocess.run(
            ["git", "-c", "user.name=a", "-c", "user.email=a@b.invalid", *args],
            cwd=root, check=True, capture_output=True,
        )  # fmt: skip
    tree = WorkTree.open(root)
    snapshot = GitState.of(tree, refs=False)
    assert snapshot.refs is None and GitState.of(tree).refs == {"refs/heads/main": tree.head()}
    hook = root / ".git/hooks/pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    assert snapshot.put_back(tree, refs=False) == [
        "`.git/hooks/pre-commit` is the clone's own machinery"
    ]
    assert not hook.exists()
    with pytest.raises(ValueError, match="did not read its refs"):
        snapshot.put_back(tree)
