"""The scheduled runs' environment, decided without running anything: which programs a
gate runs, the PATH that finds them (never the whole inherited one), the secrets and
their roles, what a scheduled process's environment becomes, and the bounds on BOARD.md;
and, through `relay loop schedule`, a --pass-env that looks like a secret refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from loop_project import make_project

from relay.errors import LocalUsageError
from relay.loop.contract import Budget, Contract
from relay.loop.runenv import (
    RunEnv,
    Secret,
    parse_runenv,
    parse_secret,
    programs,
    record,
    run_bounds,
    with_bounds,
)


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("python -m pytest -q", ["python"]),
        ("CI=1 npm test && npx eslint .", ["npm", "npx"]),
        (".venv/bin/python -m mypy src | tee log", [".venv/bin/python", "tee"]),
        ("env FOO=1 make check; make lint", ["make"]),
        ("'/opt/my tools/bin/lint' --all", ["/opt/my tools/bin/lint"]),
    ],
)
def test_the_programs_a_command_runs(command: str, found: list[str]) -> None:
    assert programs(command) == found


def test_the_path_holds_where_the_programs_were_found_and_no_more() -> None:
    environ = {"PATH": "/home/p/.venv/bin:/home/p/junk:/opt/node/bin:/usr/bin", "LANG": "C"}
    which = {"python": "/home/p/.venv/bin/python", "npm": "/opt/node/bin/npm", "gone": None}
    got = record(
        ["npm test", "python -m pytest", "gone --now", ".venv/bin/python -V"],
        environ=environ,
        which={**which, ".venv/bin/python": "/clone/.venv/bin/python"},
    )
    assert got.path == (
        "/home/p/.venv/bin",
        "/opt/node/bin",
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
    )
    assert dict(got.resolved)["gone"] == "" and dict(got.variables) == {"LANG": "C"}
    env = got.environment({"HOME": "/home/p", "PATH": "/usr/bin:/bin"})
    assert env == {"HOME": "/home/p", "PATH": ":".join(got.path), "LANG": "C"}


def test_secrets_go_to_their_roles_alone() -> None:
    assert parse_secret("KEY") == Secret("KEY", ("maker",))
    assert parse_secret("KEY:checker,red-team") == Secret("KEY", ("checker", "red-team"))
    for bad in ("9KEY", "KEY:reviewer"):
        with pytest.raises(LocalUsageError):
            parse_secret(bad)
    runenv = RunEnv(path=("/bin",), secrets=(Secret("A", ("maker",)), Secret("B", ("checker",))))
    values = {"A": "a-value", "B": "b-value"}
    assert runenv.for_role("maker", values) == {"A": "a-value"}
    assert runenv.for_role("verifier", values) == {}
    assert runenv.environment({}) == {"PATH": "/bin"}  # a secret never joins the process's
    text = runenv.render()
    assert "a-value" not in text and parse_runenv(text) == runenv
    with pytest.raises(LocalUsageError, match="not set in this shell"):
        record(["true"], environ={}, which={}, secrets=[Secret("A", ())])


def test_every_bound_is_on_the_board() -> None:
    contract = Contract(budget=Budget(ceiling=80, ceiling_reason="nightly lint goals"))
    bounds = run_bounds(contract, max_iterations=None, wall_clock=None)
    board = with_bounds("# Board\n\n## Goals\n\nrows\n", bounds)
    assert "- Iterations: 20 (the contract's `Iterations:`)" in board
    assert "- Iteration ceiling: 80 (the contract: nightly lint goals)" in board
    assert "- Transient failures in a row: 6 (relay: then it escalates)" in board
    # the caps relay itself applies are said too: none is silent
    assert "- Failed passes before a goal is blocked: 3 (relay)" in board
    assert "- Back to the goal's baseline after: 2 failed attempts in a row on a broken" in board
    assert "- Usage-limit reset believed within: 7 days (relay: a later one is" in board
    again = with_bounds(board, run_bounds(contract, max_iterations=7, wall_clock=60.0))
    assert again.count("## Bounds of the last run") == 1 and "## Goals\n\nrows\n" in again
    assert "- Iterations: 7 (--max-iterations)" in again and "- Wall clock: 60s" in again


def test_a_secret_passed_as_a_variable_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path)
    monkeypatch.setenv("AGENT_API_KEY", "not-for-files")
    env_file = project.root / ".git/relay/loop/loop-env.json"
    before = env_file.read_text()
    ran = project.loop("init", "--pass-env", "AGENT_API_KEY")
    assert ran.status == 2 and "name AGENT_API_KEY with --pass-secret" in ran.errors[0]["hint"], ran
    unset = project.loop("init", "--pass-secret", "NOT_SET_HERE:checker")
    assert unset.status == 2 and "NOT_SET_HERE" in unset.errors[0]["message"], unset
    assert env_file.read_text() == before and "not-for-files" not in before  # nothing written


def test_a_secret_goes_to_the_os_keyring_when_there_is_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring
    from keyring.backend import KeyringBackend

    from relay.commands.loop_env import KEYRING_SERVICE, apply_env, env_path
    from relay.ratchet import measure

    class MemoryKeyring(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.items: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.items.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.items[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.items.pop((service, username), None)

    memory = MemoryKeyring()
    monkeypatch.setattr(keyring.core, "_keyring_backend", memory)
    project = make_project(tmp_path)
    monkeypatch.setenv("REVIEW_KEY", "kept-in-the-keychain")
    ran = project.loop("init", "--pass-secret", "REVIEW_KEY:checker")
    assert ran.status == 0, ran
    assert memory.items == {(KEYRING_SERVICE, f"{project.root}:REVIEW_KEY"): "kept-in-the-keychain"}
    assert not (project.root / ".git/relay/loop/loop-secrets.json").exists()
    monkeypatch.delenv("REVIEW_KEY")
    monkeypatch.setattr(measure, "_ROLE_SECRETS", {})
    monkeypatch.setattr(os, "environ", dict(os.environ))  # what apply_env sets goes with it
    apply_env(project.root, env_path(project.root))
    assert measure._ROLE_SECRETS["checker"] == {"REVIEW_KEY": "kept-in-the-keychain"}
    assert measure._ROLE_SECRETS["maker"] == {} and "REVIEW_KEY" not in os.environ


def test_a_windows_path_is_recorded_with_its_own_separator() -> None:
    environ = {"PATH": r"C:\proj\.venv\Scripts;C:\Windows\system32"}
    got = record(
        ["pytest -q"],
        environ=environ,
        which={"pytest": r"C:\proj\.venv\Scripts\pytest.exe"},
        sep=";",
    )
    assert got.path == (r"C:\proj\.venv\Scripts",)  # relay's own folder is never the gates'
    assert got.environment({}, sep=";")["PATH"] == r"C:\proj\.venv\Scripts"


def test_each_command_handed_a_file_runs_as_its_role() -> None:
    from relay.ratchet.measure import BRIEF_ENV, REVIEW_ENV, role_of

    assert role_of(BRIEF_ENV) == "maker"
    assert role_of(REVIEW_ENV, "checker 2") == "checker"
    assert role_of(REVIEW_ENV, "the verifier") == "verifier"
    assert role_of(REVIEW_ENV, "red team 1") == "red-team"


def test_gate_logs_keep_the_newest_folders_of_each_kind(tmp_path: Path) -> None:
    from relay.edges.steps import StepOutcome
    from relay.loop.contract import Gate
    from relay.loop.runenv import LOGS_KEPT
    from relay.ratchet.measure import GATE_LOGS, KEEP_LOGS, gate_log, log_gate

    assert LOGS_KEPT == KEEP_LOGS  # what the board says is what is done
    folder = tmp_path / GATE_LOGS
    for n in range(KEEP_LOGS + 2):
        (folder / f"run-20260101T0000{n:02d}.000000Z").mkdir(parents=True)
    (folder / "triage-20250101T000000.000000Z").mkdir()
    done = StepOutcome("true", 0, False, 0.1, "all fine\n", 0)
    with gate_log(tmp_path, "run") as log:
        log_gate(Gate("test", "true"), done, where=tmp_path)
    runs = sorted(p.name for p in folder.glob("run-*"))
    assert len(runs) == KEEP_LOGS and runs[-1] == log.run and "run-20260101T000000" not in runs[0]
    assert (folder / "triage-20250101T000000.000000Z").is_dir()  # another kind: its own count
    assert (
        (tmp_path / log.written[0])
        .read_text()
        .endswith("result: passed (exit 0, 0.1s)\n\nall fine\n")
    )
    assert (folder / ".gitignore").read_text() == "*\n"


def test_relays_own_tools_are_not_the_gates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gate whose program only relay's own environment has (ruff, here) is recorded as
    not found, and runs the scheduler's way as the person's shell would: not at all."""
    import sys

    from relay.commands.loop_env import record_env
    from relay.edges.steps import run_step
    from relay.ratchet.files import Spine

    project = make_project(tmp_path, accept=None, gates=("ruff --version",))
    shell = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    if any((Path(d) / "ruff").exists() for d in shell["PATH"].split(":")):
        pytest.skip("this machine has ruff on its system PATH")
    got = record_env(project.root, Spine(project.root).contract(), environ=shell)
    assert str(Path(sys.executable).absolute().parent) not in got.path
    assert dict(got.resolved)["ruff"] == ""
    done = run_step("ruff --version", cwd=project.root, timeout=30, env=got.environment(shell))
    assert done.exit_code == 127


def test_an_agent_roles_cli_is_found_where_it_lies_for_the_scheduled_run(
    tmp_path: Path,
) -> None:
    """`--checker codex:review` runs `codex`: its folder joins the recorded PATH (here
    another than the maker's), and no warning says `codex:review` is missing."""
    from relay.commands.loop_env import record_env
    from relay.ratchet.files import Spine

    project = make_project(tmp_path, accept=None)
    folders = {}
    for name in ("claude", "codex"):
        folder = tmp_path / f"{name}-bin"
        folder.mkdir()
        (folder / name).write_text("#!/bin/sh\nexit 0\n")
        (folder / name).chmod(0o755)
        folders[name] = str(folder)
    contract = project.read("docs/loop/CONTRACT.md")
    line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    run = "`` relay loop run --maker claude --checker codex:review ``"
    project.write("docs/loop/CONTRACT.md", contract.replace(line, run))
    shell = {"PATH": f"{folders['claude']}:{folders['codex']}:/usr/bin:/bin", "HOME": str(tmp_path)}
    got = record_env(project.root, Spine(project.root).contract(), environ=shell)
    resolved = dict(got.resolved)
    assert resolved["claude"] == f"{folders['claude']}/claude"
    assert resolved["codex"] == f"{folders['codex']}/codex" and "codex:review" not in resolved
    assert folders["codex"] in got.path and folders["claude"] in got.path


def test_a_scheduled_process_hands_the_projects_python_variables_and_folders_to_the_boxes_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--env-file``: relay's own process takes neither the recorded PYTHONPATH (the
    project's ``src``) nor a PATH folder of the clone (its ``bin/``, where a kept ``git``
    would be found first); the boxed gates and roles start from both, and a one-shot
    resume entry registered from it carries no folder of the project's."""
    from unittest import mock

    import keyring
    from keyring.backends import fail

    from relay.commands.loop_env import apply_env, env_path
    from relay.edges.files import write_state
    from relay.edges.ownpath import box_environ
    from relay.ratchet.measure import gate_env
    from relay.schedulers.oneshot import timed_entry

    monkeypatch.setattr(keyring.core, "_keyring_backend", fail.Keyring())  # no OS keychain
    root = make_project(tmp_path).root
    clone_bin, src = str(root / "bin"), str(root / "src")
    recorded = RunEnv(
        path=(clone_bin, "/usr/local/bin", "/usr/bin", "/bin"),
        variables=(
            ("PYTHONPATH", src),
            ("LANG", "C.UTF-8"),
            ("LD_LIBRARY_PATH", str(root / "lib")),  # a --pass-env of the person's
            ("LD_PRELOAD", str(root / "lib" / "hook.so")),
            ("TOOL_CONFIG", str(root / "conf" / "tool.toml")),  # names a file of the clone
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),  # a service's: relay's own too
        ),
    )
    where = env_path(root)
    write_state(where, recorded.render().encode("utf-8"), top=where.parent)
    with mock.patch.dict(os.environ):  # what cron gives the entry's process
        os.environ["PATH"] = "/usr/bin:/bin"
        os.environ.pop("PYTHONPATH", None)
        apply_env(root, where)
        own = dict(os.environ)
        boxes, gate = box_environ(), gate_env()
        entry = timed_entry(
            prefix="relay-loop-resume", clone=root, args=["loop", "run"], state_dir=tmp_path,
            description="the resume",
        )  # fmt: skip
    assert own["PATH"] == "/usr/local/bin:/usr/bin:/bin" and "PYTHONPATH" not in own
    assert "LD_LIBRARY_PATH" not in own and "LD_PRELOAD" not in own  # a kept .so never loads
    assert "TOOL_CONFIG" not in own and boxes["TOOL_CONFIG"] == str(root / "conf" / "tool.toml")
    assert own["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert own["LANG"] == "C.UTF-8"  # relay's own variables are still its
    assert boxes["LD_LIBRARY_PATH"] == str(root / "lib") and "LD_PRELOAD" in gate
    assert boxes["PATH"] == os.pathsep.join(recorded.path) and boxes["PYTHONPATH"] == src
    assert gate["PATH"].startswith(clone_bin + os.pathsep) and gate["PYTHONPATH"] == src
    assert not [v for _, v in entry.environment if str(root) in v], entry.environment
