"""Ctrl-C means stop, and nothing is lost: a signal to `relay watch` while a step runs is
passed on to the step's process group (killed after a short grace, or at once on a second
Ctrl-C), the TASK is answered with a `stopped` RESULT naming the interrupted step and the
steps that never ran, and the next pass leaves the TASK alone.

Each test runs a real `relay watch` process against the session's hub, with a 40-second
step, and signals it a couple of seconds into that step."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import pytest
from worlds import Node, World, envelope_of

pytestmark = pytest.mark.skipif(os.name == "nt", reason="signals and process groups are POSIX")

LONG = 40  # seconds the interrupted step would run


def group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (a zombie does not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def wait_until(check: object, *, timeout: float, what: str) -> None:
    """Wait for a condition (a callable), failing the test with ``what`` at the deadline."""
    assert callable(check)
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@dataclass
class Watch:
    """A `relay watch` process, its stderr lines read as they come (with their time)."""

    proc: subprocess.Popen[str]
    lines: list[tuple[float, str]] = field(default_factory=list)
    out: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.readers = [
            threading.Thread(target=self._read, args=(self.proc.stderr, True), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stdout, False), daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read(self, stream: IO[str] | None, err: bool) -> None:
        assert stream is not None
        for line in stream:
            if err:
                self.lines.append((time.monotonic(), line.rstrip("\n")))
            else:
                self.out.append(line)

    def said(self, text: str) -> float | None:
        """When a line holding ``text`` came on stderr (None: not yet)."""
        return next((at for at, line in self.lines if text in line), None)

    def end(self, *, timeout: float) -> tuple[int, str, float]:
        """Wait for the exit: (exit status, stdout, when it exited)."""
        try:
            status = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        ended = time.monotonic()
        for reader in self.readers:
            reader.join(timeout=10)
        return status, "".join(self.out), ended


_STARTED: list[subprocess.Popen[str]] = []


def start_watch(node: Node, *args: str, **env: str) -> Watch:
    proc = subprocess.Popen(
        node.argv("watch", *args),
        env=node.env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _STARTED.append(proc)
    return Watch(proc)


@pytest.fixture(autouse=True)
def no_watch_left() -> Iterator[None]:
    """A test that fails half-way leaves no `relay watch` running."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def step_group(tmp_path: Path) -> Iterator[Path]:
    """Where the long step writes its process group (its shell leads it); whatever the
    test leaves of that group is killed at the end."""
    where = tmp_path / "step.pgid"
    yield where
    if where.exists() and where.read_text().strip():
        pgid = int(where.read_text())
        if group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)


def post_long_task(world: World, job: int, where: Path, *, trap: bool = False) -> str:
    """TASK 1: a quick step, the long one (which writes its group first; with ``trap`` it
    ignores SIGINT and SIGTERM, so only the kill ends it), then two more. The long step's
    command."""
    ignore = "trap '' INT TERM; " if trap else ""
    long = f"{ignore}echo $$ > {where}; echo long-step-began; sleep {LONG}"
    world.controller.call(
        "task", str(job),
        "--step", "echo first-step-ran",
        "--step", long,
        "--step", "echo third-step-ran",
        "--step", "echo fourth-step-ran",
    )  # fmt: skip
    return long


def into_the_long_step(world: World, job: int, watch: Watch, where: Path) -> int:
    """Wait until the long step runs, then a couple of seconds more; its process group."""
    wait_until(
        lambda: where.exists() and where.read_text().strip() and watch.proc.poll() is None,
        timeout=60,
        what="the long step to start",
    )
    pgid = int(where.read_text())
    assert group_alive(pgid)
    time.sleep(2)
    assert watch.proc.poll() is None, watch.lines
    return pgid


def stopped_result(world: World, job: int, long: str, *, by: str) -> str:
    """The TASK's answer, checked: a `stopped` RESULT naming step 2 as interrupted (``by``
    the signal's words) and steps 3 and 4 as never run, with the log so far committed."""
    comments = world.comments(job)
    results = [c["body"] for c in comments if c["body"].startswith("### RESULT 1")]
    assert len(results) == 1, [c["body"][:80] for c in comments]
    body = results[0]
    assert body.startswith("### RESULT 1 · stopped"), body
    assert "**Interrupted step:** 2" in body
    assert f"Stopped on the node ({by}) during step 2 of 4" in body
    assert "never ran: step 3 (`echo third-step-ran`), step 4 (`echo fourth-step-ran`)" in body
    assert "Half-done" not in body
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "first-step-ran" in log and "long-step-began" in log
    assert f"[step 2: stopped by {by}" in log
    assert "[relay was stopped: never ran step 3, 4]" in log
    assert "third-step-ran" not in log.replace("$ echo third-step-ran", "")
    assert "[result log](" in body  # committed, linked like any log
    assert world.labels(job) == {"awaiting:controller"}
    return body


def next_pass_leaves_it(world: World, job: int) -> None:
    """The next pass neither answers the TASK again nor runs it."""
    before = world.comments(job)
    done = world.worker.run("watch", "--once")
    assert done.returncode == 0, done.stderr
    assert "half-done" not in done.stdout and "claiming" not in done.stdout, done.stdout
    assert world.comments(job) == before
    assert world.labels(job) == {"awaiting:controller"}


def test_ctrl_c_stops_the_step_and_answers_stopped(
    world: World, job: int, step_group: Path
) -> None:
    long = post_long_task(world, job, step_group)
    watch = start_watch(world.worker, "--once")
    pgid = into_the_long_step(world, job, watch, step_group)
    sent = time.monotonic()
    watch.proc.send_signal(signal.SIGINT)
    status, out, ended = watch.end(timeout=LONG)
    assert status == 130, watch.lines
    assert ended - sent < LONG / 2, "relay waited for the step instead of stopping it"
    said = watch.said("relay: stopping TASK 1 on #")
    assert said is not None and said - sent < 5, watch.lines
    stopping = [line for _, line in watch.lines if "stopping" in line]
    assert len(stopping) == 1 and "Ctrl-C" in stopping[0], watch.lines
    assert "RESULT 1 posted (stopped" in out, out
    assert not group_alive(pgid)
    stopped_result(world, job, long, by="Ctrl-C")
    next_pass_leaves_it(world, job)


def test_a_second_ctrl_c_kills_the_step_at_once(world: World, job: int, step_group: Path) -> None:
    long = post_long_task(world, job, step_group, trap=True)  # the step ignores Ctrl-C
    # a grace far longer than the wait below: only the second Ctrl-C can end the step
    watch = start_watch(world.worker, "--once", RELAY_STOP_GRACE="120")
    pgid = into_the_long_step(world, job, watch, step_group)
    watch.proc.send_signal(signal.SIGINT)
    wait_until(lambda: watch.said("relay: stopping") is not None, timeout=20, what="stopping")
    assert group_alive(pgid)  # it ignored the signal passed on, and the grace runs
    sent = time.monotonic()
    watch.proc.send_signal(signal.SIGINT)
    wait_until(lambda: not group_alive(pgid), timeout=20, what="the step's group to die")
    assert time.monotonic() - sent < 20
    status, out, _ = watch.end(timeout=60)
    assert status == 130, watch.lines
    assert watch.said("relay: killed the step") is not None, watch.lines
    assert "RESULT 1 posted (stopped" in out, out
    stopped_result(world, job, long, by="Ctrl-C")
    next_pass_leaves_it(world, job)


def test_a_step_that_ignores_the_stop_is_killed_after_the_grace(
    world: World, job: int, step_group: Path
) -> None:
    long = post_long_task(world, job, step_group, trap=True)
    watch = start_watch(world.worker, "--once", RELAY_STOP_GRACE="1")
    pgid = into_the_long_step(world, job, watch, step_group)
    sent = time.monotonic()
    watch.proc.send_signal(signal.SIGINT)
    status, _out, ended = watch.end(timeout=LONG)
    assert status == 130, watch.lines
    assert ended - sent < LONG / 2
    assert not group_alive(pgid)
    stopped_result(world, job, long, by="Ctrl-C")


def test_sigterm_stops_the_step_as_ctrl_c_does(world: World, job: int, step_group: Path) -> None:
    long = post_long_task(world, job, step_group)
    watch = start_watch(world.worker, "--once", "--json")  # as a script would run it
    pgid = into_the_long_step(world, job, watch, step_group)
    sent = time.monotonic()
    watch.proc.send_signal(signal.SIGTERM)
    status, out, ended = watch.end(timeout=LONG)
    assert status == 128 + signal.SIGTERM, watch.lines
    assert ended - sent < LONG / 2
    assert watch.said("relay: stopping TASK 1") is not None, watch.lines
    doc = envelope_of(out)  # the envelope says what the exit status says
    assert doc["exit_code"] == 128 + signal.SIGTERM and not doc["ok"], doc
    assert [t["status"] for t in doc["data"]["tasks"]] == ["stopped"], doc
    assert not group_alive(pgid)
    stopped_result(world, job, long, by="SIGTERM")
    next_pass_leaves_it(world, job)


def test_ctrl_c_in_the_foreground_watch_stops_it_and_answers_stopped(
    world: World, job: int, step_group: Path
) -> None:
    long = post_long_task(world, job, step_group)
    watch = start_watch(world.worker, "--interval", "1")
    pgid = into_the_long_step(world, job, watch, step_group)
    sent = time.monotonic()
    watch.proc.send_signal(signal.SIGINT)
    status, out, ended = watch.end(timeout=LONG)
    assert status == 130, watch.lines
    assert ended - sent < LONG / 2
    assert "RESULT 1 posted (stopped" in out and "stopped" in out.splitlines()[-1], out
    assert not group_alive(pgid)
    stopped_result(world, job, long, by="Ctrl-C")
    next_pass_leaves_it(world, job)


def test_ctrl_c_stops_a_result_wait_cleanly(world: World, job: int) -> None:
    c = world.controller
    c.call("task", str(job), "--step", "echo nobody-runs-this")
    before = world.comments(job)
    proc = subprocess.Popen(
        c.argv("result", str(job), "--wait", "--poll", "0.5"),
        env=c.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _STARTED.append(proc)
    wait = Watch(proc)
    # past its quiet start the wait says what it waits for: it is in its loop now
    wait_until(lambda: wait.said("waiting for") is not None, timeout=60, what="the wait")
    waiting = len(wait.lines)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    status, out, ended = wait.end(timeout=30)
    assert status == 130
    assert ended - sent < 10
    assert out == ""
    after = [line for _, line in wait.lines[waiting:]]
    assert after == [
        f"relay: stopped waiting for the RESULT of TASK 1 on #{job}; nothing was changed"
        f" — `relay result {job} --wait` waits again"
    ], wait.lines
    assert world.comments(job) == before
    assert world.labels(job) == {"awaiting:worker"}


def test_a_fast_third_ctrl_c_leaves_only_once_the_log_so_far_is_kept(
    world: World, job: int, step_group: Path
) -> None:
    long = post_long_task(world, job, step_group, trap=True)
    watch = start_watch(world.worker, "--once", RELAY_STOP_GRACE="120")
    pgid = into_the_long_step(world, job, watch, step_group)
    watch.proc.send_signal(signal.SIGINT)
    wait_until(lambda: watch.said("relay: stopping") is not None, timeout=20, what="stopping")
    watch.proc.send_signal(signal.SIGINT)  # kills the step; the third comes right after
    time.sleep(0.05)  # (two signals at once would be delivered as one)
    watch.proc.send_signal(signal.SIGINT)
    status, out, _ = watch.end(timeout=60)
    assert status == 130, watch.lines
    assert not group_alive(pgid)
    if "RESULT 1 posted" not in out:  # it left before posting: the draft was kept first
        done = world.worker.run("watch", "--once")
        assert done.returncode == 0, done.stderr
        assert "half-done" not in done.stdout, done.stdout
    stopped_result(world, job, long, by="Ctrl-C")
    next_pass_leaves_it(world, job)


def test_sigterm_stops_a_webhook_watch_in_the_middle_of_its_pass(
    world: World, job: int, step_group: Path
) -> None:
    """`relay watch --webhook` runs its passes in the event loop's worker threads: one
    SIGTERM stops the step and the watch, which answers `stopped` and exits promptly."""
    long = post_long_task(world, job, step_group)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # the pass it starts with (its first reconcile) claims the TASK and runs its steps
    watch = start_watch(
        world.worker, "--webhook", "--listen", f"127.0.0.1:{port}", "--reconcile", "3600",
        RELAY_WEBHOOK_SECRET="a webhook secret",
    )  # fmt: skip
    pgid = into_the_long_step(world, job, watch, step_group)
    sent = time.monotonic()
    watch.proc.send_signal(signal.SIGTERM)
    status, out, ended = watch.end(timeout=LONG)
    assert status == 128 + signal.SIGTERM, watch.lines
    assert ended - sent < LONG / 2, "the watch did not exit after one SIGTERM"
    said = watch.said("relay: stopping TASK 1 on #")
    assert said is not None and said - sent < 5, watch.lines
    assert "RESULT 1 posted (stopped" in out, out
    assert not group_alive(pgid)
    stopped_result(world, job, long, by="SIGTERM")
    next_pass_leaves_it(world, job)
    after = world.comments(job)
    # between tasks (its first pass under way or done, nothing to run): it ends at once
    idle = start_watch(
        world.worker, "--webhook", "--listen", f"127.0.0.1:{port}", "--reconcile", "3600",
        RELAY_WEBHOOK_SECRET="a webhook secret",
    )  # fmt: skip
    wait_until(lambda: idle.out, timeout=60, what="the receiver to listen")
    time.sleep(0.3)
    sent = time.monotonic()
    idle.proc.send_signal(signal.SIGTERM)
    status, _out, ended = idle.end(timeout=LONG)
    assert status == 128 + signal.SIGTERM and ended - sent < 10, idle.lines
    assert [line for _, line in idle.lines if "relay:" in line] == [
        "relay: stopping the webhook receiver (SIGTERM again leaves now)"
    ], idle.lines
    assert world.comments(job) == after
