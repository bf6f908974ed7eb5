"""The overnight path on a real third-party project: inflection 0.5.1, unpacked from the
source distribution the test set-up downloads from the package registry (not a project
written for the test). A failing test and a lint finding are planted; `relay loop schedule`
writes the cron entry, and the entry is fired as cron fires it (cron's minimal environment,
through /bin/sh). Triage enqueues both findings, the scheduled run fixes both (the fix of
the failing test adds tests to the project's existing test file), and every loop commit is
green: each is checked out and its gates run again."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from loop_project import Project, git
from test_loop_overnight_env import crontab, fire, project_venv, with_run_command

from relay.loop.goals import GoalState, parse_board

SDIST = "inflection-0.5.1"
TEST_GATE = "python -m pytest -q -p no:cacheprovider test_inflection.py"
LINT_GATE = "python -m ruff check --no-cache --isolated --select F inflection"
SOURCE = Path(__file__).resolve().parents[2] / "build" / "sdists"

# The agent stand-in: a real program that reads its brief and fixes what the goal names,
# as a coding agent would, and says what it changed and why in the file the brief names.
AGENT = r"""
n = count('maker')
src = pathlib.Path('inflection/__init__.py')
tests = pathlib.Path('test_inflection.py')
why = []
title = BRIEF.splitlines()[0]  # `# G1: Fix ...`: the goal this attempt works, and only it
if 'F401' in title:
    src.write_text(src.read_text().replace('import os\n', '', 1))
    first = not (SCRIPTS / 'f401.tried').exists()
    (SCRIPTS / 'f401.tried').write_text('')
    if first:  # the first try forgets to say why: unexplained, healed on the next
        UNEXPLAINED = True
        sys.exit(0)
    why.append('removed the unused `import os` that ruff (F401) reported')
if 'dasherize' in title:
    src.write_text(src.read_text().replace("word.replace('_', '+')", "word.replace('_', '-')"))
    tests.write_text(tests.read_text() + (
        '\n\ndef test_dasherize_keeps_words_without_underscores():\n'
        '    assert inflection.dasherize("puni") == "puni"\n'
        '\n\ndef test_dasherize_replaces_every_underscore():\n'
        '    assert inflection.dasherize("a_b_c") == "a-b-c"\n'
    ))
    why.append('dasherize joined words with + instead of -; put - back and added two tests')
explain('\n'.join(why) + '\n')  # the file the brief names (RELAY_LOOP_EXPLAIN)
"""


def sdist() -> Path:
    """The source distribution `make test`'s set-up downloads into the checkout's build
    folder (here too when the test runs alone); a test that cannot have it fails."""
    archive = SOURCE / f"{SDIST}.tar.gz"
    if not archive.exists():
        SOURCE.mkdir(parents=True, exist_ok=True)
        got = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", "--dest", str(SOURCE), "inflection==0.5.1"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        if got.returncode != 0 or not archive.exists():
            pytest.fail(
                f"{SDIST} could not be downloaded ({got.stderr.strip()[-300:]}); run `make"
                f" build/sdists/{SDIST}.tar.gz` where the package registry can be reached"
            )
    return archive


def planted(where: Path) -> Project:
    """inflection as released, committed, then a regression and an unused import planted."""
    with tarfile.open(sdist()) as tar:
        tar.extractall(where, filter="data")
    root = where / SDIST
    for name in ("inflection.egg-info", "docs/__pycache__"):
        subprocess.run(["rm", "-rf", str(root / name)], check=True)
    (root / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    git("init", "-q", "-b", "main", cwd=root)
    git("config", "user.name", "Upstream", cwd=root)
    git("config", "user.email", "upstream@example.invalid", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-qm", f"{SDIST} as released", cwd=root)
    source = root / "inflection" / "__init__.py"
    text = source.read_text()
    assert "word.replace('_', '-')" in text and "\nimport re\n" in text
    text = text.replace("word.replace('_', '-')", "word.replace('_', '+')", 1)
    source.write_text(text.replace("\nimport re\n", "\nimport os\nimport re\n", 1))
    git("commit", "-qam", "a careless refactor", cwd=root)
    scripts = where / "scripts"
    scripts.mkdir(exist_ok=True)
    return Project(root, scripts)


def failing(project: Project, commit: str) -> set[str]:
    """The gates that fail on ``commit``, checked out apart from the clone."""
    tree = project.root.parent / f"at-{commit[:10]}"
    git("worktree", "add", "-q", "--detach", str(tree), commit, cwd=project.root)
    try:
        return {
            gate
            for gate in (TEST_GATE, LINT_GATE)
            if subprocess.run(shlex.split(gate), cwd=tree, capture_output=True).returncode
        }
    finally:
        git("worktree", "remove", "--force", str(tree), cwd=project.root)


@pytest.mark.timeout(400)  # a whole scheduled run (20 s alone) waited for up to 300 s
def test_a_scheduled_run_fixes_a_real_projects_red_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    import os

    project = planted(tmp_path)
    bin_dir = project_venv(tmp_path / "venv")  # the project's own interpreter, not cron's
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    upstream = project.git("rev-parse", "HEAD").strip()
    init = project.loop("init", "--yes", "--gate", TEST_GATE, "--gate", LINT_GATE)
    assert init.status == 0, init
    with_run_command(project, project.script("agent", AGENT))
    ran = project.loop("schedule", "--at", "02:30", "--scheduler", "cron", "--max-iterations", "6")
    assert ran.status == 0, ran
    [line] = crontab()
    fired = fire(line)
    err = project.root / ".git/relay/loop/relay-loop.err.log"
    assert fired.returncode == 0, fired.stderr + (err.read_text() if err.exists() else "")

    # triage enqueued both findings, the run kept both
    goals = project.read("docs/loop/GOALS.md")
    assert "Fix the failing test test_inflection.py::test_dasherize" in goals, goals
    assert "Fix F401 in inflection/__init__.py" in goals, goals
    rows = parse_board(project.read("docs/loop/BOARD.md")).rows
    assert rows and all(r.state is GoalState.DONE for r in rows), rows
    source = project.read("inflection/__init__.py")
    assert "word.replace('_', '-')" in source and "import os\n" not in source
    assert "def test_dasherize_replaces_every_underscore" in project.read("test_inflection.py")

    # each kept commit leaves no gate worse, and the last leaves them all green
    loop_commits = project.git("rev-list", "--reverse", f"{upstream}..HEAD").split()[1:]
    subject = {c: project.git("log", "-1", "--format=%s", c) for c in loop_commits}
    kept = [c for c in loop_commits if re.match(r"G\d+: ", subject[c])]
    assert len(kept) >= 2, project.subjects()
    before = failing(project, upstream)
    assert before == {TEST_GATE, LINT_GATE}  # the planted red build
    for commit in kept:  # no kept commit is worse than the last; the last is green
        now = failing(project, commit)
        assert now <= before, (subject[commit], now)
        before = now
    assert before == set(), project.subjects()

    # the spine says what happened and why, in the maker's words
    handover = project.read("docs/loop/handover.md")
    assert "dasherize joined words with + instead of -" in handover, handover
    assert "removed the unused `import os`" in handover, handover
    log = project.read("docs/loop/state/iteration-log.md")
    assert "G1" in log and "G3" in log, log
    # the unexplained first try of the F401 goal taught a rule, credited to it, by the
    # self-heal that followed; its diagnosis and next hypothesis reached the handover
    from relay.loop.records import parse_rules

    lint_goal = re.search(r"### (G\d+): Fix F401", goals)
    assert lint_goal is not None, goals
    _, rules = parse_rules(project.read("docs/loop/state/learned-rules.md"))
    assert [(r.category, r.goal, r.attempt) for r in rules] == [
        ("unexplained", lint_goal.group(1), 1)
    ], rules
    assert "the maker left no account of what it changed and why" in handover
    # no goal of this run optimises a metric: there is no experiment ledger to write
    assert not (project.root / "docs/loop/EXPERIMENTS.md").exists()
    logs = list((project.root / "docs/loop/state/gates").glob("run-*/*.log"))
    triaged = list((project.root / "docs/loop/state/gates").glob("triage-*/*.log"))
    assert logs and triaged
    assert any("failed" in p.read_text() and "dasherize" in p.read_text() for p in triaged)
    assert project.clean()
