"""The errors a newcomer meets first, each one line that says what to do, a non-zero exit
and nothing written: relay's own hints intact (never redacted as secrets), validation in
the words of the flags typed, Ctrl-C in the wizard, git missing, the hub down for doctor."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from worlds import WORKER, World


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_relays_hint_is_not_redacted_as_a_secret(world: World, job: int) -> None:
    """The refusal quotes relay's approval line where a clause ends (``…: yes`,``), the
    place the secret-assignment rule once took ``yes`` for a credential."""
    before = world.frozen(job)
    done = world.controller.run("task", str(job), "--step", "rm -rf out", "--scope", "destructive")
    assert done.returncode == 2
    line = one_line(done)
    assert "needs `authorized-by-human: yes`, then" in line, line
    assert "add --authorized-by-human" in line, line
    assert "redacted" not in line
    assert world.frozen(job) == before


def test_relay_redact_keeps_relays_words_and_uses_the_nodes_recipe(world: World) -> None:
    """`relay redact` in a clone redacts as the node does: relay's own approval line kept,
    a node's fully qualified host name (known from the node table) redacted."""
    text = "TASK 2 says `authorized-by-human: yes`\nauthorized-by-human: no\n"
    host = f"{world.worker.name}.corp.example.net"
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "redact"],
        input=text + f"built on {host}\n",
        cwd=world.controller.clone,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(text), done.stdout
    assert host not in done.stdout and "<host>" in done.stdout, done.stdout


def test_validation_names_the_flag_not_pydantic(world: World, job: int) -> None:
    before = world.frozen(job)
    cases = {
        ("task", str(job), "--step", "", "--scope", "diagnostics"): "--step number 1 is empty",
        ("task", str(job), "--step", "ls", "--step", "a\nb", "--scope", "diagnostics"): (
            "--step number 2 must be a single line"
        ),
        ("task", str(job), "--step", "ls", "--scope", "bad scope!"): "--scope 'bad scope!' is not",
        ("job", "open", "--worker", "mac-studio", "--title", "t", "--objective", "o"): (
            "the controller and the worker must be different nodes"
        ),
        ("hypothesis", str(job), ""): "the hypothesis is empty",
        ("task", str(job), "--step", "ls", "--checkout", ""): "--checkout '' is not a branch",
        ("task", str(job), "--step", "ls", "--checkout", "a b"): "--checkout 'a b' is not a",
        ("task", str(job), "--step", "ls", "--checkout", "a..b"): (
            "--checkout 'a..b' is not a branch name git accepts"
        ),
        ("task", str(job), "--step", "ls", "--artifact", "a\\b"): (
            "--artifact number 1 'a\\\\b' is not a path or glob"
        ),
        ("job", "open", "--worker", WORKER, "--title", "a\nb", "--objective", "o"): (
            "--title must be a single line"
        ),
        ("job", "open", "--worker", WORKER, "--title", "t" * 257, "--objective", "o"): (
            "--title is longer than 256 characters"
        ),
    }
    as_process: set[str] = set()  # each verb's first case as a process, the rest in-process
    for args, words in cases.items():
        verb = " ".join(args[:2]) if args[0] == "job" else args[0]
        if verb in as_process:
            done = world.controller.invoke(*args)
        else:
            as_process.add(verb)
            done = world.controller.run(*args)
        line = one_line(done)
        assert done.returncode == 2, (args, line)
        assert words in line, (args, line)
        for internal in (
            "steps.0",
            "Value error",
            "JobBody",
            "^[",
            "String should",
            "another form",
            "artifacts",
        ):
            assert internal not in line, (args, line)
    assert world.frozen(job) == before


def test_ctrl_c_in_the_wizard_leaves_at_once_with_nothing_written(blank: World) -> None:
    clone = blank.controller.clone
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True)
    env = blank.controller.env(RELAY_API_URL=blank.hub.url)
    proc = subprocess.Popen(
        blank.controller.argv("init"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stderr is not None
    asked = ""
    deadline = time.monotonic() + 60
    while "this node's name" not in asked and time.monotonic() < deadline:
        asked += proc.stderr.read(1)  # the first question, then it waits for an answer
    assert "this node's name" in asked
    time.sleep(0.2)  # inside input() now
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - started < 5
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "relay: interrupted"
    assert not (clone / "docs" / "loop").exists()
    assert blank.made_labels() == []
    after = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True)
    assert after.stdout == head.stdout
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True)
    assert status.stdout == b""


def test_without_git_on_the_path_one_line(blank: World, tmp_path: Path) -> None:
    empty = tmp_path / "no-git"
    empty.mkdir()
    env = blank.controller.env(RELAY_API_URL=blank.hub.url, PATH=str(empty))
    clone = blank.controller.clone
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "init", "--yes", "--repo-dir", str(clone)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert one_line(done).startswith("relay: git is not installed or not on the PATH — install git")
    assert not (blank.controller.clone / "docs" / "loop").exists()
    assert blank.made_labels() == []


def test_demo_without_git_says_why_the_hub_did_not_start(tmp_path: Path) -> None:
    empty = tmp_path / "no-git"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "demo"],
        env={"PATH": str(empty), "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    line = one_line(done)
    assert line.startswith("relay: the hub did not start: git is not installed"), line


def test_doctor_without_git_fails_its_git_check(world: World, tmp_path: Path) -> None:
    empty = tmp_path / "no-git"
    empty.mkdir()
    done = world.worker.run("doctor", env=world.worker.env(PATH=str(empty)))
    text = done.stdout + done.stderr
    assert done.returncode != 0, text
    assert "all checks passed" not in text
    assert "git is not installed or not on the PATH" in text, text
    assert "Traceback" not in text


def test_doctor_says_the_hub_is_unreachable_not_the_token(world: World) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = world.worker.run("doctor", "--api", f"http://127.0.0.1:{port}")
    assert done.returncode != 0
    text = done.stdout + done.stderr
    assert "hub/API unreachable" in text, text
    assert "connection refused" in text.lower() and "Error)" not in text, text
    token_lines = [ln for ln in text.splitlines() if ln.lstrip().lower().startswith(("fail", "✗"))]
    assert not any("token" in ln.split(":")[0] for ln in token_lines), text
    assert "Traceback" not in text


def test_init_in_a_clone_with_no_commit_says_so(blank: World, tmp_path: Path) -> None:
    """A repository created empty: git's own failure (`rev-parse HEAD` on an unborn branch)
    is mapped to one line that says what to do, and nothing is written."""
    token = blank.tokens("octo")
    name = f"{blank.repo.split('/')[1]}-empty"
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "relay.cli",
            "hub",
            "repo",
            "create",
            f"octo/{name}",
            "--empty",
            "--private",
        ],
        env={**blank.controller.env(), "RELAY_API_URL": blank.hub.url, "RELAY_TOKEN": token},
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    clone = tmp_path / "empty-clone"
    header = f"http.extraHeader=Authorization: Bearer {token}"
    url = f"{blank.hub.url}/octo/{name}.git"
    subprocess.run(["git", "-c", header, "clone", "-q", url, str(clone)], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "init", "--yes", "--repo-dir", str(clone)],
        env={**blank.controller.env(), "RELAY_API_URL": blank.hub.url, "RELAY_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert one_line(done) == (
        "relay: the clone has no commit yet — commit something (a README) and push it,"
        " then run relay again"
    )
    assert not (clone / "docs").exists()
