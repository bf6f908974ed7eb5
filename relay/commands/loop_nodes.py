"""A maker on another node: the roster's ``- maker: node NAME``.

The controller pushes the candidate's base commit to a branch of its own, opens a relay
job for the node and posts a TASK whose step is ``relay loop make-here GOAL`` on that
branch, with the diff and the maker's account as the TASK's artifacts; the node's
watcher runs it in its own clone (its configured maker: ``RELAY_LOOP_MAKER``), and its
signed RESULT lists each artifact's sha256 while the redacted files are committed to the
data branch. The controller takes the diff only when the committed file is exactly the
one the signed RESULT names (a tampered, redacted or missing diff is refused), and the
main line judges it with its own gates like any candidate.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from relay.commands.output import Output
from relay.edges.ownpath import program
from relay.errors import ConfigError, LocalUsageError, RelayError
from relay.loop.goals import BoardRow, Goal, GoalState
from relay.ratchet.engine import Ratchet
from relay.ratchet.parallel import Candidate

MAKER_ENV = "RELAY_LOOP_MAKER"  # the node's own maker: a command or an agent adapter
INTERRUPTED = "interrupted: a person stopped the maker (relay loop interrupt)"
WAIT_SPELL = 5.0  # seconds of each wait for the RESULT, between looks for an interrupt
_BLOB = re.compile(r"/blob/([0-9a-f]{7,40})/")
# One git network call at a time in the controller's clone: node makers run in threads,
# and two fetches at once race for the same remote-tracking refs' locks (one then fails,
# and a diff that did come back would read as missing).
_CLONE_GIT = threading.Lock()


def diff_name(goal: str) -> str:
    return f"relay-loop-{goal}.diff"


def account_name(goal: str) -> str:
    return f"relay-loop-{goal}.md"


def taken_artifact(record: dict[str, Any], data: bytes | None) -> str | None:
    """Why an artifact that came back cannot be taken (None: it can): it was withheld or
    not committed, or the committed file is not the one the signed RESULT hashed (changed
    after the worker found it, by redaction or by anyone)."""
    if data is None:
        note = str(record.get("note") or "it was not committed")
        return f"{record.get('path')} did not come back ({note})"
    if hashlib.sha256(data).hexdigest() != record.get("sha256"):
        return (
            f"{record.get('path')} is not the file the signed RESULT names (its sha256"
            " differs: changed after the worker found it); refused"
        )
    return None


class NodeMaker:
    """``Fanout``'s maker for a goal whose maker is a node."""

    def __init__(self, root: Path, main: Ratchet, node: str, *, wait: float) -> None:
        from relay.commands.loop_unattended import RelayJobs

        self.root = root
        self.main = main
        self.node = node
        self.wait = wait
        self.jobs = RelayJobs(root, wait=wait)
        self.opened: dict[str, int] = {}  # goal -> the job it was sent as, until made
        self.answered: dict[int, str] = {}  # job -> the status its RESULT gave
        self.sent: set[int] = set()  # every job this node was sent

    def turns_spent(self, goal: Goal) -> str | None:
        """Why the node maker has no turn left on ``goal`` (None: it has): each time a goal
        is sent to a node is one of the maker's turns, kept on its thread here."""
        from relay.loop.roster import LOOP_NAME, MAKER, parse_roster, turns_spent
        from relay.ratchet.threads import ThreadStore

        thread = ThreadStore.of(self.root).read(MAKER, goal.id)
        asked = sum(1 for e in thread.entries if e.kind == "asked")
        roster = parse_roster(self.main.spine.read(LOOP_NAME))
        return turns_spent(roster, {MAKER: asked}, goal=goal.id, running=[MAKER])

    def __call__(self, goal: Goal, base: str) -> Candidate:
        spent = self.turns_spent(goal)
        if spent is not None:
            self.main.say(f"{goal.id}: {spent}")
            row = BoardRow(
                goal.id, goal.title, state=GoalState.BLOCKED, verdict="turns", notes=spent
            )
            return Candidate(goal.id, base, row, "", "", spent)
        try:
            patch, account = self._make(goal, base)
        except RelayError as err:
            why = f"the maker on {self.node}: {err.message}"
            return self._failed(goal, base, why, job=self.opened.pop(goal.id, 0))
        if patch is None and account == INTERRUPTED:
            self.main.say(f"{goal.id}: the maker on {self.node} was stopped by a person")
            row = BoardRow(goal.id, goal.title, state=GoalState.OPEN, verdict="interrupted")
            return Candidate(goal.id, base, row, "", "", INTERRUPTED)
        job = self.opened.pop(goal.id, 0)
        if patch is None:
            return self._failed(goal, base, account, job=job)
        row = BoardRow(goal.id, goal.title, state=GoalState.DONE, verdict="made")
        return Candidate(goal.id, base, row, patch, account, "", job=job)

    def _failed(self, goal: Goal, base: str, why: str, *, job: int = 0) -> Candidate:
        self.main.say(f"{goal.id}: {why}")
        row = BoardRow(goal.id, goal.title, state=GoalState.OPEN, verdict="node maker", notes=why)
        return Candidate(goal.id, base, row, "", "", why, job=job)

    def settle(self, candidate: Candidate, verdict: str) -> None:
        """End the node's job once relay has judged what it brought back (kept or not),
        the way every finished job ends: resolved, labelled and closed, so the node's
        watcher goes when no other job needs it. Its TASK is the job's verification TASK:
        a ``done`` RESULT lets it resolve; any other answer is resolved with the reason."""
        job = candidate.job
        summary = f"{candidate.goal}: made on {self.node}; {verdict}"
        force = () if self.answered.get(job) == "done" else ("--force", summary)
        try:
            self.jobs._verb("resolve", str(job), "--summary", summary, *force)
        except RelayError as err:
            self.main.say(f"{candidate.goal}: job #{job} stays open ({err.message})")
        else:
            self.main.say(f"{candidate.goal}: job #{job} on {self.node} resolved ({verdict})")

    def _make(self, goal: Goal, base: str) -> tuple[str | None, str]:
        from relay.loop.roster import MAKER
        from relay.node.context import open_node
        from relay.ratchet.threads import ThreadStore

        store = ThreadStore.of(self.root)
        branch = f"relay-loop/make-{goal.id.lower()}"
        ctx = open_node(repo_dir=self.root, node=None, api=None, need_node=False)
        with _CLONE_GIT:
            ctx.clone._network("push", "--force", "origin", f"{base}:refs/heads/{branch}")
        opened = self.jobs._verb(
            "job", "open", "--worker", self.node,
            "--title", f"relay loop {goal.id} maker: {goal.title}",
            "--objective", f"Make {goal.id} ({goal.title}) on {self.node} from {base[:10]}:"
            f" run its maker on {branch} and return the diff.",
            "--kind", "verification",
        )  # fmt: skip
        job = int(opened["issue"])
        self.opened[goal.id] = job
        self.sent.add(job)
        store.append(MAKER, goal.id, "asked", f"sent to {self.node} as job #{job} from {base[:10]}")
        self.main.say(f"{goal.id}: sent to {self.node} as job #{job} (from {base[:10]})")
        self.jobs._verb(
            "task", str(job),
            "--step", f"relay loop make-here {goal.id}",
            "--checkout", branch,
            "--commit", base,  # signed with the TASK: a branch pushed over runs nothing
            "--scope", "test",
            "--artifact", diff_name(goal.id),
            "--artifact", account_name(goal.id),
            "--verification",  # the job's stopping condition: its RESULT lets resolve close it
            "--objective", f"Run this node's maker on {goal.id} at {base[:10]} and bring back"
            " its diff.",
        )  # fmt: skip
        data = self._wait(goal, job)
        if data is None:
            self.opened.pop(goal.id, None)  # closed by _close_later once its node answers
            self._close_later(goal, job)
            return None, INTERRUPTED
        result = data.get("result") or {}
        status = str(result.get("status", "half-done"))
        summary = str(result.get("summary", result.get("known", "")))
        self.answered[job] = status
        if status != "done":
            return None, f"the maker on {self.node} answered {status} (job #{job}): {summary}"
        ran = str(result.get("commit") or "")
        if ran != base:  # a diff made on another commit is no diff of this base
            at = f"at {ran[:12]}" if ran else "at no commit it names"
            return None, (
                f"the maker on {self.node} answered done {at}, not at {base[:12]} (job #{job});"
                " refused"
            )
        records = {str(a.get("path")): a for a in result.get("artifacts") or []}
        got: dict[str, bytes | None] = {}
        for name in (diff_name(goal.id), account_name(goal.id)):
            record = records.get(name)
            if record is None:
                return None, f"the RESULT of job #{job} lists no {name}"
            got[name] = self._committed(record)
            why = taken_artifact(record, got[name])
            if why is not None:
                return None, why
        patch = (got[diff_name(goal.id)] or b"").decode("utf-8")
        account = (got[account_name(goal.id)] or b"").decode("utf-8")
        if not patch.strip():
            return None, f"the maker on {self.node} changed nothing (job #{job})"
        return patch, account

    def _wait(self, goal: Goal, job: int) -> dict[str, Any] | None:
        """The job's RESULT, waited for in short spells so that a person's `relay loop
        interrupt maker --goal G` (which closes the job) ends the wait: None then."""
        import time

        from relay.loop.threads import ThreadState
        from relay.ratchet.threads import ThreadStore

        store = ThreadStore.of(self.root)
        store.set("maker", goal.id, ThreadState.RUNNING, job=str(job))
        deadline = time.monotonic() + self.wait
        try:
            while True:
                if store.interrupted("maker", goal.id):
                    return None
                spell = max(1.0, min(WAIT_SPELL, deadline - time.monotonic()))
                try:
                    data: dict[str, Any] = self.jobs._verb(
                        "result", str(job), "--wait", "--timeout", f"{spell:.0f}", "--poll", "1",
                        timeout=spell + 120,
                    )  # fmt: skip
                except RelayError as err:
                    if "no result" not in err.message or time.monotonic() >= deadline:
                        raise
                    continue
                if store.interrupted("maker", goal.id):
                    return None
                return data
        finally:
            store.set("maker", goal.id, ThreadState.IDLE)

    def _close_later(self, goal: Goal, job: int) -> None:
        """Close a job a person stopped once its node answers (the controller cannot take a
        claimed step back from its worker); nothing of the answer is taken. The thread is
        not a daemon: the run's process ends only after the job is closed or the wait ends."""

        def close() -> None:
            why = f"{goal.id}: the maker on {self.node} was stopped by a person"
            try:
                self.jobs._verb(
                    "result", str(job), "--wait", "--timeout", str(self.wait), "--poll", "2",
                    timeout=self.wait + 120,
                )  # fmt: skip
                self.jobs._verb(
                    "resolve", str(job), "--summary", f"{why}; its answer was not taken",
                    "--force", f"{why} (relay loop interrupt)",
                )  # fmt: skip
            except RelayError as err:
                self.main.say(f"{goal.id}: job #{job} stays open ({err.message})")

        threading.Thread(target=close, name=f"close-{job}", daemon=False).start()

    def _committed(self, record: dict[str, Any]) -> bytes | None:
        """The artifact as committed on the data branch, read at the commit its URL names."""
        url = str(record.get("url") or "")
        found = _BLOB.search(url)
        if found is None:
            return None
        sha, path = found.group(1), url[found.end() :]
        from relay.node.context import open_node

        ctx = open_node(repo_dir=self.root, node=None, api=None, need_node=False)
        if not self._fetched(ctx.clone):
            return None
        shown = subprocess.run(
            [program("git"), "show", f"{sha}:{path}"],
            cwd=self.root,
            capture_output=True,
            check=False,
        )
        return shown.stdout if shown.returncode == 0 else None

    @staticmethod
    def _fetched(clone: Any) -> bool:
        """Fetch origin, one fetch at a time, again after a short wait when it fails (a
        verb's own git call in this clone may hold a ref's lock for a moment)."""
        import time

        for attempt in range(3):
            with _CLONE_GIT:
                try:
                    clone._network("fetch", "-q", "origin")
                except RelayError:
                    pass
                else:
                    return True
            time.sleep(0.5 * (attempt + 1))
        return False


def node_maker(root: Path, main: Ratchet, node: str, *, wait: float) -> NodeMaker:
    return NodeMaker(root, main, node, wait=wait)


class NodePool:
    """``Fanout``'s maker when the maker is several nodes (``node a, node b``): each goal
    goes to one free node (:func:`relay.loop.parallel.assign_nodes`); a goal with none free
    waits for one."""

    def __init__(self, root: Path, main: Ratchet, nodes: tuple[str, ...], *, wait: float):

        self.nodes = nodes
        self.makers = {n: NodeMaker(root, main, n, wait=wait) for n in nodes}
        self.busy: dict[str, str] = {}  # node -> goal
        self.free = threading.Condition()
        self.log: list[tuple[str, str]] = []  # (goal, node), in the order sent

    def __call__(self, goal: Goal, base: str) -> Candidate:
        from relay.loop.parallel import assign_nodes

        with self.free:
            while not (chosen := assign_nodes([goal.id], self.nodes, self.busy)):
                self.free.wait()
            node = chosen[goal.id]
            self.busy[node] = goal.id
            self.log.append((goal.id, node))
        try:
            return self.makers[node](goal, base)
        finally:
            with self.free:
                del self.busy[node]
                self.free.notify_all()

    def settle(self, candidate: Candidate, verdict: str) -> None:
        """End the job of the node that made ``candidate`` (:meth:`NodeMaker.settle`)."""
        for maker in self.makers.values():
            if candidate.job in maker.sent:
                maker.settle(candidate, verdict)


def node_makers(
    root: Path, main: Ratchet, nodes: tuple[str, ...], *, wait: float
) -> NodeMaker | NodePool:
    """One node's maker, or a pool of them."""
    if len(nodes) == 1:
        return NodeMaker(root, main, nodes[0], wait=wait)
    return NodePool(root, main, nodes, wait=wait)


# --- the node's side ---


def run_make_here(args: argparse.Namespace) -> Output:
    """On the node, as a TASK's step in its clone: run this node's maker on the goal and
    leave its diff and its account as the TASK's artifacts."""
    from relay.edges.worktree import WorkTree
    from relay.loop.agents import Signal
    from relay.ratchet.files import Spine
    from relay.ratchet.measure import BRIEF_ENV
    from relay.ratchet.roles import run_role
    from relay.ratchet.sandbox import (
        clone_secrets,
        hidden_for,
        read_private,
        standalone,
    )

    root = (args.repo_dir or Path.cwd()).resolve()
    maker = os.environ.get(MAKER_ENV, "").strip()
    if not maker:
        raise ConfigError(
            f"this node has no maker: set {MAKER_ENV} to its command (or claude, codex, ...)",
            hint=f"set {MAKER_ENV} in the environment the node's watcher runs in",
        )
    goal = Spine(root).goals().get(args.goal)
    if goal is None:
        raise LocalUsageError(f"there is no goal {args.goal} in GOALS.md at this commit")
    from relay.loop.guard import env_only_refusal
    from relay.ratchet.sandbox import ENV_ONLY, level

    contract = Spine(root).contract()
    refused = env_only_refusal(
        level() == ENV_ONLY,
        allowed=False,
        authorised=contract.authorised if contract is not None else (),
        unattended=True,  # a TASK's step: nobody is there to say --allow-env-only
    )
    if refused is not None:
        raise ConfigError(refused)
    work = Path(tempfile.mkdtemp(prefix="relay-node-maker-"))
    try:  # the maker's transcripts go with the step: nothing piles up in /tmp
        tree = WorkTree.open(root)
        head = subprocess.run(
            [program("git"), "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        # the maker works as it does at home: in a clone of its own, behind the same boundary
        # (this clone, its git directory, relay's token and the credentials of HOME hidden)
        with standalone(root, head, f"relay-node-maker/{goal.id}", hidden=hidden_for(root)) as box:
            box.brief.write_text(
                f"# {goal.id}: {goal.title}\n\nAcceptance command: `{goal.accept}`\n\n"
                "Edit the work tree so that the acceptance command passes and every test still"
                " does; do not commit. Write what you changed and why to the file"
                " RELAY_LOOP_EXPLAIN names.\n",
                encoding="utf-8",
            )
            ran = run_role(
                maker, box.brief, maker=True, env_name=BRIEF_ENV, cwd=box.tree,
                timeout=float(args.timeout), work=work, label=f"{goal.id}-node-maker",
                explain=box.explain, sandbox=box, thread=("maker", goal.id), threads_root=root,
            )  # fmt: skip
            if ran.reading.signal is not Signal.DONE:
                said = "\n".join(ran.done.output.strip().splitlines()[-15:])
                raise ConfigError(f"the maker did not finish: {ran.reading.what}\n{said}")
            broken = box.intact()
            if broken is not None:  # read nothing through a link the maker put in its box
                raise ConfigError(
                    f"the maker's box is not as relay made it: {broken}; nothing was taken"
                )
            account = read_private(box.explain, clone_secrets(tree.common_dir()))
            # the maker's files, hashed with this clone's git directory: nothing the maker
            # configured in its own (a hook, an fsmonitor, a filter) runs here; commits folded
            taken = tree.take(box.tree, head, skip=box.private)
            if taken.refused is not None:
                raise ConfigError(
                    f"relay cannot take the maker's tree: {taken.refused}; nothing was taken"
                )
            made = tree.commit_tree(taken.tree, head, f"{goal.id}: node maker")
            diff = tree.git("diff", "--binary", "--no-color", "--no-ext-diff", head, made)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    outputs = (diff_name(goal.id), account_name(goal.id))
    for name in outputs:
        (root / name).unlink(missing_ok=True)
    (root / outputs[0]).write_text(diff, encoding="utf-8")
    (root / outputs[1]).write_text(account or f"{goal.id}: {goal.title}\n", encoding="utf-8")
    files = len(re.findall(r"^diff --git ", diff, flags=re.MULTILINE))
    return Output(
        lines=(f"{goal.id}: the maker changed {files} file(s); the diff is {outputs[0]}",),
        data={"goal": goal.id, "files": files, "diff": outputs[0]},
    )
