"""Where the maker's boundary is env-level only (no namespaces: RELAY_SANDBOX=env makes
relay act so here), a maker starts only when the person said so: `relay loop run` with
--allow-env-only, and a scheduled run when the contract lists `- env-level only maker`.
Real git repositories, real pytest gates, makers that are scripts."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project

from relay.loop.contract import ENV_ONLY_MAKER
from relay.loop.guard import ALLOW_ENV_ONLY


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


PUT_MUL = f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"


def test_an_env_level_only_boundary_starts_no_maker_unless_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAY_SANDBOX", "env")
    project = make_project(tmp_path, gates=(TEST_GATE,))
    maker = project.script("maker", f"count('maker')\n{PUT_MUL}")
    before = project.subjects()
    refused = project.loop("run", "--maker", maker)
    assert refused.status != 0 and project.calls("maker") == 0, refused
    [error] = refused.errors
    assert "env-level only" in error["message"] and ALLOW_ENV_ONLY in error["message"], error
    assert "\n" not in error["message"]
    assert project.subjects() == before and project.clean()
    ran = project.loop("run", "--maker", maker, ALLOW_ENV_ONLY)
    assert ran.status == 0 and [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    assert project.calls("maker") == 1


def test_an_unattended_run_at_env_level_only_needs_the_contracts_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the schedule runs has no person to say --allow-env-only: the contract says it."""
    monkeypatch.setenv("RELAY_SANDBOX", "env")
    project = make_project(tmp_path, gates=(TEST_GATE,))
    maker = project.script("maker", f"count('maker')\n{PUT_MUL}")
    contract = project.read("docs/loop/CONTRACT.md")
    run_line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    command = maker.replace("'", "")
    contract = contract.replace(run_line, f"`` relay loop run --maker '{command}' ``")
    project.write("docs/loop/CONTRACT.md", contract)
    project.git("commit", "-qam", "the run command the schedule uses")
    before = project.subjects()
    refused = project.loop("scheduled")
    assert refused.status != 0 and project.calls("maker") == 0, refused
    message = refused.errors[0]["message"]
    assert f"`- {ENV_ONLY_MAKER}`" in message and ALLOW_ENV_ONLY not in message, message
    none = "## Authorised irreversible actions\n\n(none)\n"
    assert none in contract
    allowed = contract.replace(none, none.replace("(none)", f"- {ENV_ONLY_MAKER}"))
    project.write("docs/loop/CONTRACT.md", allowed)
    assert project.subjects() == before  # the refused run committed nothing
    project.git("commit", "-qam", "a maker may run at env-level only")
    ran = project.loop("scheduled")
    assert ran.status == 0 and [k["goal"] for k in ran.data["run"]["kept"]] == ["G1"], ran
    assert project.calls("maker") == 1
