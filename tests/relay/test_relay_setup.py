"""`relay init` (the wizard, --yes, a public repository, twice) and `relay join`."""

from __future__ import annotations

from pathlib import Path

import pytest
from relay_world import hook_script, one_line_error
from worlds import (
    CONTROLLER,
    OWNER,
    WORKER,
    HubLike,
    Tokens,
    World,
    data_of,
    git,
    make_world,
)

LABELS = {"awaiting:worker", "working", "awaiting:controller", "needs:human", "resolved"}


def init_args(world: World) -> tuple[str, ...]:
    return ("init", "--repo", world.repo, "--api", world.hub.url)


def test_the_wizard_asks_on_stdin_and_writes_the_spine(blank: World) -> None:
    answers = "lab-mac\n\n\nbuild, test\nforbidden\ny\n"
    done = blank.controller.run(*init_args(blank), stdin=answers)
    assert done.returncode == 0, done.stderr
    # questions and the plan go to stderr, so that stdout holds only the result
    assert "this node:    lab-mac" in done.stderr and "relay is set up in" in done.stdout
    assert "WARNING" not in done.stderr + done.stdout
    loop = blank.remote_file("docs/loop/LOOP.md")
    assert "## Relay" in loop and "lab-mac" in loop and "forbidden" in loop
    assert "build, test" in loop or "build,test" in loop.replace(" ", "")
    for name in ("GOALS.md", "BOARD.md", "handover.md", "relay/.gitkeep"):
        blank.remote_file(f"docs/loop/{name}")
    labels = {label["name"]: label for label in blank.api("/labels")}
    assert set(labels) >= LABELS
    assert all(labels[n]["color"] and labels[n]["description"] for n in LABELS)


def test_the_wizard_answered_no_changes_nothing(blank: World) -> None:
    before = blank.frozen()
    done = blank.controller.run(*init_args(blank), stdin="\n\n\n\n\nno\n")
    assert done.returncode == 1 and "nothing was changed" in done.stdout
    assert blank.frozen() == before
    assert blank.made_labels() == []
    assert not (blank.controller.clone / "docs").exists()


def test_the_wizard_without_answers_says_to_pass_yes(blank: World) -> None:
    before = blank.frozen()
    done = blank.controller.run(*init_args(blank), stdin="")
    assert done.returncode != 0
    # the first question was asked on stderr; the error is the one line after it
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("relay: ")]
    assert errors == [done.stderr.strip().splitlines()[-1]]
    assert "--yes" in errors[0]
    assert blank.frozen() == before


def test_init_yes_on_a_public_repository_warns(
    tmp_path: Path,
    hub: HubLike,
    tokens: Tokens,
    unique: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    public = make_world(
        tmp_path, hub, tokens, name=f"pub-{unique}", monkeypatch=monkeypatch, private=False
    )
    done = public.controller.run(*init_args(public), "--yes", "--node", CONTROLLER, "--json")
    assert done.returncode == 0, done.stderr
    assert data_of(done.stdout)["public"] is True  # stdout stays valid JSON
    assert "WARNING" in done.stderr and "PUBLIC" in done.stderr  # and the warning is loud
    assert data_of(public.controller.call("status", "--json"))["nodes"][0]["name"] == CONTROLLER


def test_init_json_names_what_it_did(blank: World) -> None:
    data = data_of(
        blank.controller.call(*init_args(blank), "--yes", "--node", CONTROLLER, "--json")
    )
    assert set(data) == {"repo", "node", "labels_created", "public", "job"}
    assert data["repo"] == blank.repo and data["node"] == CONTROLLER
    assert set(data["labels_created"]) == LABELS and data["public"] is False


def test_init_twice_points_to_join(world: World) -> None:
    before = world.frozen()
    line = one_line_error(world.worker.run(*init_args(world), "--yes"))
    assert "already has a `## Relay` section" in line and "relay join" in line
    assert one_line_error(world.controller.invoke(*init_args(world), "--yes")) == line
    assert world.frozen() == before


def test_join_registers_the_node_once(world: World) -> None:
    loop = world.remote_file("docs/loop/LOOP.md")
    assert CONTROLLER in loop and WORKER in loop and "none (declined)" in loop
    before = world.frozen()
    data = world.worker.json("join")
    assert data == {"node": WORKER, "scheduler": "none (declined)", "jobs": 0, "turns": 0}
    out = world.worker.call("join", "--node", WORKER)
    assert "already in the node table" in out
    assert world.frozen() == before


def test_join_reports_the_roles_in_open_jobs(world: World, job: int) -> None:
    out = world.worker.ok("join")
    assert f"#{job} Build fails — worker" in out
    assert data_of(world.controller.call("join", "--json"))["jobs"] == 1


def test_a_push_rejected_in_a_race_is_rebased_and_retried(blank: World, tmp_path: Path) -> None:
    c, w = blank.controller, blank.worker
    c.call("init", "--yes", "--node", CONTROLLER, "--repo", blank.repo, "--api", blank.hub.url)
    other = blank.clone("other", keep_credentials=True)  # its push runs in a hook
    (other / "NOTES.md").write_text("pushed while win-desktop was joining\n")
    git("add", "NOTES.md", cwd=other)
    git("commit", "-q", "-m", "a racing commit", cwd=other)
    marker = tmp_path / "raced"
    # Between the joiner's commit and its push, another machine pushes first.
    hook_script(
        w.clone / ".git" / "hooks" / "post-commit",
        f'[ -e "{marker}" ] && exit 0\ntouch "{marker}"\n'
        "unset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE\n"
        f'git -C "{other}" push -q origin HEAD:main\n',
    )
    out = w.ok("join", "--node", WORKER, "--scheduler", "none")
    assert marker.exists() and "registered win-desktop" in out
    assert WORKER in blank.remote_file("docs/loop/LOOP.md")
    assert "pushed while" in blank.remote_file("NOTES.md")
    log = git("log", "--format=%s", "main", cwd=blank.bare).splitlines()
    assert log[1].startswith(f"relay: {WORKER} joins") and log[2] == "a racing commit", log


def test_a_push_the_remote_refuses_fails_cleanly_and_join_recovers(blank: World) -> None:
    c, w = blank.controller, blank.worker
    c.call("init", "--yes", "--node", CONTROLLER, "--repo", blank.repo, "--api", blank.hub.url)
    refuse = blank.bare / "hooks" / "pre-receive"
    hook_script(refuse, "echo 'pushes are frozen' >&2\nexit 1\n")
    before = blank.frozen()
    line = one_line_error(w.run("join", "--node", WORKER, "--scheduler", "none"))
    assert "push" in line
    assert blank.frozen() == before
    assert git("rev-parse", "HEAD", cwd=w.clone) == git("rev-parse", "main", cwd=blank.bare)
    assert git("status", "--porcelain", cwd=w.clone) == ""
    refuse.unlink()
    w.call("join", "--node", WORKER, "--scheduler", "none")
    assert WORKER in blank.remote_file("docs/loop/LOOP.md")


def test_the_instruction_account_is_the_authenticated_one_by_id(world: World) -> None:
    me = world.api("/collaborators/" + OWNER + "/permission")["user"]
    loop = world.remote_file("docs/loop/LOOP.md")
    assert OWNER in loop and str(me["id"]) in loop


def test_init_with_a_refused_push_leaves_the_clone_clean_and_can_be_rerun(blank: World) -> None:
    c = blank.controller
    refuse = blank.bare / "hooks" / "pre-receive"
    hook_script(refuse, "echo 'pushes are frozen' >&2\nexit 1\n")
    before = blank.frozen()
    line = one_line_error(c.run(*init_args(blank), "--yes", "--node", CONTROLLER))
    assert "push" in line
    assert blank.frozen() == before
    assert git("status", "--porcelain", cwd=c.clone) == ""
    assert git("rev-parse", "HEAD", cwd=c.clone) == git("rev-parse", "main", cwd=blank.bare)
    refuse.unlink()
    c.call(*init_args(blank), "--yes", "--node", CONTROLLER)
    assert "## Relay" in blank.remote_file("docs/loop/LOOP.md")


def test_join_refuses_what_it_could_not_finish_before_pushing_anything(blank: World) -> None:
    """A bad --webhook URL or an unusable keyring is found before the node row goes out."""
    c, w = blank.controller, blank.worker
    c.call("init", "--yes", "--node", CONTROLLER, "--repo", blank.repo, "--api", blank.hub.url)
    before = blank.remote_head()
    for extra in (("--webhook", "not a url"), ("--save-token", "keyring")):
        done = w.run("join", "--node", WORKER, "--scheduler", "none", *extra)
        line = one_line_error(done)
        assert ("--webhook" in line) or ("keyring" in line), line
        assert blank.remote_head() == before
        assert not (w.clone / ".git/relay/config.json").exists()
