"""An artifact with any file name comes back, and nothing after the steps loses a RESULT:
a name a RESULT cannot carry travels under a safe one with its own name in the note,
and a RESULT that cannot be composed is still posted, saying why."""

from __future__ import annotations

import sys
from pathlib import Path

from worlds import WORKER, World, git

from relay.protocol import Status, TaskMsg

PY = Path(sys.executable).as_posix()


def test_artifacts_with_any_file_name_come_back_under_safe_names(
    world: World, job: int, tmp_path: Path
) -> None:
    script = tmp_path / "make.py"
    script.write_text(
        "from pathlib import Path\n"
        "Path('TEST-a.Outer$Inner.xml').write_text('<testsuite/>')\n"
        "Path('\\u00fc.txt').write_text('umlaut')\n"
        "Path('a_.txt').write_text('plain')\n"
        "Path('a$.txt').write_text('dollar')\n"
        "Path('e\\x1b[31m.txt').write_text('escape')\n"
        + ("open(b'b\\xff.txt', 'wb').write(b'latin')\n" if sys.platform != "win32" else "")
    )
    world.controller.call(
        "task", str(job), "--step", f'"{PY}" "{script.as_posix()}"',
        "--artifact", "*.xml", "--artifact", "*.txt",
    )  # fmt: skip
    world.worker.ok("watch", "--once", "--node", WORKER)
    body = world.comments(job)[-1]["body"]
    assert body.startswith("### RESULT 1 · done"), body
    assert "`TEST-a.Outer_Inner.xml`" in body and "its name: TEST-a.Outer$Inner.xml" in body
    assert "`_.txt`" in body and "its name: ü.txt" in body
    assert "`a_.txt`" in body and "its name: a$.txt" in body
    assert "its name: e\\x1b[31m.txt" in body and "\x1b" not in body
    base = f"docs/loop/relay/{job}/artifacts/001"
    files = git("ls-tree", "-r", "--name-only", "main", cwd=world.bare).split("\n")
    assert f"{base}/TEST-a.Outer_Inner.xml" in files
    assert world.remote_file(f"{base}/a_.txt") == "plain", "a safe name is never taken"
    dollar = [f for f in files if f.startswith(f"{base}/a_-")]
    assert len(dollar) == 1 and world.remote_file(dollar[0]) == "dollar"
    if sys.platform != "win32":
        assert "its name: b\\xff.txt" in body
        assert world.remote_file(f"{base}/b_.txt") == "latin"


def test_a_result_that_cannot_be_composed_is_still_posted_saying_why(world: World) -> None:
    """Whatever raises after the steps ran (here an artifact record no RESULT can hold),
    the claim is answered: a RESULT with no log, partial, and one line saying why."""
    from relay.edges.steps import RunOutcome, RunStatus
    from relay.node.artifacts import Found
    from relay.node.context import open_node
    from relay.node.execute import TaskRun, safe_draft

    ctx = open_node(repo_dir=world.worker.clone, node=WORKER, api=None)
    task = TaskMsg(issue=1, node="c", task=1, objective="o", steps=("x",), artifacts=("x",))
    broken = Found("x.txt", -1, "0" * 64, b"x")
    run = TaskRun(RunOutcome(RunStatus.DONE, ()), found=(broken,))
    draft = safe_draft(ctx, task, run, token="t")
    assert draft.result.status == Status.PARTIAL and draft.log is None
    assert "could not be composed: ValidationError" in draft.result.observations
    assert "\n" not in draft.result.observations and not draft.result.artifacts
