"""The idle pass's own readings of node state agree with the full pass's.

relay.watchers.quiet reads and writes a few things without the models the full pass uses
(the pass log, who started a pass, how long a decision holds); each is held here to the
model's answer, so the two cannot drift apart. Pure: temporary directories, no hub.
"""

from __future__ import annotations

import contextlib
import os
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from relay.edges.local import NodeState, PassRecord
from relay.watchers import quiet, registration
from relay.watchers.report import PassReport

NOW = datetime(2026, 3, 1, 12, 0, 0, 250000, tzinfo=UTC)


@pytest.mark.parametrize("at", [NOW, NOW.replace(microsecond=0)])
@pytest.mark.parametrize("by", ["person", "scheduler", None])
def test_the_pass_log_line_is_the_one_a_pass_record_writes(
    tmp_path: Path, at: datetime, by: str | None
) -> None:
    report = PassReport(node="box", requests=1, not_modified=1, seconds=0.01234, started_by=by)
    full, fast = NodeState(tmp_path / "full"), NodeState(tmp_path / "fast")
    for state in (full, fast):  # an older pass first: the log is appended to
        state.log_pass(PassRecord(at=NOW - timedelta(minutes=5), node="box", outcome="acted"))
    full.log_pass(
        PassRecord(
            at=at,
            node="box",
            outcome="idle",
            requests=1,
            not_modified=1,
            seconds=round(report.seconds, 3),
            started_by=by,
        )
    )
    quiet.log_pass(fast.root, report, at=at)
    assert fast.pass_log_path.read_bytes() == full.pass_log_path.read_bytes()
    assert fast.heartbeat() == full.heartbeat()


def test_the_pass_log_keeps_as_many_passes_as_the_full_pass_keeps(tmp_path: Path) -> None:
    state = NodeState(tmp_path)
    for n in range(quiet.PASS_LOG_KEEP + 5):
        quiet.log_pass(state.root, PassReport(node=f"n{n}"), at=NOW)
    kept = state.passes()
    assert len(kept) == quiet.PASS_LOG_KEEP
    assert kept[-1].node == f"n{quiet.PASS_LOG_KEEP + 4}"


def record(*, active: bool, nonce: str | None) -> registration.WatcherRecord:
    argv = ["relay", "watch", "--once", "--scheduled"] + (["--nonce", nonce] if nonce else [])
    entry = {
        "label": "dev.relay.box",
        "argv": argv,
        "working_dir": "/tmp",
        "stdout_log": "/tmp/out.log",
        "stderr_log": "/tmp/err.log",
        "interval_seconds": 300,
        "environment": [["PATH", "/usr/bin"]],
    }
    return registration.WatcherRecord(
        node="box", scheduler="cron", entry=entry, active=active, registered_at=NOW
    )


@pytest.mark.parametrize(
    ("kept", "presented"),
    [
        (None, "abc"),
        (record(active=True, nonce="abc"), "abc"),
        (record(active=True, nonce="abc"), "abd"),
        (record(active=True, nonce="abc"), None),
        (record(active=False, nonce="abc"), "abc"),
        (record(active=True, nonce=None), "abc"),
    ],
)
def test_who_started_a_pass_is_told_as_the_registration_tells_it(
    tmp_path: Path, kept: registration.WatcherRecord | None, presented: str | None
) -> None:
    state = NodeState(tmp_path)
    if kept is not None:
        registration.save(state, kept)
    expected = registration.started_by(state, "box", presented)
    assert quiet.started_by(state.root, "box", presented) == expected
    assert quiet.started_by(state.root, "other", presented) == "person"


def test_a_decision_holds_until_the_first_horizon_at_which_it_is_unchanged() -> None:
    lapses = NOW + timedelta(minutes=30)  # a lease that lapses in half an hour
    assert quiet.holds_until(lambda t: t < lapses, NOW) == NOW + timedelta(seconds=600)
    assert quiet.holds_until(lambda t: True, NOW) == NOW + timedelta(seconds=3600)
    assert quiet.holds_until(lambda t: t < NOW + timedelta(seconds=30), NOW) is None


def test_the_inputs_digest_moves_with_state_refs_and_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "clone"
    state = root / ".git" / "relay"
    state.mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (state / "seen.json").write_text("{}")
    first = quiet.inputs_digest(root, state)
    assert first is not None
    for written in ("passes.jsonl", "etag-cache.json", "quiet.json"):
        (state / written).write_text("x")  # what every pass writes is no input
    assert quiet.inputs_digest(root, state) == first
    changes = [
        lambda: (state / "seen.json").write_text('{"a": 1}'),
        lambda: (root / ".git" / "packed-refs").write_text("0" * 40 + " refs/remotes/origin/main"),
        lambda: (root / "docs" / "loop").mkdir(parents=True),  # nothing read: no change
        lambda: (root / "docs" / "loop" / "LOOP.md").write_text("# loop"),
        lambda: monkeypatch.setenv("RELAY_HEARTBEAT_SECONDS", "30"),
    ]
    seen = {first}
    for change in changes:
        before = quiet.inputs_digest(root, state)
        change()
        after = quiet.inputs_digest(root, state)
        if after == before:
            continue
        assert after not in seen
        seen.add(after)
    assert len(seen) == 5, "each read input moved the digest"
    (root / ".git" / "commondir").write_text("../..")
    assert quiet.inputs_digest(root, state) is None, "a linked worktree: always a full pass"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and sockets are POSIX")
def test_what_a_pusher_leaves_in_relays_work_tree_is_never_read(tmp_path: Path) -> None:
    """A commit checked out in relay's work tree may hold a link to /dev/zero, a FIFO, a
    socket or a huge file: the digest neither reads nor waits on them, so no pass fails or
    hangs on what a pusher wrote. State files that are not plain files are named, not read."""
    root = tmp_path / "clone"
    state = root / ".git" / "relay"
    tree = state / "worktree"
    tree.mkdir(parents=True)
    (tree / ".git").write_text("gitdir: elsewhere\n")
    (tree / "zero").symlink_to("/dev/zero")
    os.mkfifo(tree / "fifo")
    held = socket.socket(socket.AF_UNIX)
    with contextlib.suppress(OSError):  # a socket's path has a short limit on some systems
        held.bind(str(tree / "sock"))
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (state / "seen.json").write_text("{}")
    try:
        first = quiet.inputs_digest(root, state)
        assert first is not None
        (tree / "big.bin").write_bytes(b"\0" * (quiet.BIG_FILE + 1))
        assert quiet.inputs_digest(root, state) == first, "the work tree is no input"
        (state / "zero").symlink_to("/dev/zero")  # in the state folder itself: named, not read
        os.mkfifo(state / "fifo")
        named = quiet.inputs_digest(root, state)
        assert named is not None and named != first
        (state / "huge.json").write_bytes(b"{" * (quiet.BIG_FILE + 1))
        assert quiet.inputs_digest(root, state) not in (None, named)
    finally:
        held.close()
