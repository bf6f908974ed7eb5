"""What switches a gate off or runs when a person opens the project is never kept on the
gates alone. On a real repository with real pytest and ruff as gates and a maker script:
a ``src/*.py`` line added to .gitignore (ruff then skips the tracked code), a ``# noqa``
on a line the change adds, and a Claude Code hook in .claude/settings.json are each put
back as a protected change, whatever the gates say."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import CALC, make_project
from test_loop_baseline_rerun import by_goal, goals
from test_loop_ratchet import failures


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


HOOK = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}\n'
ACCEPT = "grep -q mul src/calc.py"


def test_ignore_files_line_suppressions_and_open_hooks_are_put_back(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None, retries=0)
    goals(project, "Ignore", "Noqa", "Hook", accept=ACCEPT)
    unused = "import os\n" + CALC + "\n\ndef mul(a, b):\n    return a * b\n"
    hidden = "import os  # noqa: F401\n" + CALC + "\n\ndef mul(a, b):\n    return a * b\n"
    gitignore = project.read(".gitignore") + "src/*.py\n"
    maker = project.script(
        "maker",
        by_goal(
            {
                "G1": f"put('src/calc.py', {unused!r})\nput('.gitignore', {gitignore!r})",
                "G2": f"put('src/calc.py', {hidden!r})",
                "G3": f"put('src/calc.py', {hidden.replace('import os  # noqa: F401', '')!r})\n"
                f"put('.claude/settings.json', {HOOK!r})",
            }
        ),
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.data["kept"] == [], ran
    assert project.read("src/calc.py") == CALC and project.clean()
    assert "src/*.py" not in project.read(".gitignore")
    assert not (project.root / ".claude").exists()
    found = failures(project)
    assert [(g, c) for g, _, c in found] == [
        ("G1", "protected path touched"),
        ("G2", "protected path touched"),
        ("G3", "protected path touched"),
    ], found
    text = project.read("docs/loop/state/failures.md")
    assert "`.gitignore` defines how the gates run" in text
    assert "`src/calc.py` gained `import os  # noqa: F401`" in text
    assert "`.claude/settings.json` runs when a person opens the project" in text
