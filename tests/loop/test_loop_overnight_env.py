"""The overnight path in the environment the project's gates need: a project whose gates
run `python` from a virtualenv of its own (not on cron's PATH, and holding a module the
tests import), scheduled with `relay loop schedule`, and the crontab line fired exactly as
cron fires it (``env -i`` with HOME, LOGNAME, SHELL=/bin/sh and PATH=/usr/bin:/bin,
through /bin/sh). The gates run green from the env file the line's script names, their
output is kept under the spine's state and linked from the report; a secret reaches its
role alone; the line stays short under a very long path; `relay doctor` fails in one line
when a gate cannot run the scheduler's way; and a run's bounds are said on BOARD.md."""

from __future__ import annotations

import getpass
import os
import re
import shlex
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL, Project, make_project

from relay.loop.goals import GoalState, parse_board

SECRET = "sk-relay-test-5f2a9c1e7b"  # not token-shaped: only the name says it is secret
TEST_GATE = "python -m pytest -q -p no:cacheprovider"  # `python`: the project's venv's
LINT_GATE = "python -m ruff check --no-cache ."
# the project's own test: needs its venv (projdep), the variable passed with --pass-env,
# and never sees the maker's secret
TEST_ENV = (
    "import os\n\nimport projdep\n\n\ndef test_env():\n"
    "    assert projdep.READY\n"
    '    assert os.environ["CALC_MODE"] == "strict"\n'
    '    assert "LOOP_AGENT_API_KEY" not in os.environ\n'
)


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import keyring
    from keyring.backends import fail

    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())  # no OS keychain
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the cron scripts, and cron's HOME


def project_venv(where: Path) -> Path:
    """A real virtualenv whose python imports the test toolchain (pytest, ruff) and
    ``projdep``, a module only it has; its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    [site] = list(where.glob("lib/python*/site-packages"))
    import sysconfig

    (site / "toolchain.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (site / "projdep.py").write_text("READY = True\n")
    return where / "bin"


def cron_env() -> list[str]:
    """`env -i` and what cron gives a job."""
    return [
        "env",
        "-i",
        f"HOME={os.environ['HOME']}",
        f"LOGNAME={getpass.getuser()}",
        "SHELL=/bin/sh",
        "PATH=/usr/bin:/bin",
    ]


def fire(line: str) -> subprocess.CompletedProcess[str]:
    """Run a crontab line's command as cron does: /bin/sh -c, minimal environment."""
    command = line.split(" ", 5)[5].replace("\\%", "%")
    argv = [*cron_env(), "/bin/sh", "-c", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)


def crontab() -> list[str]:
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return done.stdout.splitlines() if done.returncode == 0 else []


def script_path(line: str) -> Path:
    word = line.split(" ", 5)[5].split(" # relay:")[0].removeprefix("/bin/sh ")
    return Path(shlex.split(word.replace('"$HOME"', os.environ["HOME"]))[0])


def with_run_command(project: Project, maker: str) -> None:
    contract = project.read("docs/loop/CONTRACT.md")
    line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    run = f"`` relay loop run --maker {shlex.quote(maker)} ``"
    project.write("docs/loop/CONTRACT.md", contract.replace(line, run))
    project.git("commit", "-qam", "the run command the schedule uses")


def venv_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, root: Path | None = None
) -> Project:
    """The calc project with gates that need its venv (on this shell's PATH only)."""
    bin_dir = project_venv(tmp_path / "venv")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CALC_MODE", "strict")
    project = make_project(root or tmp_path, gates=(TEST_GATE, LINT_GATE))
    project.write("tests/test_env.py", TEST_ENV)
    project.git("add", "-A")
    project.git("commit", "-qm", "a test that needs the project's venv")
    return project


def test_the_cron_entry_fired_as_cron_fires_it_runs_the_gates_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    project = venv_project(tmp_path, monkeypatch)
    bare = subprocess.run(
        [*cron_env(), "/bin/sh", "-c", TEST_GATE], cwd=project.root, capture_output=True
    )
    assert bare.returncode != 0  # cron's own PATH cannot run the gates
    monkeypatch.setenv("LOOP_AGENT_API_KEY", SECRET)
    maker = project.script(
        "maker",
        "count('maker')\n"
        "(SCRIPTS / 'maker.saw').write_text(os.environ.get('LOOP_AGENT_API_KEY', '-'))\n"
        f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    with_run_command(project, maker)
    ran = project.loop(
        "schedule",
        "--at",
        "02:30",
        "--max-iterations",
        "3",
        "--scheduler",
        "cron",
        "--pass-env",
        "CALC_MODE",
        "--pass-secret",
        "LOOP_AGENT_API_KEY:maker",
    )
    assert ran.status == 0, ran
    assert ran.data["secrets"] == {"LOOP_AGENT_API_KEY": ["maker"]}
    assert str(tmp_path / "venv" / "bin") == ran.data["path"][0]
    [line] = crontab()
    env_file = Path(ran.data["env_file"])
    script = script_path(line).read_text(encoding="utf-8")
    # the line names a script, the script the env file; no secret anywhere in them
    assert line.startswith("30 2 * * * /bin/sh ") and len(line) < 200, line
    assert f"--env-file {shlex.quote(str(env_file))}" in script and "PATH=" not in line
    for text in (line, script, env_file.read_text(encoding="utf-8")):
        assert SECRET not in text
    assert "LOOP_AGENT_API_KEY" not in script and "CALC_MODE" in env_file.read_text()
    secrets = env_file.with_name("loop-secrets.json")  # no OS keyring: the node's 0600 file
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600 and SECRET in secrets.read_text()
    monkeypatch.delenv("LOOP_AGENT_API_KEY")

    fired = fire(line)
    assert fired.returncode == 0, (
        fired.stderr + (project.root / ".git/relay/loop").joinpath("relay-loop.err.log").read_text()
    )
    row = parse_board(project.read("docs/loop/BOARD.md")).rows[0]
    assert row.state is GoalState.DONE and "G1: Multiply" in project.subjects(), row
    assert (tmp_path / "scripts" / "maker.saw").read_text() == SECRET  # the maker's alone
    # every gate ran green, its output kept under the spine's state and linked
    handover = project.read("docs/loop/handover.md")
    [link] = re.findall(r"Gate logs: \[(state/gates/run-[^\]]+/)\]\(\1\)", handover)
    logs = sorted((project.root / "docs/loop" / link).glob("*.log"))
    assert logs and all("result: passed" in p.read_text() for p in logs if "accept" not in p.name)
    assert any("-test.log" in p.name and "3 passed" in p.read_text() for p in logs)
    triaged = list((project.root / "docs/loop/state/gates").glob("triage-*/*-test.log"))
    assert triaged and "result: passed" in triaged[0].read_text()
    assert project.clean() and "docs/loop/state/gates" not in project.git("ls-files")
    board = project.read("docs/loop/BOARD.md")
    assert "## Bounds of the last run" in board and "- Iterations: 3 (--max-iterations)" in board
    assert "- Iteration ceiling: 50 (relay's default" in board


def test_a_scheduled_run_takes_its_roles_from_the_roster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    """With a roster in LOOP.md the run command needs no --maker: the schedule records
    where the roster's maker lies (a folder off cron's PATH) and the fired entry makes."""
    project = venv_project(tmp_path, monkeypatch)
    agents = tmp_path / "agents"
    agents.mkdir()
    body = f"count('maker')\nput('src/calc.py', {CALC_MUL!r})\n"
    python, script = shlex.split(
        project.script("maker", body + f"put('tests/test_mul.py', {TEST_MUL!r})\n")
    )
    program = agents / "roster-maker"  # a program found by name, as an agent CLI is
    program.write_text(f"#!{python}\n" + Path(script).read_text())
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{agents}{os.pathsep}{os.environ['PATH']}")
    contract = project.read("docs/loop/CONTRACT.md")
    line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    project.write("docs/loop/CONTRACT.md", contract.replace(line, "`` relay loop run ``"))
    project.git("commit", "-qam", "the run command names no maker")
    refused = project.loop("schedule", "--at", "02:30", "--scheduler", "cron")
    assert refused.status == 2 and crontab() == [], refused  # no maker anywhere: not tonight
    assert "names no --maker and LOOP.md's ## Roles none" in refused.errors[0]["message"]
    loop = project.read("docs/loop/LOOP.md")
    roles = loop.index("\n## ", loop.index("## Roles") + 1)
    project.write(
        "docs/loop/LOOP.md", loop[:roles] + "\n- maker: command `roster-maker`\n" + loop[roles:]
    )
    project.git("commit", "-qam", "the roster makes")
    ran = project.loop(
        "schedule", "--at", "02:30", "--scheduler", "cron", "--pass-env", "CALC_MODE"
    )
    assert ran.status == 0, ran
    assert str(agents) in ran.data["path"], ran.data
    [line] = crontab()
    fired = fire(line)
    err = project.root / ".git/relay/loop/relay-loop.err.log"
    assert fired.returncode == 0, fired.stderr + (err.read_text() if err.exists() else "")
    row = parse_board(project.read("docs/loop/BOARD.md")).rows[0]
    assert row.state is GoalState.DONE and "G1: Multiply" in project.subjects(), row
    assert project.calls("maker") >= 1 and project.clean()


def test_the_cron_lines_stay_short_under_a_very_long_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    deep = tmp_path.joinpath(*["a-rather-long-folder-name-for-a-clone" for _ in range(20)])
    deep.mkdir(parents=True)
    assert len(str(deep)) > 750
    project = make_project(deep)
    maker = project.script("maker", "count('maker')\n")
    with_run_command(project, maker)
    ran = project.loop("schedule", "--at", "03:00", "--scheduler", "cron")
    assert ran.status == 0, ran
    from relay.commands.loop_unattended import Resumer

    registered = Resumer(
        project.root, ["loop", "run", "--maker", maker, "--scheduler", "cron"], scheduler="cron"
    )(datetime.now(UTC) + timedelta(hours=1), "G1: a usage limit")
    assert registered.startswith("resume registered with cron")
    lines = crontab()
    assert len(lines) == 2
    for line in lines:
        assert len(line.split(" ", 5)[5]) < 1000 and str(deep) not in line
        assert str(deep) in script_path(line).read_text()  # the paths live in the script


def test_a_relay_package_kept_in_the_clone_never_runs_in_relays_place_when_the_entry_fires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    """The entry runs ``python -P -m relay.cli`` in the clone: a ``relay/`` the project
    holds at its top (a kept change, say) is not on relay's sys.path, on the host."""
    project = make_project(tmp_path)
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    with_run_command(project, maker)
    ran = project.loop("schedule", "--at", "01:10", "--max-iterations", "2", "--scheduler", "cron")
    assert ran.status == 0, ran
    marker = tmp_path / "shadow-ran.txt"  # under the test's own /tmp: the host's, not a box's
    shadow = (
        f"import pathlib\nimport sys\n\npathlib.Path({str(marker)!r}).write_text(str(sys.argv))\n"
    )
    for name in ("relay/__init__.py", "relay/cli.py"):
        project.write(name, shadow)
    project.git("add", "-A")
    project.git("commit", "-qm", "a package of the project's own named relay")
    [line] = crontab()

    fired = fire(line)
    assert not marker.exists(), marker.read_text()
    errors = (project.root / ".git/relay/loop").joinpath("relay-loop.err.log")
    assert fired.returncode == 0, fired.stderr + errors.read_text()
    assert " -P -m relay.cli " in script_path(line).read_text(encoding="utf-8")
    assert "G1: Multiply" in project.subjects() and project.clean()  # the entry still works


def test_an_entry_made_before_relay_started_itself_with_p_is_registered_again_when_it_runs(
    tmp_path: Path, real_crontab: None
) -> None:
    """An entry registered before relay ran as ``python -P -m relay.cli`` lacks ``-P``
    until registered again: the scheduled pass finds its own entry's command line differs
    from what relay registers now and registers it again, once, saying so in one line."""
    from dataclasses import replace

    from relay.commands.loop_unattended import save_schedule, saved_schedule
    from relay.schedulers import CronScheduler
    from relay.schedulers.oneshot import When, timed

    project = make_project(tmp_path)
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    with_run_command(project, maker)
    ran = project.loop("schedule", "--at", "01:10", "--max-iterations", "2", "--scheduler", "cron")
    assert ran.status == 0, ran
    saved = saved_schedule(project.root)
    assert saved is not None
    entry, at = saved
    assert entry.argv[1:4] == ("-P", "-m", "relay.cli")
    # the entry as an older relay registered it (its record names no scheduler either)
    old = replace(entry, argv=(entry.argv[0], "-m", "relay.cli", *entry.argv[4:]))
    timed(CronScheduler(), When(daily=(1, 10))).register(old)
    save_schedule(project.root, old, at)
    [line] = crontab()
    assert " -P " not in script_path(line).read_text(encoding="utf-8")

    # what the entry runs (its environment applied is another test's: it would put this
    # test's crontab stand-in off PATH)
    ran = project.loop("scheduled", "--max-iterations", "2")
    said = f"re-registered the schedule {entry.label} to start relay as `-P -m relay.cli`"
    assert ran.status == 0 and ran.data["schedule"] == said, ran
    [again] = crontab()  # in place: still one line, the same label
    assert again == line and " -P -m relay.cli " in script_path(line).read_text(encoding="utf-8")
    assert saved_schedule(project.root) == (entry, at)
    assert "G1: Multiply" in project.subjects() and project.clean()  # the pass ran too
    # idempotent: the next pass finds nothing to change
    ran = project.loop("scheduled", "--max-iterations", "2")
    assert ran.status == 0 and ran.data["schedule"] is None, ran
    assert crontab() == [line]


def doctor(project: Project) -> tuple[int, dict[str, tuple[str, str, str]]]:
    """`relay doctor --json` on ``project``: its exit status and each check by name
    (status, detail, fix)."""
    import io
    import json
    from contextlib import redirect_stderr, redirect_stdout

    from relay.cli import main

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        status = main(["doctor", "--repo-dir", str(project.root), "--json"])
    checks = json.loads(out.getvalue())["data"]["checks"]
    return status, {c["name"]: (c["status"], c["detail"], c["fix"]) for c in checks}


def test_doctor_fails_in_one_line_when_a_gate_cannot_run_the_schedulers_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    project = venv_project(tmp_path, monkeypatch)
    with_run_command(project, project.script("maker", "count('maker')\n"))
    scheduled = project.loop("schedule", "--at", "04:00", "--scheduler", "cron")
    assert scheduled.status == 0, scheduled
    status, found = doctor(project)  # recorded by `relay loop schedule` in a shell with the venv
    assert status == 0 and found["loop gate test"][0] == "warn", found  # it ran: CALC_MODE
    assert "ran the scheduler's way and failed: exited 1" in found["loop gate test"][1]
    assert project.loop("init", "--pass-env", "CALC_MODE").status == 0
    status, found = doctor(project)
    assert status == 0 and found["loop gate test"][0] == "ok", found
    # recorded again from a shell without the venv: the gates' `python` is not found
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    again = project.loop("init")
    assert again.status == 0
    status, found = doctor(project)
    state, detail, fix = found["loop gate test"]
    assert status == 1 and state == "fail", found
    assert detail.startswith(f"`{TEST_GATE}` cannot run the scheduler's way: exited ")
    assert "python: not found" in detail, detail  # relay's own python is never the gates'

    assert "\n" not in detail and "state/gates/doctor-" in detail
    assert "--pass-env" in fix and "relay loop schedule" in fix


def test_doctor_fails_in_one_line_when_a_role_will_not_be_found_the_schedulers_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    project = venv_project(tmp_path, monkeypatch)
    tools = tmp_path / "agent-bin"  # where the person's agent CLI lies: on this shell's PATH
    tools.mkdir()
    agent = tools / "loop-maker-agent"
    agent.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    agent.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    with_run_command(project, "loop-maker-agent")
    scheduled = project.loop("schedule", "--at", "04:00", "--scheduler", "cron")
    assert scheduled.status == 0, scheduled

    status, found = doctor(project)
    said = "`loop-maker-agent` resolves the scheduler's way"
    assert found["loop role maker"] == ("ok", said, ""), found
    # recorded again from a shell whose PATH does not find the agent: the fired run
    # would not find it either
    monkeypatch.setenv("PATH", os.environ["PATH"].replace(f"{tools}{os.pathsep}", "", 1))
    assert project.loop("init").status == 0
    status, found = doctor(project)
    state, detail, fix = found["loop role maker"]
    assert status == 1 and state == "fail", found
    assert detail == (
        "the maker command `loop-maker-agent` cannot run the scheduler's way:"
        " loop-maker-agent is not on PATH"
    )
    assert "relay loop schedule" in fix and "\n" not in detail


def test_max_iterations_has_a_ceiling_the_contract_may_raise_with_a_reason(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    maker = project.script("maker", "count('maker')\n")
    refused = project.loop("run", "--maker", maker, "--max-iterations", "500", "--dry-run")
    assert refused.status == 2 and project.calls("maker") == 0
    message = refused.errors[0]["message"]
    assert message.startswith("--max-iterations 500 is above the ceiling of 50;"), message
    assert "- Iteration ceiling: 500 (why)" in message
    contract = project.read("docs/loop/CONTRACT.md")
    raised = contract.replace("- Iterations: 20\n", "- Iterations: 20\n- Iteration ceiling: 500\n")
    project.write("docs/loop/CONTRACT.md", raised)
    bare = project.loop("check")
    assert bare.status != 0 and "needs its reason" in bare.errors[0]["message"], bare
    project.write(
        "docs/loop/CONTRACT.md",
        contract.replace(
            "- Iterations: 20\n", "- Iterations: 20\n- Iteration ceiling: 500 (many small goals)\n"
        ),
    )
    project.git("commit", "-qam", "a higher ceiling, with its reason")
    plan = project.loop("run", "--maker", maker, "--max-iterations", "500", "--dry-run")
    assert plan.status == 0 and plan.data["plan"]["budget"]["iterations"] == 500, plan


def test_the_contract_is_read_again_every_iteration(tmp_path: Path) -> None:
    from relay.ratchet.engine import Ratchet
    from relay.ratchet.judge import Options

    project = make_project(tmp_path, retries=2)
    maker = project.script(
        "maker",
        "n = count('maker')\n"
        f"put('src/calc.py', {CALC_MUL!r})\n"
        f"if n > 1:\n    put('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    heard: list[str] = []

    def say(line: str) -> None:
        heard.append(line)
        if "attempt 1 failed" in line:  # between iterations, a person edits the contract
            text = project.read("docs/loop/CONTRACT.md")
            project.write(
                "docs/loop/CONTRACT.md", text.replace("Gate timeout: 10m", "Gate timeout: 9m")
            )
            project.git("commit", "-q", "-m", "a shorter gate timeout", "docs/loop/CONTRACT.md")

    report = Ratchet(project.root, Options(maker=maker), say=say).run()
    assert [k.goal for k in report.kept] == ["G1"], report
    assert "the contract changed; this iteration runs under the new one" in heard
    assert "- Gate timeout: 9m (the contract)" in project.read("docs/loop/BOARD.md")
    assert project.clean()


def test_a_schedule_whose_roles_cannot_start_is_refused_and_nothing_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    contract = project.read("docs/loop/CONTRACT.md")
    line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    run = "`` relay loop run --maker relay-no-such-agent --checker codex:review ``"
    project.write("docs/loop/CONTRACT.md", contract.replace(line, run))
    project.git("commit", "-qam", "an agent CLI this machine does not have")
    before, env_file = crontab(), project.read(".git/relay/loop/loop-env.json")
    ran = project.loop("schedule", "--at", "03:00", "--scheduler", "cron")
    assert ran.status == 2 and len(ran.errors) == 1, ran
    message = ran.errors[0]["message"]
    assert message == (
        "the maker command `relay-no-such-agent` cannot run: relay-no-such-agent is not on PATH"
    )
    assert crontab() == before and project.read(".git/relay/loop/loop-env.json") == env_file


# --- relay's own programs and modules, apart from the project's ---


def planted_git(project: Project, marker: Path) -> None:
    """A ``bin/git`` kept in the clone (a maker's, say): it says it ran, then runs git."""
    import shutil

    real = shutil.which("git")
    assert real is not None
    project.write(
        "bin/git", f'#!/bin/sh\necho "$*" >> {shlex.quote(str(marker))}\nexec {real} "$@"\n'
    )
    (project.root / "bin/git").chmod(0o755)
    project.git("add", "bin/git")
    project.git("commit", "-qm", "a git of the project's own (kept)")


def binstub_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Project, str]:
    """The calc project with a gate run from a binstub of the clone's ``bin/`` (which the
    person's shell finds first: direnv's ``PATH_add bin``) and its copy in a tools folder
    outside the clone (a box sees no folder of the clone); the copy checks the gate got the
    PATH with the clone's folder first. The PATH to set, as that shell has it."""
    from loop_project import TEST_GATE as PROJECT_TEST_GATE

    project = make_project(tmp_path, gates=(PROJECT_TEST_GATE,))
    root, tools = project.root, tmp_path / "tools"
    tools.mkdir()
    clone_bin = root / "bin"
    check = (
        f'#!/bin/sh\ncase "$PATH" in {shlex.quote(str(clone_bin))}:*) exit 0 ;; esac\n'
        'echo "the gate got PATH=$PATH"\nexit 1\n'
    )
    for where in (clone_bin / "calc-check", tools / "calc-check", tools / "calc-lint"):
        where.parent.mkdir(exist_ok=True)
        where.write_text(check if where.parent == tools else "#!/bin/sh\nexit 0\n")
        where.chmod(0o755)
    contract = project.read("docs/loop/CONTRACT.md")
    after = "-p no:cacheprovider`\n"
    assert after in contract
    gate = after + "- check: `calc-lint && calc-check`\n"
    project.write("docs/loop/CONTRACT.md", contract.replace(after, gate, 1))
    project.git("add", "-A")
    project.git("commit", "-qm", "a check gate the binstub runs")
    return project, f"{clone_bin}{os.pathsep}{tools}{os.pathsep}{os.environ['PATH']}"


def test_a_git_kept_in_a_folder_of_the_clone_on_the_recorded_path_never_runs_as_relay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    """The PATH recorded for the schedule leads with the clone's ``bin/`` (the gates' own
    binstub is there) and a ``bin/git`` is kept: the fired run's own git never runs it,
    while its gates still get the recorded PATH, the clone's folder first."""
    project, shell_path = binstub_project(tmp_path, monkeypatch)
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    with_run_command(project, maker)
    before = os.environ["PATH"]
    monkeypatch.setenv("PATH", shell_path)
    ran = project.loop("schedule", "--at", "01:20", "--max-iterations", "2", "--scheduler", "cron")
    assert ran.status == 0, ran
    assert ran.data["path"][0] == str(project.root / "bin"), ran.data
    monkeypatch.setenv("PATH", before)
    marker = tmp_path / "git-ran.txt"  # under the test's own /tmp: the host's, not a box's
    planted_git(project, marker)
    [line] = crontab()

    fired = fire(line)
    assert not marker.exists(), marker.read_text()
    errors = (project.root / ".git/relay/loop").joinpath("relay-loop.err.log")
    assert fired.returncode == 0, fired.stderr + errors.read_text()
    assert "G1: Multiply" in project.subjects() and project.clean()
    logs = list((project.root / "docs/loop/state/gates").glob("run-*/*-check.log"))
    assert logs and all("result: passed" in p.read_text() for p in logs), logs


def test_a_git_kept_in_a_folder_of_the_clone_on_the_shells_path_never_runs_as_relay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By hand, the person's shell leads its PATH with the clone's ``bin/``, which holds a
    kept ``bin/git``: the run's own git never runs it; its gates get that PATH."""
    project, shell_path = binstub_project(tmp_path, monkeypatch)
    marker = tmp_path / "git-ran.txt"
    planted_git(project, marker)
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    monkeypatch.setenv("PATH", shell_path)
    ran = project.loop("run", "--maker", maker)
    assert not marker.exists(), marker.read_text()
    assert ran.status == 0, ran
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran.data
    logs = list((project.root / "docs/loop/state/gates").glob("run-*/*-check.log"))
    assert logs and all("result: passed" in p.read_text() for p in logs), logs


def planted_keyring(project: Project, marker: Path) -> None:
    """A ``src/keyring/`` kept in the clone (relay imports keyring to read the loop's
    secrets): it says it ran, then hides as a keyring that cannot be used would."""
    project.write(
        "src/keyring/__init__.py",
        f"import pathlib\n\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "raise ImportError('no usable keyring')\n",
    )
    project.git("add", "-A")
    project.git("commit", "-qm", "a package of the project's own named keyring (kept)")


def test_a_module_kept_in_the_projects_pythonpath_never_runs_in_relay_when_the_entry_fires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_crontab: None
) -> None:
    """The person's shell has PYTHONPATH=src when the schedule is made, and a
    ``src/keyring/`` is kept (relay imports keyring for the loop's secrets): the fired run
    never imports it, while the gates still get the PYTHONPATH recorded for them."""
    project = make_project(tmp_path)
    src = project.root / "src"
    project.write(
        "tests/test_pythonpath.py",
        "import os\n\n\ndef test_pythonpath():\n"
        f'    assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == {str(src)!r}\n',
    )
    project.git("add", "-A")
    project.git("commit", "-qm", "a test of the PYTHONPATH the gates get")
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    with_run_command(project, maker)
    monkeypatch.setenv("PYTHONPATH", str(src))
    ran = project.loop("schedule", "--at", "01:30", "--max-iterations", "2", "--scheduler", "cron")
    assert ran.status == 0, ran
    marker = tmp_path / "keyring-ran.txt"
    planted_keyring(project, marker)
    [line] = crontab()
    assert str(src) not in script_path(line).read_text(encoding="utf-8")

    fired = fire(line)
    assert not marker.exists()
    errors = (project.root / ".git/relay/loop").joinpath("relay-loop.err.log")
    assert fired.returncode == 0, fired.stderr + errors.read_text()
    assert "G1: Multiply" in project.subjects() and project.clean()
    logs = list((project.root / "docs/loop/state/gates").glob("run-*/*-test.log"))
    assert logs and all("result: passed" in p.read_text() for p in logs), logs


def test_a_module_kept_in_the_projects_pythonpath_never_runs_in_relay_started_with_it(
    tmp_path: Path,
) -> None:
    """Relay started with PYTHONPATH=src (an entry an older relay registered, or the
    person's shell) and a ``src/keyring/`` kept: relay's own process drops the clone's
    folders from its sys.path before it reads the env file's secrets, so it never imports
    the project's module; the gates still get that PYTHONPATH."""
    project = make_project(tmp_path)
    marker = tmp_path / "keyring-ran.txt"
    planted_keyring(project, marker)
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    env_file = project.root / ".git/relay/loop/loop-env.json"
    assert env_file.is_file()  # `relay loop init` recorded it
    argv = [sys.executable, "-P", "-m", "relay.cli", "loop", "run", "--maker", maker]
    argv += ["--env-file", str(env_file), "--max-iterations", "1", "--repo-dir", str(project.root)]
    env = {
        "HOME": os.environ["HOME"],
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(project.root / "src"),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    ran = subprocess.run(
        argv, cwd=project.root, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert not marker.exists()
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "G1: Multiply" in project.subjects() and project.clean()
