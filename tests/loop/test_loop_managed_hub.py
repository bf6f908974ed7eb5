"""A managed worker's ``always_ask`` request answered by a person through a relay job on
a real `relay hub`: the request is posted as a comment on the job, a stranger's answer and
an answer to another request are not taken, and the answer of an instruction account of
the loop's node goes back to the stand-in as the tool confirmation."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import managed_standin
import pytest
from loop_project import FILES, TEST_GATE
from managed_standin import KEY, Standin
from worlds import OWNER, HubLike, Tokens, World, data_of, git, loop_world

standin_process = managed_standin.standin_process  # the fixtures, shared
standin = managed_standin.standin


@pytest.fixture(scope="module")
def tokens(git_hub: HubLike) -> Tokens:
    return Tokens(git_hub)


@pytest.fixture
def world(
    tmp_path: Path,
    git_hub: HubLike,
    tokens: Tokens,
    unique: str,
    monkeypatch: pytest.MonkeyPatch,
) -> World:
    made = loop_world(tmp_path, git_hub, tokens, name=f"managed-{unique}", monkeypatch=monkeypatch)
    made.init()
    made.join_both()
    return made


@pytest.mark.timeout(300)
def test_a_permission_request_reaches_a_person_through_a_relay_job(
    world: World, standin: Callable[..., Standin]
) -> None:
    c = world.controller
    root = c.clone
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "the calc project", cwd=root)
    c.call("loop", "init", "--gate", TEST_GATE, "--retries", "0")  # commits the spine
    job = world.open_job(title="Permissions of the managed run", objective="Answer them.")
    api = standin(
        [
            [
                {"spawn": "maker", "as": "m1"},
                {"in": "m1", "tool": "bash", "input": {"command": "pytest -q"}},
                {"in": "m1", "idle": True},
                {"say": "done asking"},
            ]
        ]
    )
    env = c.env(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=KEY)
    made = subprocess.run(
        c.argv("loop", "roster", "create", "--backend", "managed-agents", "--json"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    run = subprocess.Popen(
        c.argv("loop", "run", "--backend", "managed-agents", "--ask-on", str(job), "--json"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    answered = threading.Event()

    def person() -> None:
        """The person reads the job, answers the request it names (a stranger's answer,
        and one to another request, are not taken)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not answered.is_set():
            for comment in world.comments(job):
                if comment["body"].startswith("**Permission asked**"):
                    tool_use_id = comment["body"].split("`allow ", 1)[1].split("`", 1)[0]
                    world.stranger_comment(job, f"allow {tool_use_id}")
                    world.api(
                        f"/issues/{job}/comments", "POST", {"body": "allow sevt_not_this_one"}
                    )
                    world.api(
                        f"/issues/{job}/comments",
                        "POST",
                        {"body": f"deny {tool_use_id}: tests only"},
                    )
                    answered.set()
                    return
            time.sleep(0.5)

    helper = threading.Thread(target=person, daemon=True)
    helper.start()
    try:
        out, err = run.communicate(timeout=240)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        answered.set()
        helper.join(timeout=10)
    assert run.returncode == 0, err
    data = data_of(out)
    [asked] = data["asked"]
    assert asked["result"] == "deny"
    [sent] = api.sent("user.tool_confirmation", data["session"])
    assert sent == {
        "type": "user.tool_confirmation",
        "tool_use_id": asked["tool_use_id"],
        "result": "deny",
        "deny_message": "tests only",
    }
    [posted] = [x for x in world.comments(job) if x["body"].startswith("**Permission asked**")]
    assert "thread sthr_" in posted["body"] and "`bash`" in posted["body"]
    assert posted["user"]["login"] == OWNER  # the controller node acts with its person's token
    # the worker thread's tool result is the person's denial
    client = api.client()
    events = client.beta.sessions.threads.events.list(asked["thread"], session_id=data["session"])
    [result] = [e for e in events if e.type == "agent.tool_result"]
    assert result.is_error and "tests only" in str(result.content)
