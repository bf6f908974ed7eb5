"""Steps a security review found the classifier read as harmless, against a real hub: code
handed to a shell as a here-string or a here-document is read like any other step, so a
recursive removal in it waits for a person whatever scope the controller typed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from relay_world import one_line_error
from test_relay_approvals import PERSON, people_world
from worlds import CONTROLLER, World

from relay.protocol import TaskMsg, render_message


def _wipe(form: str, scratch: Path) -> str:
    """A step handing `rm -rf scratch` to bash on its input, as ``form`` writes it (a
    here-document cannot be written: a step is one line)."""
    removal = f'rm -rf "{scratch.as_posix()}"'
    if form == "here-string":
        return f"bash <<< '{removal}'"
    return f"bash <<< $'\\x72m{removal[2:]}'"  # ANSI-C quoting: \x72 is r


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    made = tmp_path / "scratch"
    (made / "inner").mkdir(parents=True)
    return made


@pytest.mark.skipif(shutil.which("bash") is None, reason="the steps are bash")
@pytest.mark.parametrize("form", ["here-string", "ansi-c"])
def test_a_removal_handed_to_a_shell_on_its_input_waits_for_a_person(
    blank: World, scratch: Path, form: str
) -> None:
    """Issue bullet "Destructive by what a step does": `relay task` refuses it without
    `--authorized-by-human`; with it, the worker waits for a person's approval under
    `--scope build`, and runs it (the removal is real) once carol approves."""
    world = people_world(blank)
    job = world.open_job()
    step = _wipe(form, scratch)
    posted = world.controller.run(
        "task", str(job), "--step", step, "--scope", "build", "--shell", "bash"
    )
    refused = one_line_error(posted)
    assert posted.returncode != 0, "relay task posted it without --authorized-by-human"
    assert "step 1 is destructive (recursive removal (rm -r))" in refused, refused
    world.controller.call(
        "task", str(job), "--step", step, "--scope", "build", "--shell", "bash",
        "--authorized-by-human",
    )  # fmt: skip
    out = world.worker.call("watch", "--once")
    assert "waits for a person's approval" in out
    assert scratch.exists(), "rm -rf ran with no person's approval"
    world.api(f"/issues/{job}/comments", "POST", {"body": "/relay approve TASK 1"}, login=PERSON)
    out = world.worker.call("watch", "--once")
    assert "RESULT 1 posted (done" in out, out
    assert not scratch.exists(), "the approved step did not run"


@pytest.mark.skipif(shutil.which("bash") is None, reason="the steps are bash")
def test_a_here_string_task_posted_past_relay_task_is_declined(blank: World, scratch: Path) -> None:
    """The controller signs and posts a `build` TASK whose step is `bash <<< 'rm -rf …'`
    itself, with no person's authorization: the worker reads the here-string and declines."""
    world = people_world(blank)
    job = world.open_job()
    task = TaskMsg(
        issue=job,
        node=CONTROLLER,
        task=1,
        objective="Build it.",
        steps=(_wipe("here-string", scratch),),
        scope="build",
        shell="bash",
    )
    signed = world.signed(world.controller, render_message(task))
    world.api(f"/issues/{job}/comments", "POST", {"body": signed})
    world.api(f"/issues/{job}/labels", "PUT", {"labels": ["awaiting:worker"]})
    out = world.worker.call("watch", "--once")
    assert f"#{job}: TASK 1 answered as declined" in out, out
    assert scratch.exists(), "rm -rf ran on the controller's word alone"
    result = world.comments(job)[-1]["body"]
    assert "step 1 is destructive (recursive removal (rm -r))" in result
