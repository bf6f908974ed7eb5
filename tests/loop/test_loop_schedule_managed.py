"""An unattended run on the Managed Agents backend: `relay loop schedule --backend
managed-agents` registers a daily entry whose command line carries the backend, keeps the
API key as the managed roster's secret (never in the entry or the env file), and is
refused at once when no roster is recorded or the key would not reach the fired run. The
crontab line, fired as cron fires it (``env -i``, /bin/sh), runs triage and then a session
of the coordinator on the stand-in of the Managed Agents API, whose claim relay judges
with its own gates and keeps."""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import managed_standin
import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project
from managed_standin import KEY, Standin
from worlds import git

from relay.loop.goals import GoalState, parse_board

standin_process = managed_standin.standin_process  # the fixtures, shared
standin = managed_standin.standin


@pytest.fixture(autouse=True)
def _no_keychain(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring
    from keyring.backends import fail

    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())  # the 0600 file
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def crontab() -> list[str]:
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return done.stdout.splitlines() if done.returncode == 0 else []


def fire(line: str) -> subprocess.CompletedProcess[str]:
    """Run a crontab line's command as cron does: /bin/sh -c, a minimal environment."""
    command = line.split(" ", 5)[5].replace("\\%", "%")
    env = ["env", "-i", f"HOME={os.environ['HOME']}", f"LOGNAME={getpass.getuser()}"]
    argv = [*env, "SHELL=/bin/sh", "PATH=/usr/bin:/bin", "/bin/sh", "-c", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)


def script_of(line: str) -> str:
    word = line.split(" ", 5)[5].split(" # relay:")[0].removeprefix("/bin/sh ")
    path = Path(shlex.split(word.replace('"$HOME"', os.environ["HOME"]))[0])
    return path.read_text(encoding="utf-8")


def mul_diff(root: Path) -> str:
    """The change that makes G1 pass, as the coordinator's diff (made, then undone)."""
    (root / "src/calc.py").write_text(CALC_MUL)
    (root / "tests/test_mul.py").write_text(TEST_MUL)
    git("add", "-N", "tests/test_mul.py", cwd=root)
    diff = git("diff", cwd=root)
    git("reset", "-q", cwd=root)
    (root / "tests/test_mul.py").unlink()
    git("checkout", "-q", "--", "src/calc.py", cwd=root)
    return diff


@pytest.mark.timeout(300)
def test_a_scheduled_run_uses_the_managed_backend(
    tmp_path: Path,
    standin: Callable[..., Standin],
    monkeypatch: pytest.MonkeyPatch,
    real_crontab: None,
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    # the contract's run command: its checker judges the managed claims (its maker is the
    # roster's coordinator, so --maker is not used); without it the unattended run is refused
    passer = project.script(
        "passer",
        ('count("passer")\nprint(cite())\nprint(\'{"verdict": "approve", "findings": []}\')\n'),
    )
    contract = project.read("docs/loop/CONTRACT.md")
    line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    run = f"`` relay loop run --maker {shlex.quote(passer)} --checker {shlex.quote(passer)} ``"
    project.write("docs/loop/CONTRACT.md", contract.replace(line, run))
    project.git("commit", "-qam", "the run command the schedule uses")
    diff = mul_diff(project.root)
    api = standin([[{"say": f"DONE G1\nAdded mul() and its test.\n```diff\n{diff}```\n"}]])
    schedule = ("schedule", "--at", "02:30", "--scheduler", "cron", "--backend", "managed-agents")
    # refused at once, nothing registered: no roster yet, then a key that would not reach it
    early = project.loop(*schedule, "--pass-secret", "ANTHROPIC_API_KEY")
    assert early.status != 0 and "no managed roster is recorded" in early.errors[0]["message"]
    assert project.loop("roster", "create", "--backend", "managed-agents").status == 0
    keyless = project.loop(*schedule)
    assert keyless.status != 0, keyless
    assert "needs ANTHROPIC_API_KEY" in keyless.errors[0]["message"]
    # a job to ask a person on, from a clone that is no relay node: refused now
    nobody = project.loop(*schedule, "--pass-secret", "ANTHROPIC_API_KEY", "--ask-on", "5")
    assert nobody.status != 0, nobody
    assert "--ask-on 5: this clone is not a node of the relay" in nobody.errors[0]["message"]
    assert crontab() == []

    # the fired run runs the relay under test (a PYTHONPATH that points at it goes along)
    code = ("--pass-env", "PYTHONPATH") if os.environ.get("PYTHONPATH") else ()
    ran = project.loop(
        *schedule, "--pass-secret", "ANTHROPIC_API_KEY", "--pass-env", "ANTHROPIC_BASE_URL", *code
    )
    assert ran.status == 0, ran
    assert ran.data["backend"] == "managed-agents"
    assert ran.data["argv"][-2:] == ["--backend", "managed-agents"]
    assert ran.data["secrets"] == {"ANTHROPIC_API_KEY": ["maker"]}
    [line] = crontab()
    script = script_of(line)
    assert "loop scheduled" in script and "--backend managed-agents" in script, script
    env_file = Path(ran.data["env_file"])
    for text in (line, script, env_file.read_text(encoding="utf-8")):
        assert KEY not in text
    monkeypatch.delenv("ANTHROPIC_API_KEY")

    fired = fire(line)
    logs = project.root / ".git/relay/loop"
    said = fired.stderr + "".join(p.read_text() for p in logs.glob("relay-loop*.log"))
    assert fired.returncode == 0, said
    # the fired run started a session of the coordinator, whose claim relay judged and kept
    row = next(r for r in parse_board(project.read("docs/loop/BOARD.md")).rows if r.goal == "G1")
    assert row.state is GoalState.DONE, (row, said[-3000:])
    assert "G1: Multiply" in "\n".join(project.subjects())
    session = next(
        ln for ln in project.read("docs/loop/BOARD.md").splitlines() if "Session `" in ln
    )
    sid = session.split("`")[1]
    assert api.sent("user.message", sid), session  # relay spoke to that session
    assert project.read("src/calc.py") == CALC_MUL and project.clean()
    assert project.calls("passer") >= 1, said[-4000:]  # the contract's checker judged it
