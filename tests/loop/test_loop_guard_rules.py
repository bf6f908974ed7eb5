"""The guard's and the classifier's pure rules, without running anything."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from relay.loop.agents import Signal, read_contract
from relay.loop.classify import is_transient
from relay.loop.guard import (
    branch_moved,
    gate_definition_touched,
    git_meta_changed,
    is_test_file,
    orphan_group,
    spine_touched,
    suppressions_added,
)


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
    ]
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
        [*new, "src/calc.py"], at_baseline=base, deleted=[], texts=texts
    )
    assert [p for p, _ in found] == [*new, "src/calc.py"]
    assert "gained `# ruff: noqa`" in found[-1][1]
    allowed = gate_definition_touched(
        [*new, "src/calc.py", "setup.cfg"],
        at_baseline=base,
        deleted=[],
        texts=texts,
        may_edit_tests=True,
    )
    assert [p for p, _ in allowed] == ["tests/conftest.py", "setup.cfg"]
    assert suppressions_added("# ruff: noqa\n", "# ruff: noqa\nimport os\n") == []
    assert suppressions_added("", "  # Flake8: NOQA\n// @ts-nocheck\nx = 1  # noqa\n") == [
        "# Flake8: NOQA",
        "// @ts-nocheck",
    ]
