"""The README's `relay loop` walk-through, run as a newcomer copies it: every block fenced
as ```` ```sh loop-quickstart ````, in order, in one shell, from the root of the clone (the
blocks make their project in a fresh temporary folder and write nothing in the clone).
Nothing is replaced: the example maker the README names is the one shipped under
docs/loop/examples/, and what the run leaves (git log, handover.md, learned-rules.md) is
read back."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from relay.loop.records import handover_entries, parse_rules

ROOT = Path(__file__).resolve().parent.parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```sh loop-quickstart\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def test_the_readme_loop_section_runs_as_written_with_the_shipped_example_maker(
    tmp_path: Path,
) -> None:
    blocks = FENCE.findall(README.read_text(encoding="utf-8"))
    script = "\n".join(blocks)
    assert 'relay loop run --maker "$examples/maker.sh"' in script
    assert (ROOT / "docs/loop/examples/maker.sh").stat().st_mode & 0o111  # executable
    (tmp_path / "walk.sh").write_text("set -eux\n" + script, encoding="utf-8")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GITHUB_TOKEN", "GH_TOKEN") and not k.startswith(("GIT_", "RELAY_"))
    }
    env["HOME"] = str(tmp_path / "home")  # no one's git config
    env["TMPDIR"] = str(tmp_path)  # where the walk-through's `mktemp -d` lands
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the project's own pytest, started quickly
    before = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    done = subprocess.run(
        ["bash", str(tmp_path / "walk.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    after = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
    ).stdout
    assert after == before  # the clone is untouched
    [project] = list(tmp_path.glob("tmp.*/calc"))
    assert "- G1 Modern type hints in calc (" in out
    assert "Stopped: the rest are blocked: G2 failed a pass in this run" in out
    calc = (project / "src/calc.py").read_text(encoding="utf-8")
    assert calc == "def total(xs: list[int]) -> int:\n    return sum(xs)\n"
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=project, capture_output=True, text=True
    ).stdout.splitlines()
    assert "G1: Modern type hints in calc" in log and "loop: G2 attempt 1 failed (test)" in log
    handover = handover_entries((project / "docs/loop/handover.md").read_text(encoding="utf-8"))
    kept = next(e for e in handover if e.startswith("## G1 Modern type hints in calc ("))
    assert "Kept on attempt 1 in iteration 1;" in kept
    assert "Findings it answered: UP006 x1, UP035 x1. Files changed: src/calc.py." in kept
    failed = next(e for e in handover if e.startswith("## G2 attempt 1 failed (test)"))
    assert "grep: README.md: No such file or directory" in failed
    assert "Next hypothesis: attempt 2 heals this on the same tree" in failed
    _, rules = parse_rules(
        (project / "docs/loop/state/learned-rules.md").read_text(encoding="utf-8")
    )
    assert [(r.category, r.goal, r.attempt) for r in rules] == [("test", "G2", 4)]
    assert "What works here" in (project / "docs/loop/LOOP.md").read_text(encoding="utf-8")
    assert "[R1]" not in (project / "docs/loop/LOOP.md").read_text(encoding="utf-8")


def test_the_readme_shows_an_overnight_run_with_one_agent_making_and_another_checking() -> None:
    text = README.read_text(encoding="utf-8")
    assert "`` relay loop run --maker claude --checker codex:review ``" in text
    assert "relay loop schedule --at 02:30" in text
    assert "./agents/maker.sh" not in text  # no maker the clone does not ship
