"""A whole round trip through real processes: task, the worker's pass, the controller's."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from worlds import WORKER, World, data_of, git

PY = Path(sys.executable).as_posix()


def hook_command(out: Path) -> str:
    """An on-result hook that appends what it was given to ``out``."""
    code = (
        "import os,json;"
        f"f=open({str(out)!r},'a');"
        "r=json.load(open(os.environ['RELAY_RESULT_FILE']));"
        "f.write(os.environ['RELAY_ISSUE']+' '+os.environ['RELAY_TASK']+' '"
        "+os.environ['RELAY_RESULT_STATUS']+' '+r['summary']+chr(10))"
    )
    return f'"{PY}" -c "{code}"'


def test_task_then_worker_pass_then_controller_pass(world: World, job: int, tmp_path: Path) -> None:
    c, w = world.controller, world.worker
    hook_out = tmp_path / "hook.txt"
    c.call("join", "--on-result", hook_command(hook_out))
    posted = c.json(
        "task", str(job), "--step", f'"{PY}" -c "print(40 + 2)"', "--step", "git --version"
    )
    assert posted == {"issue": job, "task": 1}
    assert world.labels(job) == {"awaiting:worker"}

    report = w.json("watch", "--once")
    assert report["outcome"] == "acted"
    assert [(t["issue"], t["task"], t["status"]) for t in report["tasks"]] == [(job, 1, "done")]

    # the claim: an atomic ref at a commit the remote has, a comment and 👀 on the TASK
    refs = world.claim_refs()
    sha = refs[f"refs/relay/claims/{job}/1"]
    git("cat-file", "-e", f"{sha}^{{commit}}", cwd=world.bare)
    comments = world.comments(job)
    heads = [b["body"].split("\n", 1)[0] for b in comments]
    assert heads[0].startswith("### TASK 1")
    assert any("laim" in h for h in heads[1:-1]), heads
    assert heads[-1].startswith("### RESULT 1")
    reactions = world.api(f"/issues/comments/{comments[0]['id']}/reactions")
    assert reactions == []  # no 👀 any more: the claim comment and the baton say it

    # the log: committed and pushed, linked at the pushed commit, excerpted
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "42" in log and "git version" in log
    result = comments[-1]["body"]
    link = re.search(rf"/blob/([0-9a-f]{{40}})/docs/loop/relay/{job}/logs/result-001\.log", result)
    assert link is not None, result
    assert git("show", f"{link.group(1)}:docs/loop/relay/{job}/logs/result-001.log", cwd=world.bare)
    assert "done" in result.lower() and "All 2 step(s) succeeded." in result
    excerpt = re.search(r"```text\n(.*?)\n```", result, re.DOTALL)
    assert excerpt is not None and "42" in excerpt.group(1)
    assert world.labels(job) == {"awaiting:controller"}
    events = world.api(f"/issues/{job}/events")
    moves = [
        (e["event"], e["label"]["name"]) for e in events if e["event"] in ("labeled", "unlabeled")
    ]
    took, gave = moves.index(("labeled", "working")), moves.index(("unlabeled", "working"))
    back = len(moves) - 1 - moves[::-1].index(("labeled", "awaiting:controller"))
    assert took < gave and took < back, moves

    # the worker's pass fired again changes nothing
    before = world.frozen(job)
    again = w.json("watch", "--once")
    assert again["outcome"] == "idle" and again["tasks"] == []
    assert world.frozen(job) == before

    # the controller's pass prints the result and runs the hook, exactly once
    first = c.ok("watch", "--once")
    assert f"#{job}: RESULT 1 is back: done" in first
    second = c.ok("watch", "--once")
    assert "RESULT 1 is back" not in second
    assert hook_out.read_text().splitlines() == [f"{job} 1 done All 2 step(s) succeeded."]
    after = world.frozen(job)  # only the body's "Current state" changed, by the controller
    assert "RESULT 1 came back done" in after["issue"][0]
    assert {**after, "issue": after["issue"][1:]} == {**before, "issue": before["issue"][1:]}

    shown = data_of(c.call("result", str(job), "--json"))
    assert shown["issue"] == job and shown["task"] == 1
    assert shown["result"]["status"] == "done" and shown["result"]["node"] == WORKER
    assert c.ok("result", str(job), "--wait").startswith(f"#{job} RESULT 1: done")


def test_long_output_gives_an_excerpt_of_at_most_30_lines(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    c.call("task", str(job), "--step", f'"{PY}" -c "[print(f\'line {{i}}\') for i in range(200)]"')
    w.call("watch", "--once")
    result = world.comments(job)[-1]["body"]
    fence = re.search(r"```text\n(.*?)\n```", result, re.DOTALL)
    assert fence is not None, result
    assert 0 < len(fence.group(1).splitlines()) <= 30
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "line 0\n" in log and "line 199\n" in log


def test_a_step_that_outlives_its_timeout_is_killed_and_reported(world: World, job: int) -> None:
    c, w = world.controller, world.worker
    w.call("join", "--step-timeout", "1")
    c.call("task", str(job), "--step", f'"{PY}" -c "import time; time.sleep(60)"')
    report = data_of(w.call("watch", "--once", "--json"))
    assert [t["status"] for t in report["tasks"]] == ["failed"]
    assert report["seconds"] < 20
    result = world.comments(job)[-1]["body"]
    assert "timed out" in result
    assert world.labels(job) == {"awaiting:controller"}


def test_result_before_any_answer_says_so(world: World, job: int) -> None:
    c = world.controller
    done = c.run("result", str(job))
    assert done.returncode == 2 and "has no task yet" in done.stderr
    c.call("task", str(job), "--step", "git --version")
    waiting = c.run("result", str(job), "--json")
    assert waiting.returncode == 1
    assert data_of(waiting.stdout) == {"issue": job, "task": 1, "result": None}


def test_a_task_names_its_shell_and_the_worker_runs_its_steps_in_it(world: World, job: int) -> None:
    import re
    import shutil

    if not shutil.which("bash"):
        return  # a machine without bash has nothing to show here
    world.controller.call(
        "task", str(job), "--shell", "bash", "--step", 'echo "in ${BASH_VERSINFO[0]}"'
    )
    task = world.comments(job)[-1]["body"]
    assert "**Shell:** `bash`" in task
    world.worker.call("watch", "--once")
    result = world.comments(job)[-1]["body"]
    assert result.startswith("### RESULT 1 · done"), result
    assert re.search(r"^in [0-9]+$", result, re.MULTILINE), "the step's own bash said its version"
