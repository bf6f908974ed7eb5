"""Both nodes on webhooks, end to end on the real hub: TASK to RESULT with no polling.

Each node runs `relay watch --webhook` as a process with an hour between reconciling
passes; the hub delivers issue and comment events to both. After the watchers' first
pass, the TASK goes out, and only deliveries can make the worker run it and the
controller notice the RESULT.
"""

from __future__ import annotations

import contextlib
import json
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

from events_world import (
    Watchers,
    deliver,
    free_port,
    issue_payload,
    node_env,
    passes,
    sign,
    wait_until,
)
from worlds import World

from relay.edges.local import NodeState, secret_path

PY = Path(sys.executable).as_posix()
VECTOR_SECRET = "It's a Secret to Everybody"
VECTOR_BODY = b"Hello, World!"
VECTOR_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def open_job(world: World) -> int:
    return world.open_job(worker=world.worker.name, title="Webhooks", objective="Go.")


def hooks(world: World) -> list[dict[str, object]]:
    found: list[dict[str, object]] = world.api("/hooks")
    return found


def test_task_to_result_with_both_nodes_on_webhooks(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    c, w = world.controller, world.worker
    c_port, w_port = free_port(), free_port()
    # the controller's secret is made by join and kept in its state; the worker's is given
    c.call("join", "--webhook", f"http://127.0.0.1:{c_port}/")
    again = c.call("join", "--webhook", f"http://127.0.0.1:{c_port}/")
    assert "webhook updated" in again
    shared = "worker secret from the environment"
    with w.monkeypatch.context() as m:
        m.setenv("RELAY_WEBHOOK_SECRET", shared)
        w.call("join", "--webhook", f"http://127.0.0.1:{w_port}/")
    assert len(hooks(world)) == 2  # joining twice updated the hook, no duplicate
    made = secret_path(NodeState.for_clone(c.clone))
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert not secret_path(NodeState.for_clone(w.clone)).exists()

    job = open_job(world)
    watchers.start(c.clone, node=c.name, port=c_port, env=node_env(c.token), log=tmp_path / "c")
    w_env = node_env(w.token, RELAY_WEBHOOK_SECRET=shared)
    worker = watchers.start(w.clone, node=w.name, port=w_port, env=w_env, log=tmp_path / "w")
    assert worker.url == f"http://127.0.0.1:{w_port}"
    c_before = passes(c.clone)

    started = time.monotonic()
    c.call("task", str(job), "--step", f'"{PY}" -c "print(40 + 2)"')
    wait_until(lambda: any(h.startswith("### RESULT 1") for h in world.heads(job)), what="RESULT")
    took = time.monotonic() - started
    # the baton moves after the RESULT is posted: the turn's last act
    wait_until(lambda: world.labels(job) == {"awaiting:controller"}, what="the baton back")
    notified = wait_until(
        lambda: NodeState.for_clone(c.clone).notified(), what="the controller's notice"
    )
    assert (job, 1) in notified
    # the controller's passes came from deliveries (the pass is logged once it ends)
    wait_until(lambda: passes(c.clone) > c_before, what="the controller's pass logged")
    assert took < 20, took
    shown = [h["last_response"] for h in world.api("/hooks")]  # type: ignore[index]
    assert {r["status"] for r in shown} == {"active"}, shown


def test_unsigned_badly_signed_and_redelivered_deliveries_on_a_real_watcher(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    c = world.controller
    secret = "the controller's secret"
    env = node_env(c.token, RELAY_WEBHOOK_SECRET=secret)
    watch = watchers.start(c.clone, node=c.name, port=0, env=env, log=tmp_path / "c")
    job = open_job(world)
    body = issue_payload(world.issue(job), world.repo)
    base = {"X-GitHub-Event": "issue_comment"}
    before = passes(c.clone)
    missing = deliver(watch.url + "/", body, {**base, "X-GitHub-Delivery": str(uuid.uuid4())})
    bad = deliver(
        watch.url + "/",
        body,
        {**base, "X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": sign("x", body)},
    )
    assert (missing, bad) == (401, 403)
    signed = {
        **base,
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(secret, body),
    }
    assert deliver(watch.url + "/", body, signed) == 202
    wait_until(lambda: passes(c.clone) == before + 1, what="the pass of the signed delivery")
    assert deliver(watch.url + "/", body, signed) == 200  # the same id again: dropped
    time.sleep(0.5)
    assert passes(c.clone) == before + 1  # bad, missing and redelivered ran nothing
    log = [json.loads(line) for line in NodeState.for_clone(c.clone).pass_log_path.open()]
    assert log[-1]["node"] == c.name


def test_githubs_test_vector_passes_verification_on_a_real_watcher(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    c = world.controller
    env = node_env(c.token, RELAY_WEBHOOK_SECRET=VECTOR_SECRET)
    watch = watchers.start(c.clone, node=c.name, port=0, env=env, log=tmp_path / "c")
    head = {"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": str(uuid.uuid4())}
    right = deliver(watch.url + "/", VECTOR_BODY, {**head, "X-Hub-Signature-256": VECTOR_SIGNATURE})
    wrong = VECTOR_SIGNATURE[:-1] + ("0" if VECTOR_SIGNATURE[-1] != "0" else "1")
    assert deliver(watch.url + "/", VECTOR_BODY, {**head, "X-Hub-Signature-256": wrong}) == 403
    # the signature verifies; "Hello, World!" is then refused as a body that is not JSON
    assert right not in (401, 403) and 400 <= right < 500, right


def test_a_delivery_that_finds_the_node_busy_is_run_once_the_lock_frees(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    """A scheduled pass of the same node may hold its lock when a delivery arrives; the
    delivery is already taken, so the receiver must try again rather than drop the turn."""
    c, w = world.controller, world.worker
    port = free_port()
    secret = "busy test secret"
    with w.monkeypatch.context() as m:
        m.setenv("RELAY_WEBHOOK_SECRET", secret)
        w.call("join", "--webhook", f"http://127.0.0.1:{port}/relay")
    job = open_job(world)
    w_env = node_env(w.token, RELAY_WEBHOOK_SECRET=secret)
    watchers.start(w.clone, node=w.name, port=port, env=w_env, log=tmp_path / "w")
    lock = NodeState.for_clone(w.clone).lock(w.name).path
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from filelock import FileLock\n"
            f"with FileLock({str(lock)!r}):\n    print('held', flush=True); time.sleep(2.5)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        c.call("task", str(job), "--step", "true")
        wait_until(
            lambda: any(h.startswith("### RESULT 1") for h in world.heads(job)),
            timeout=30,
            what="the RESULT after the lock was released",
        )
    finally:
        holder.wait(timeout=10)


def test_ctrl_c_on_a_webhook_watcher_stops_its_step_answers_and_ends_it(
    world: World, watchers: Watchers, tmp_path: Path
) -> None:
    import os
    import signal

    w = world.worker
    port = free_port()
    shared = "worker secret"
    with w.monkeypatch.context() as m:
        m.setenv("RELAY_WEBHOOK_SECRET", shared)
        w.call("join", "--webhook", f"http://127.0.0.1:{port}/")
    job = open_job(world)
    env = node_env(w.token, RELAY_WEBHOOK_SECRET=shared)
    watch = watchers.start(w.clone, node=w.name, port=port, env=env, log=tmp_path / "w")
    group = tmp_path / "step.pgid"
    long = f"echo $$ > {group}; sleep 40"
    world.controller.call("task", str(job), "--step", long, "--step", "echo never")
    wait_until(lambda: group.exists() and group.read_text().strip(), what="the long step")
    pgid = int(group.read_text())
    try:
        time.sleep(2)
        sent = time.monotonic()
        watch.proc.send_signal(signal.SIGINT)
        assert watch.proc.wait(timeout=30) == 130, (tmp_path / "w").read_text()
        assert time.monotonic() - sent < 20
        with_result = [h for h in world.heads(job) if h.startswith("### RESULT 1")]
        assert with_result == ["### RESULT 1 · stopped"], world.heads(job)
        body = world.comments(job)[-1]["body"]
        assert "never ran: step 2 (`echo never`)" in body, body
        assert "relay: stopping TASK 1" in (tmp_path / "w").read_text()
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            pass
        else:
            raise AssertionError("the step's process group outlived the stop")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
