"""The roster's settings applied, on a real project: the maker's instructions file heads
its brief, its `Limits: timeout` stops a run that goes on too long and its `retries`
bound the attempts a goal gets (over the contract's), `relay loop roles` says what
applies; and each agent CLI is given the roster's model with its own model flag."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from loop_project import TEST_GATE, make_project

from relay.loop.agents import Agent, invocation


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_each_agent_cli_gets_the_model_with_its_own_flag() -> None:
    for name in ("claude", "codex", "gemini", "aider"):
        argv = invocation(Agent(name, "make"), "/b/brief.md", history="/h", model="m-1").argv
        assert argv[argv.index("--model") + 1] == "m-1", argv
        assert "--model" not in invocation(Agent(name, "make"), "/b/b.md", history="/h").argv
    codex = invocation(Agent("codex", "review"), "/b/r.md", history="/h", model="m-1").argv
    assert codex[-1] == "-"  # the brief still comes last, on standard input


SLOW = """
import time
count("maker")
time.sleep(60)  # the roster's timeout stops it long before
"""


def test_the_rosters_instructions_timeout_and_retries_bound_the_makers_runs(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), retries=2)
    maker = project.script("maker", SLOW)
    project.write("docs/loop/roles/maker.md", "Always write a docstring for what you add.\n")
    loop = project.read("docs/loop/LOOP.md")
    roster = (
        f"- maker: command `{maker}`\n"
        "  - Instructions: `docs/loop/roles/maker.md`\n"
        "  - Limits: timeout 3s, retries 0\n"
    )
    project.write(
        "docs/loop/LOOP.md", loop.replace("## Iteration\n", roster + "\n## Iteration\n", 1)
    )
    project.git("add", "-A")
    project.git("commit", "-qm", "the roster's maker")
    roles = project.loop("roles")
    assert roles.status == 0, roles
    (row,) = roles.data["roles"]
    assert row["applies"] == (
        "docs/loop/roles/maker.md heads its brief; each run stopped after 3s; 0 retries per goal"
    )
    started = time.monotonic()
    ran = project.loop("run", "--max-iterations", "1")
    assert time.monotonic() - started < 40, ran  # not the contract's 30-minute maker timeout
    assert ran.data.get("kept") == [], (ran.status, ran.errors, ran.stderr[-2000:])
    # retries 0 from the roster (the contract says 2): one attempt, then the pass ends
    assert project.calls("maker") == 1
    brief = project.seen("maker", 1)
    assert brief.startswith("## Your instructions (docs/loop/roles/maker.md)"), brief[:200]
    assert "Always write a docstring for what you add." in brief
    assert "# G1" in brief  # the brief itself follows
    assert "timeout" in ran.stderr or any("timeout" in r for r in ran.data["reverted"]), ran
    assert project.clean()
