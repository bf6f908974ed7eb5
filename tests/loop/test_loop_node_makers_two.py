"""Several nodes make at once, through a real `relay hub`: two worker clones joined with
keys of their own, each running real watcher passes with its own maker, and LOOP.md's
roster saying `- maker: node win-desktop, node linux-box`. `relay loop run --parallel 2`
sends one goal to each node as a signed TASK on a job of its own, the two makers work at
the same time, each diff comes back as a redacted artifact and is judged here by relay's
own gates; nothing runs twice, an unsigned RESULT posted on a job meanwhile is never
taken, and each job ends resolved once its diff is judged."""

from __future__ import annotations

import os
import shlex
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from loop_project import node_maker_project
from worlds import WORKER, HubLike, Node, Tokens, World, data_of, git, loop_world

PY = shlex.quote(sys.executable)
SECOND = "linux-box"
WRITES = {
    "G1": {
        "src/sq.py": "def sq(a):\n    return a * a\n",
        "tests/test_sq.py": "from sq import sq\n\n\ndef test_sq():\n    assert sq(3) == 9\n",
    },
    "G2": {
        "src/neg.py": "def neg(a):\n    return -a\n",
        "tests/test_neg.py": "from neg import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n",
    },
}
FORGED = "src/forged.py"


@pytest.fixture(scope="module")
def tokens(git_hub: HubLike) -> Tokens:
    return Tokens(git_hub)


@pytest.fixture
def world(
    tmp_path: Path, git_hub: HubLike, tokens: Tokens, unique: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    made = loop_world(
        tmp_path, git_hub, tokens, name=f"twomakers-{unique}", monkeypatch=monkeypatch
    )
    made.init()
    made.join_both()
    return made


def second_worker(world: World) -> Node:
    """Another clone, its own key made and admitted by the roster's admin, then joined."""
    node = Node(SECOND, world.clone(SECOND), world.worker.token, world.worker.monkeypatch)
    world.admit(node)
    node.call("join", "--node", SECOND, "--scheduler", "none")
    return node


def maker_script(tmp_path: Path) -> Path:
    """Each node's maker: it says which node made which goal (made.log), waits (up to a
    minute) until the other node's maker has started too, so that a pass means the two
    really made at once, and for G1 until the test has posted its forged RESULT."""
    script = tmp_path / "scripts" / "node-maker.py"  # shared with the boxes (conftest)
    script.parent.mkdir(exist_ok=True)
    script.write_text(
        "import os, pathlib, re, sys, time\n"
        "node, log = sys.argv[1], pathlib.Path(sys.argv[2])\n"
        "brief = pathlib.Path(sys.argv[-1]).read_text()\n"
        "goal = re.search(r'^# (G[0-9]+):', brief, re.M).group(1)\n"
        "(log.parent / f'started-{goal}').write_text(node)\n"
        "other = log.parent / ('started-G2' if goal == 'G1' else 'started-G1')\n"
        "forged = log.parent / 'forged'\n"
        "until = time.monotonic() + 60\n"
        "while time.monotonic() < until and not (\n"
        "    other.exists() and (goal != 'G1' or forged.exists())):\n"
        "    time.sleep(0.2)\n"
        "with log.open('a') as f:\n"
        '    f.write(f\'{node} {goal} {"together" if other.exists() else "alone"}\\n\')\n'
        f"for path, text in {WRITES!r}[goal].items():\n"
        "    p = pathlib.Path(path)\n"
        "    p.parent.mkdir(parents=True, exist_ok=True)\n"
        "    p.write_text(text)\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text(f'{goal}: made on {node}')\n"
    )
    return script


@pytest.fixture
def two_workers(
    world: World, tmp_path: Path
) -> Iterator[tuple[Node, Node, Path, Callable[[], None]]]:
    """Both workers' watchers, each a foreground `relay watch` passing every 2 s with its
    own maker."""
    second = second_worker(world)
    script, log = maker_script(tmp_path), tmp_path / "scripts" / "made.log"
    stop = threading.Event()
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

    def passes(node: Node) -> None:
        maker = f"{PY} {shlex.quote(str(script))} {node.name} {shlex.quote(str(log))}"
        node.watch_until(stop, node.env(RELAY_LOOP_MAKER=maker, PATH=path))

    threads = [
        threading.Thread(target=passes, args=(n,), daemon=True) for n in (world.worker, second)
    ]
    for thread in threads:
        thread.start()

    def halt() -> None:
        """Stop both watchers (a foreground watch holds its node's pass lock)."""
        stop.set()
        for thread in threads:
            thread.join(timeout=120)

    yield world.worker, second, log, halt
    halt()


def forge_result(world: World, stop: threading.Event, marker: Path) -> None:
    """As soon as G1's maker job has its TASK, post an unsigned RESULT on it (the trusted
    account's, in the RESULT's own form) whose diff adds FORGED; then let G1's maker end."""
    from relay.protocol.messages import Artifact, ResultMsg, Status, render_message

    job = 0
    while not stop.is_set():
        jobs = [i for i in world.api("/issues?state=all") if i["title"].startswith("relay loop G1")]
        if jobs and any(h.startswith("### TASK") for h in world.heads(jobs[0]["number"])):
            job = jobs[0]["number"]
            break
        time.sleep(0.3)
    if not job:
        return
    diff = f"diff --git a/{FORGED} b/{FORGED}\nnew file mode 100644\n"
    forged = ResultMsg(
        issue=job,
        node=WORKER,
        task=1,
        status=Status.DONE,
        summary="made (forged)",
        artifacts=(
            Artifact(path="relay-loop-G1.diff", size=len(diff), sha256="0" * 64, text=True),
            Artifact(path="relay-loop-G1.md", size=1, sha256="1" * 64, text=True),
        ),
    )
    world.api(f"/issues/{job}/comments", "POST", {"body": render_message(forged)})
    marker.write_text("")


def sent_jobs(world: World) -> list[tuple[int, str, list[str]]]:
    """Every job the run opened, with its comments' first lines (said when a goal was made
    more often than once: which job, and what its thread shows)."""
    jobs = world.api("/issues?state=all")
    return [(i["number"], i["title"], world.heads(i["number"])) for i in jobs]


def _handover(root: Path) -> str:
    path = root / "docs/loop/handover.md"
    return path.read_text() if path.exists() else ""


@pytest.mark.timeout(600)  # real passes of two workers, on a machine that may be busy
def test_two_nodes_make_at_once_each_diff_judged_here(
    world: World, two_workers: tuple[Node, Node, Path, Callable[[], None]], tmp_path: Path
) -> None:
    first, second, log, halt = two_workers
    c = world.controller
    root = c.clone
    git(
        "pull", "-q", "--rebase", "origin", "main", cwd=root, auth=world.git_auth()
    )  # the admission
    roster = f"- maker: node {first.name}, node {second.name}\n  - Limits: copies 2\n\n"
    node_maker_project(world, roster)
    for title, name in (("Square", "sq"), ("Negate", "neg")):
        accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_{name}.py"
        c.call("loop", "goal", "add", title, "--accept", accept)
    assert data_of(c.call("loop", "check", "--json"))["roles"] == ["maker"]

    stop = threading.Event()
    forger = threading.Thread(
        target=forge_result, args=(world, stop, tmp_path / "scripts" / "forged")
    )
    forger.start()
    c.timeout = 500
    try:
        done = c.run("loop", "run", "--parallel", "2", "--verify-wait", "240s", "--json")
    finally:
        stop.set()
        forger.join(timeout=30)
    assert done.returncode == 0, (done.stdout, done.stderr)
    report = data_of(done.stdout)
    assert sorted(k["goal"] for k in report["kept"]) == ["G1", "G2"], report
    # the two goals went to the two nodes, were made at once, and each exactly once
    made = sorted(log.read_text().splitlines())
    assert len(made) == 2, (made, report, sent_jobs(world), _handover(root)[-4000:])
    assert {line.split()[0] for line in made} == {first.name, second.name}, made
    assert all(line.endswith(" together") for line in made), made
    jobs = {i["title"]: i for i in world.api("/issues?state=all") if " maker: " in i["title"]}
    assert sorted(jobs) == ["relay loop G1 maker: Square", "relay loop G2 maker: Negate"]
    workers = set()
    for job in jobs.values():
        number = job["number"]
        heads = world.heads(number)
        # one TASK and one RESULT (and, on G1's, the forged one): nothing ran twice
        forged = 1 if job["title"].startswith("relay loop G1") else 0
        assert len([h for h in heads if h.startswith("### TASK")]) == 1, heads
        assert len([h for h in heads if h.startswith("### RESULT")]) == 1 + forged, heads
        workers.add(next(n for n in (first.name, second.name) if f"`{n}`" in job["body"]))
        [task] = [x["body"] for x in world.comments(number) if x["body"].startswith("### TASK")]
        assert "relay loop make-here" in task and "Verification:" in task, task
        # judged here and ended as finished jobs end: resolved and closed
        assert job["state"] == "closed" and "resolved" in world.labels(number), heads
        [closure] = [x["body"] for x in world.comments(number) if "### Resolved" in x["body"]]
        assert "judged by relay's gates and kept as" in closure, closure
    assert workers == {first.name, second.name}
    # no job binds either worker now: each one's next pass tears its watcher down
    halt()
    for node in (first, second):
        assert data_of(node.ok("watch", "--once", "--json"))["teardown"] is True, node.name
    # the forged RESULT was posted on G1's job and never taken
    g1 = jobs["relay loop G1 maker: Square"]["number"]
    assert any("made (forged)" in x["body"] for x in world.comments(g1))
    assert not (root / FORGED).exists() and FORGED not in git("log", "--stat", cwd=root)
    # one commit per kept goal, each goal's files as its node made them
    subjects = git("log", "--format=%s", cwd=root).splitlines()
    assert "G1: Square" in subjects and "G2: Negate" in subjects
    for files in WRITES.values():
        for path, text in files.items():
            assert (root / path).read_text() == text
    assert git("status", "--porcelain", "--untracked-files=no", cwd=root) == ""
