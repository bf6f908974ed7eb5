"""`relay loop init`, `goal add`, `status`, `next` and `check` on a real repository: what
init writes and keeps, the gates it learns, the goals and their order, and the contract
refused by the field that is wrong; a hand edit relay cannot read is a one-line error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from loop_project import PY, Project, git, make_project

from relay.protocol.master import Master
from relay.protocol.spine import render_spine


def test_init_keeps_what_relay_init_wrote_and_learns_the_gates(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)  # a project to copy the layout from
    root = tmp_path / "fresh"
    root.mkdir()
    for name in ("pyproject.toml", ".gitignore", "src/calc.py", "tests/test_calc.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(project.read(name))
    relay_spine = render_spine(Master(repository="o/n"))
    for name, text in relay_spine.items():
        (root / "docs/loop" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs/loop" / name).write_text(text)
    git("init", "-q", cwd=root)
    git("add", "-A", cwd=root)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "relay init", cwd=root)
    fresh = Project(root, project.scripts)
    ran = fresh.loop("init", "--yes")
    assert ran.status == 0, ran
    assert [(g["name"], g["command"].split(" -m ")[-1]) for g in ran.data["gates"]] == [
        ("test", "pytest -q"),
        ("lint", "ruff check ."),
        ("format", "ruff format --check ."),
    ]
    assert ran.data["kept"] == ["docs/loop/handover.md"]
    for name, text in relay_spine.items():
        assert fresh.read(f"docs/loop/{name}").startswith(text), name  # every byte kept
    loop = fresh.read("docs/loop/LOOP.md")
    for heading in (
        "Roles",
        "Iteration",
        "Guardrails",
        "Security-critical areas",
        "Stopping conditions",
        "What works here",
    ):
        assert f"\n## {heading}\n" in loop
    for name in (
        "CONTRACT.md",
        "state/iteration-log.md",
        "state/failures.md",
        "state/learned-rules.md",
        "state/baseline.md",
    ):
        assert (root / "docs/loop" / name).is_file()
    assert fresh.subjects()[-1] == "loop: set up the loop spine" and fresh.clean()
    again = fresh.loop("init", "--yes", "--gate", "make test")
    assert again.data["written"] == [] and again.data["commit"] is None
    assert "make test" not in fresh.read("docs/loop/CONTRACT.md")  # never overwritten


def test_goals_are_added_shown_and_ordered(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    assert project.loop("goal", "add", "First", "--accept", "true").data == {"goal": "G1"}
    second = project.loop(
        "goal", "add", "Second", "--accept", "true", "--depends", "G1", "--security"
    )
    assert second.data == {"goal": "G2"}
    bad = project.loop("goal", "add", "Third", "--accept", "true", "--depends", "G7")
    assert bad.status == 2 and "G7" in bad.errors[0]["message"]
    goals = project.read("docs/loop/GOALS.md")
    assert (
        "### G2: Second\n\n- Accept: `true`\n- Depends on: G1\n- Security-critical: yes\n" in goals
    )
    status = project.loop("status").data
    assert [(g["id"], g["state"], g["attempts"]) for g in status["goals"]] == [
        ("G1", "open", 0),
        ("G2", "open", 0),
    ]
    assert set(status["goals"][0]) == {
        "id",
        "title",
        "state",
        "attempts",
        "failed_passes",
        "last_verdict",
        "notes",
        "depends",
        "security",
        "accept",
        "metric",
        "verify_on",
        "may_edit_tests",
    }
    assert project.loop("next").data == {
        "goal": "G1",
        "title": "First",
        "reason": "G1 is the next unblocked goal",
    }
    assert project.subjects()[-2:] == ["loop: add goal G1: First", "loop: add goal G2: Second"]
    assert project.clean()


def test_next_names_a_cycle_made_by_hand(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    project.loop("goal", "add", "A", "--accept", "true")
    project.loop("goal", "add", "B", "--accept", "true", "--depends", "G1")
    goals = project.read("docs/loop/GOALS.md")
    project.write(
        "docs/loop/GOALS.md",
        goals.replace(
            "### G1: A\n\n- Accept: `true`\n", "### G1: A\n\n- Accept: `true`\n- Depends on: G2\n"
        ),
    )
    ran = project.loop("next")
    assert ran.data["goal"] is None and "G1 -> G2 -> G1" in ran.data["reason"]


def test_a_spine_file_relay_cannot_read_is_a_one_line_error(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    goals = project.read("docs/loop/GOALS.md")
    project.write("docs/loop/GOALS.md", goals.replace("- Accept:", "- Acceptance:"))
    line = (
        project.read("docs/loop/GOALS.md")
        .splitlines()
        .index(
            next(t for t in project.read("docs/loop/GOALS.md").splitlines() if "Acceptance" in t)
        )
        + 1
    )
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "loop", "status", "--repo-dir", str(project.root)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and done.stdout == ""
    [message] = done.stderr.splitlines()
    assert message.startswith(f"relay: docs/loop/GOALS.md:{line}: a goal's lines are")


def test_check_refuses_a_contract_naming_the_field(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    ok = project.loop("check")
    assert ok.status == 0 and ok.data["ok"] is True and ok.data["authorised"] == []
    contract = project.read("docs/loop/CONTRACT.md")
    cases = {
        "Gates": (contract.split("## Gates")[1].split("## Metric")[0], "\n\n(none)\n\n"),
        "`tests/fixtures/` does not exist": (
            "- `docs/loop/state/`",
            "- `docs/loop/state/`\n- `tests/fixtures/`",
        ),
        "no `Iterations:` line": ("- Iterations: 20\n", ""),
    }
    for words, (old, new) in cases.items():
        project.write("docs/loop/CONTRACT.md", contract.replace(old, new))
        ran = project.loop("check")
        assert ran.status == 2 and ran.errors[0]["code"] == "contract", ran
        assert words in ran.errors[0]["message"], ran.errors
        maker = project.script("maker", "count('maker')\n")
        refused = project.loop("run", "--maker", maker)
        assert refused.status == 2 and project.calls("maker") == 0  # run checks first
    project.write("docs/loop/CONTRACT.md", contract)
    assert project.loop("check").status == 0
    assert PY in contract


def test_init_asks_about_each_proposed_gate(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    root = tmp_path / "asked"
    root.mkdir()
    (root / "pyproject.toml").write_text(project.read("pyproject.toml"))
    (root / "tests").mkdir()
    git("init", "-q", cwd=root)
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "loop", "init", "--repo-dir", str(root)],
        input="\nn\nyes\n",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("[Y/n]") == 3 and "(from pyproject.toml)" in done.stderr
    contract = (root / "docs/loop/CONTRACT.md").read_text()
    assert "- test: `" in contract and "- format: `" in contract and "- lint: `" not in contract
    silent = subprocess.run(
        [sys.executable, "-m", "relay.cli", "loop", "init", "--repo-dir", str(tmp_path / "calc")],
        input="",
        capture_output=True,
        text=True,
    )
    assert silent.returncode == 0  # everything exists: nothing to ask, nothing written
