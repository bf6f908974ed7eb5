"""The `--json` output of every verb, pinned: scripts and agents read these keys, inside one
versioned envelope (version, command, ok, exit_code, data, errors) that errors share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from worlds import CONTROLLER, WORKER, World, data_of, envelope_of, git, key_of

PASS_KEYS = {
    "node",
    "outcome",
    "lines",
    "tasks",
    "requests",
    "not_modified",
    "writes",  # of the requests, the content-creating ones
    "retries",
    "lost_answers_found",
    "seconds",
    "teardown",
    "started_by",  # the scheduler, or a person: only the scheduler's passes are heartbeats
}
TASK_KEYS = {"issue", "task", "status", "seconds", "log_url"}
RESULT_KEYS = {
    "task_digest",
    "issue",
    "node",
    "task",
    "status",
    "summary",
    "log_url",
    "excerpt",
    "observations",
    "failed_step",
    "artifacts",
    "commit",  # the commit a pinned TASK's steps ran at (null when not pinned)
}


def out(node: Any, *args: str) -> Any:
    return data_of(node.call(*args, "--json"))


def test_every_verb_json_keys(blank: World) -> None:
    c, w = blank.controller, blank.worker
    init = out(
        c, "init", "--yes", "--node", CONTROLLER, "--repo", blank.repo, "--api", blank.hub.url
    )
    assert set(init) == {"repo", "node", "labels_created", "public", "job"}
    assert set(out(w, "join", "--node", WORKER, "--scheduler", "none")) == {
        "node",
        "scheduler",
        "jobs",
        "turns",
    }
    c.call("join", "--node", CONTROLLER, "--scheduler", "none")
    listed = out(c, "nodes")
    assert set(listed) == {"revision", "members", "requests", "notes"}
    assert listed["requests"] == [WORKER]
    assert set(listed["members"][0]) == {"name", "admin", "fingerprint"}
    assert out(c, "nodes", "approve", WORKER, "--fingerprint", key_of(w, WORKER)) == {
        "node": WORKER,
        "revision": 2,
    }
    assert set(out(w, "nodes", "key")) == {"node", "fingerprint"}
    assert out(c, "nodes", "sign") == {}  # nothing to sign: the table matches
    issue = out(c, "job", "open", "--worker", WORKER, "--title", "T", "--objective", "O")["issue"]
    assert out(c, "task", str(issue), "--step", "git --version") == {"issue": issue, "task": 1}
    worker_pass = out(w, "watch", "--once")
    assert set(worker_pass) == PASS_KEYS and set(worker_pass["tasks"][0]) == TASK_KEYS
    assert worker_pass["started_by"] == "person"  # by hand: not the watcher's heartbeat
    assert worker_pass["outcome"] == "acted" and worker_pass["node"] == WORKER
    assert isinstance(worker_pass["requests"], int) and isinstance(worker_pass["lines"], list)
    assert set(out(c, "watch", "--once")) == PASS_KEYS
    shown = out(c, "result", str(issue))
    assert set(shown) == {"issue", "task", "result"} and set(shown["result"]) == RESULT_KEYS
    assert out(c, "hypothesis", str(issue), "H") == {"issue": issue, "outcome": "untested"}
    assert out(c, "strike", str(issue)) == {"issue": issue, "parked": False}
    status = out(c, "status")
    assert set(status) >= {"jobs", "nodes", "last_pass", "roster"}
    assert set(status["roster"]) == {"revision", "not_followed"}
    assert set(status["jobs"][0]) == {
        "issue",
        "title",
        "controller",
        "worker",
        "baton",
        "task",
        "task_age",
        "parked",
        "frozen",
    }
    assert {n["name"] for n in status["nodes"]} == {CONTROLLER, WORKER}
    assert set(status["last_pass"]) >= {"at", "node", "outcome", "requests", "not_modified"}
    resolved = out(c, "resolve", str(issue), "--summary", "S", "--force", "t")
    assert resolved["issue"] == issue and set(resolved) <= {"issue", "watcher_torn_down"}
    assert git("status", "--porcelain", cwd=c.clone) == ""


def test_an_error_under_json_is_the_same_envelope(tmp_path: Path) -> None:
    cases = {
        ("status",): ("config", "not inside a git clone"),
        ("task", "1", "--step", "x"): ("config", "not inside a git clone"),
        ("job", "open", "--worker", "w"): ("usage", "required: --title, --objective"),
    }
    for args, (code, words) in cases.items():
        done = subprocess.run(
            [sys.executable, "-m", "relay.cli", *args, "--json", "--repo-dir", str(tmp_path)],
            capture_output=True,
            text=True,
            check=False,
        )
        doc = envelope_of(done.stdout)
        assert done.returncode == doc["exit_code"] == 2 and doc["ok"] is False
        assert doc["command"] == " ".join(args[:2] if args[0] == "job" else args[:1])
        assert doc["data"] == {} and done.stderr == ""
        [error] = doc["errors"]
        assert error["code"] == code and words in error["message"], error


def test_relay_version() -> None:
    from relay import __version__

    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == f"relay {__version__}"


def test_loop_json_keys(tmp_path: Path) -> None:
    """`relay loop`'s sub-verbs, each in the one envelope with its own keys."""
    import contextlib
    import io

    from relay.cli import main

    def loop(*args: str) -> Any:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["loop", *args, "--repo-dir", str(tmp_path), "--json"])
        doc = envelope_of(out.getvalue())
        assert doc["command"] == f"loop {args[0]}"
        return doc["data"]

    git("init", "-q", cwd=tmp_path)
    (tmp_path / "README.md").write_text("x\n")
    git("add", "-A", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x", cwd=tmp_path)
    init = loop("init", "--gate", f"{sys.executable} -c pass")
    assert set(init) == {
        "written",
        "kept",
        "gates",
        "proposed",
        "security_areas",
        "commit",
        "problems",
    }
    assert loop("goal", "add", "T", "--accept", "true") == {"goal": "G1"}
    assert set(loop("status")) == {"goals", "counts", "resume", "threads", "managed_threads"}
    assert set(loop("next")) == {"goal", "title", "reason"}
    assert set(loop("check")) == {"ok", "gates", "protected", "budget", "authorised", "roles"}
    plan = loop("run", "--maker", "true", "--dry-run")
    assert set(plan) == {"plan"} and set(plan["plan"]) == {
        "goals",
        "unreachable",
        "gates",
        "budget",
        "maker",
        "checkers",
    }
    report = loop("run", "--maker", "true", "--max-iterations", "1")
    assert set(report) == {
        "objective",
        "iterations",
        "budget",
        "kept",
        "reverted",
        "blocked",
        "questions",
        "stopped",
        "gate_logs",
        "transcripts",
    }
