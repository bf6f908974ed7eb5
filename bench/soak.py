"""``make soak`` / ``python -m bench.soak``: relay left alone with a bad network and killers.

A real `relay hub` injects faults into a share of the API requests (5xx, 429, the secondary
limit's 403, connections dropped before and after the write, latency); one controller and
several workers, each worker with two watchers on its clone, work through jobs of several
TASKs while worker passes are SIGKILLed at random, inside steps too. Every step leaves a
side effect (a mark in a file outside the clones), so a step that ran twice is counted.

At the end it checks what must hold: every TASK has exactly one answer (a RESULT, or a
half-done report for a run that was interrupted), none is stalled, no step ran twice, no
job ever showed anything but one baton, every log a RESULT links to is in the hub's git on
main, and no comment was posted twice. It prints those figures with the faults by kind,
the retries, the kills and the time the jobs took to settle after the last fault.

The tests run it small (tests/relay/test_relay_soak.py); ``make soak`` runs it at full
size: 20 jobs of 5 TASKs, 3 workers with 2 watchers each, 20% faults.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relay.commands.demo import (
    NO_CONTENT_LIMIT,
    OWNER,
    Hub,
    Node,
    api,
    clone_as,
    git,
    git_auth,
    git_url,
    make_remote,
    running_hub,
)

REPO = "soak"
PY = Path(sys.executable).as_posix()
FAULT_MIX = {  # shares of the fault budget, by kind
    "500": 0.15,
    "502": 0.1,
    "503": 0.1,
    "429": 0.1,
    "secondary": 0.1,
    "drop": 0.15,
    "drop_after": 0.15,
    "502_after": 0.1,
    "slow": 0.05,
}


@dataclass
class Size:
    """How big a soak is."""

    jobs: int = 20
    tasks: int = 5  # per job
    workers: int = 3
    watchers: int = 2  # per worker, on the same clone
    faults: float = 0.2  # share of API requests faulted
    kill_chance: float = 0.15  # of a worker pass being SIGKILLed at a random moment
    seed: int = 7
    timeout: float = 1800.0


@dataclass
class Report:
    """What a soak saw; ``problems`` must be empty."""

    tasks: int = 0
    answered: int = 0
    results: int = 0
    half_done: int = 0
    stalled: int = 0
    ran_twice: int = 0
    baton_violations: int = 0
    observations: int = 0
    lost_commits: int = 0
    duplicate_comments: int = 0
    takeovers: int = 0
    kills: int = 0
    kills_in_steps: int = 0
    orphans_killed: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    lost_answers_found: int = 0
    settle_seconds: float = 0.0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The figures, one a line."""
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "none"
        return [
            f"tasks: {self.tasks} (answered {self.answered}: {self.results} RESULT,"
            f" {self.half_done} half-done; stalled {self.stalled})",
            f"faults injected: {sum(self.faults.values())} ({faults})",
            f"retries by relay's clients: {self.retries}; lost answers found, not re-sent:"
            f" {self.lost_answers_found}",
            f"duplicate comments: {self.duplicate_comments} (goal 0)",
            f"steps run twice: {self.ran_twice}; commits lost: {self.lost_commits}",
            f"baton observations: {self.observations}, not exactly one baton:"
            f" {self.baton_violations}",
            f"claims taken over: {self.takeovers}",
            f"kills: {self.kills} ({self.kills_in_steps} inside a step); orphans killed:"
            f" {self.orphans_killed}",
            f"settled {self.settle_seconds:.1f}s after the last fault (goal: within 120 s);"
            f" whole soak {self.seconds:.0f}s",
            "problems: " + ("; ".join(self.problems) if self.problems else "none"),
        ]


def fault_spec(size: Size) -> str:
    """The hub's --faults for a soak: ``size.faults`` of requests, in FAULT_MIX's shares."""
    parts = [f"{kind}={size.faults * share:.4f}" for kind, share in FAULT_MIX.items()]
    return ",".join([*parts, "latency=0.2", "retry_after=1", f"seed={size.seed}"])


def patient(hub: Hub, token: str, method: str, path: str, body: Any = None) -> Any:
    """An observer's call: the hub faults it like any other, so try until it answers."""
    for _ in range(60):
        try:
            return hub.api(method, path, token, body)
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"the hub never answered {method} {path}")


def relay(node: Node, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A relay command of ``node`` as a process (it may fail under faults: callers retry)."""
    argv = [sys.executable, "-m", "relay.cli", *args, "--repo-dir", str(node.clone)]
    return subprocess.run(argv, env=node.env(), capture_output=True, text=True, timeout=timeout)


@dataclass
class World:
    """The hub, the nodes and the jobs of one soak."""

    hub: Hub
    root: Path
    controller: Node
    workers: list[Node]
    token: str
    jobs: dict[int, str] = field(default_factory=dict)  # issue -> worker
    effects: Path = Path()

    def issue(self, number: int) -> dict[str, Any]:
        found: dict[str, Any] = patient(
            self.hub, self.token, "GET", f"/repos/{OWNER}/{REPO}/issues/{number}"
        )
        return found

    def comments(self, number: int) -> list[dict[str, Any]]:
        path = f"/repos/{OWNER}/{REPO}/issues/{number}/comments?per_page=100"
        found: list[dict[str, Any]] = patient(self.hub, self.token, "GET", path)
        return found


def set_up(root: Path, hub: Hub, size: Size) -> World:
    """A repository on the hub, `relay init`, a controller and ``size.workers`` workers."""
    token = hub.token(OWNER)
    hub.api("POST", "/user/repos", token, {"name": REPO, "private": True})
    url = git_url(hub.url, f"{OWNER}/{REPO}")
    make_remote(root, url, token)
    controller = Node("soak-controller", clone_as(url, root, "soak-controller", token), token)
    workers = [
        Node(f"soak-worker-{i}", clone_as(url, root, f"soak-worker-{i}", token), token)
        for i in range(1, size.workers + 1)
    ]
    init = ["init", "--yes", "--node", controller.name, "--repo", f"{OWNER}/{REPO}"]
    controller.relay(*init, "--api", hub.url)
    for node in [*workers, controller]:
        node.relay("join", "--node", node.name, "--scheduler", "none")
    for node in workers:  # the roster's admin admits each worker
        key = node.relay("nodes", "key", "--node", node.name).strip()
        controller.relay("nodes", "approve", node.name, "--node", controller.name,
                         "--fingerprint", key)  # fmt: skip
    for other in [controller, *workers]:  # everyone sees every node's key
        git("pull", "-q", "--rebase", cwd=other.clone, auth=git_auth(url, token))
    effects = root / "effects"
    effects.mkdir()
    return World(hub, root, controller, workers, token, effects=effects)


def step_for(world: World, issue: int, task: int, rng: random.Random) -> str:
    """A step whose every run leaves one mark in its own file, then takes a while."""
    mark = (world.effects / f"{issue}-{task}").as_posix()
    pause = round(rng.uniform(0.2, 1.2), 2)
    code = f"import time; open({mark!r}, 'a').write('x'); time.sleep({pause})"
    return f'"{PY}" -c "{code}"'


@dataclass
class Watcher:
    """One watcher of a worker: `relay watch --once` again and again on the node's clone,
    some passes SIGKILLed at a random moment (an OS killing it, a reboot)."""

    node: Node
    rng: random.Random
    size: Size
    stop: threading.Event
    kills: int = 0
    kills_in_steps: int = 0
    lines: list[str] = field(default_factory=list)

    def run(self) -> None:
        argv = [sys.executable, "-m", "relay.cli", "watch", "--once", "--verbose"]
        argv += ["--repo-dir", str(self.node.clone)]
        env = {**self.node.env(), "RELAY_HEARTBEAT_SECONDS": "2"}
        while not self.stop.is_set():
            proc = subprocess.Popen(
                argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            kill_at = None
            if self.rng.random() < self.size.kill_chance:
                kill_at = time.monotonic() + self.rng.uniform(0.3, 3.0)
            while proc.poll() is None:
                if kill_at is not None and time.monotonic() >= kill_at:
                    in_step = _running_step(proc.pid)
                    proc.send_signal(signal.SIGKILL)
                    self.kills += 1
                    self.kills_in_steps += int(in_step)
                    kill_at = None
                time.sleep(0.05)
            out = proc.stdout.read() if proc.stdout else ""
            if proc.stdout:
                proc.stdout.close()
            self.lines += out.splitlines()
            time.sleep(self.rng.uniform(0.1, 0.6))


def _running_step(pid: int) -> bool:
    """Whether the pass ``pid`` has a step of ours running under it (Linux /proc)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == pid and b"time.sleep" in cmdline:
            return True
        if b"open(" in cmdline and b"effects" in cmdline:
            session = int(fields[3])
            if session and _ancestor(int(fields[1]), pid):
                return True
    return False


def _ancestor(child: int, pid: int) -> bool:
    for _ in range(10):
        if child == pid:
            return True
        try:
            child = int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


HEAD = re.compile(r"^### (TASK|RESULT|Claim|Half-done) · TASK (\d+)|^### (TASK|RESULT) (\d+)")


def answers(comments: list[dict[str, Any]]) -> Counter[tuple[str, int]]:
    """(kind, task) -> how many comments of that kind name that task."""
    seen: Counter[tuple[str, int]] = Counter()
    for c in comments:
        first = str(c["body"]).split("\n", 1)[0]
        found = HEAD.match(first)
        if found:
            kind = found.group(1) or found.group(3)
            number = found.group(2) or found.group(4)
            seen[(kind, int(number))] += 1
    return seen


def baton_count(issue: dict[str, Any]) -> int:
    names = {label["name"] for label in issue["labels"]}
    return len(names & {"awaiting:worker", "working", "awaiting:controller"})


def soak(root: Path, size: Size) -> Report:
    """Run one soak under ``root``; the report says what held and what did not."""
    started = time.monotonic()
    report = Report(tasks=size.jobs * size.tasks)
    rng = random.Random(size.seed)
    data = root / "hub"
    options = [*NO_CONTENT_LIMIT, "--rate-limit", "1000000", "--faults", fault_spec(size)]
    with running_hub(data, *options) as hub:
        # set up without faults, then inject them for the run
        admin = _admin_token(hub)
        _faults(hub, admin, "")
        world = set_up(root, hub, size)
        for i in range(size.jobs):
            worker = world.workers[i % len(world.workers)]
            args = ["job", "open", "--worker", worker.name, "--json", "--title", f"soak {i}"]
            out = world.controller.relay(*args, "--objective", f"Soak job {i}.")
            world.jobs[int(json.loads(out)["data"]["issue"])] = worker.name
        _faults(hub, admin, fault_spec(size))
        stop = threading.Event()
        watchers = [
            Watcher(node, random.Random(rng.random()), size, stop)
            for node in world.workers
            for _ in range(size.watchers)
        ]
        threads = [threading.Thread(target=w.run, daemon=True) for w in watchers]
        for thread in threads:
            thread.start()
        last_fault = _drive(world, size, rng, report, started)
        report.faults = _fault_counts(hub, admin)
        _faults(hub, admin, "")
        settled = _settle(world, size, report, started)
        report.settle_seconds = max(settled - last_fault, 0.0)
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        _check(world, size, report, watchers)
    report.seconds = time.monotonic() - started
    return report


def _admin_token(hub: Hub) -> str:
    argv = [sys.executable, "-m", "relay.cli", "hub", "token", "soak-admin", "--admin"]
    out = subprocess.run(
        [*argv, "--data", str(hub.data)], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def _faults(hub: Hub, admin: str, spec: str) -> None:
    if spec:
        api(f"{hub.url}/_hub/faults", admin, "POST", {"spec": spec})
    else:
        api(f"{hub.url}/_hub/faults", admin, "DELETE")


def _fault_counts(hub: Hub, admin: str) -> dict[str, int]:
    found = api(f"{hub.url}/_hub/faults", admin)
    counts = found.get("injected_by_kind", {}) if isinstance(found, dict) else {}
    return {str(k): int(v) for k, v in counts.items()}


def _drive(world: World, size: Size, rng: random.Random, report: Report, started: float) -> float:
    """The controller's side: watch, and post the next TASK of each job whose baton came
    back, until every TASK is posted; watch the batons all along. Returns the time of the
    last fault (when the last TASK went out, faults stop)."""
    posted = dict.fromkeys(world.jobs, 0)
    while min(posted.values()) < size.tasks:
        if time.monotonic() - started > size.timeout:
            report.problems.append("timed out posting TASKs")
            break
        relay(world.controller, "watch", "--once")
        for number in world.jobs:
            issue = world.issue(number)
            report.observations += 1
            if issue["state"] == "open" and baton_count(issue) != 1:
                report.baton_violations += 1
            if posted[number] >= size.tasks:
                continue
            labels = {label["name"] for label in issue["labels"]}
            if "awaiting:controller" not in labels:
                continue
            seen = answers(world.comments(number))
            done = posted[number]
            if done and not (seen[("RESULT", done)] or seen[("Half-done", done)]):
                continue
            if seen[("TASK", done + 1)]:  # posted by a command that then failed
                posted[number] = done + 1
                continue
            step = step_for(world, number, done + 1, rng)
            made = relay(world.controller, "task", str(number), "--step", step)
            if made.returncode == 0:
                posted[number] = done + 1
    return time.monotonic()


def _settle(world: World, size: Size, report: Report, started: float) -> float:
    """Passes until every job's newest TASK is answered and its baton is home."""
    while time.monotonic() - started < size.timeout:
        relay(world.controller, "watch", "--once")
        pending = 0
        for number in world.jobs:
            issue = world.issue(number)
            report.observations += 1
            if baton_count(issue) != 1:
                report.baton_violations += 1
            seen = answers(world.comments(number))
            last = size.tasks
            home = any(label["name"] == "awaiting:controller" for label in issue["labels"])
            if not (seen[("RESULT", last)] or seen[("Half-done", last)]) or not home:
                pending += 1
        if pending == 0:
            return time.monotonic()
        time.sleep(0.5)
    report.problems.append("jobs did not settle before the timeout")
    return time.monotonic()


def _check(world: World, size: Size, report: Report, watchers: list[Watcher]) -> None:
    bare = world.hub.data / "git"
    for number in world.jobs:
        comments = world.comments(number)
        seen = answers(comments)
        bodies = Counter(str(c["body"]) for c in comments)
        report.duplicate_comments += sum(n - 1 for n in bodies.values() if n > 1)
        report.takeovers += sum("takes the task over" in b for b in bodies)
        report.orphans_killed += sum(
            "was still running" in b for b in bodies if b.startswith("### Half-done")
        )
        for task in range(1, size.tasks + 1):
            given = seen[("RESULT", task)] + seen[("Half-done", task)]
            report.results += seen[("RESULT", task)]
            report.half_done += seen[("Half-done", task)]
            if given >= 1:
                report.answered += 1
            else:
                report.stalled += 1
            if given > 1:
                report.problems.append(f"#{number} TASK {task} has {given} answers")
            mark = world.effects / f"{number}-{task}"
            runs = len(mark.read_text()) if mark.exists() else 0
            if runs > 1:
                report.ran_twice += 1
        for c in comments:
            for sha in re.findall(r"/blob/([0-9a-f]{40})/", str(c["body"])):
                if not _on_main(bare, sha):
                    report.lost_commits += 1
    for w in watchers:
        report.kills += w.kills
        report.kills_in_steps += w.kills_in_steps
        report.orphans_killed += sum(
            "was still running" in line for line in w.lines if "before TASK" in line
        )
    report.retries, report.lost_answers_found = _wire_counts(watchers)
    for name, value in (
        ("stalled tasks", report.stalled),
        ("steps run twice", report.ran_twice),
        ("baton observations not showing one baton", report.baton_violations),
        ("lost commits", report.lost_commits),
        ("duplicate comments", report.duplicate_comments),
    ):
        if value:
            report.problems.append(f"{name}: {value}")


def _wire_counts(watchers: list[Watcher]) -> tuple[int, int]:
    """Retries and lost answers found, as the passes reported them (--verbose)."""
    retries = found = 0
    for w in watchers:
        for line in w.lines:
            got = re.search(r"wire: (\d+) retries, (\d+) lost answers found", line)
            if got:
                retries += int(got.group(1))
                found += int(got.group(2))
    return retries, found


def _on_main(git_root: Path, sha: str) -> bool:
    """Whether ``sha`` is a commit on main of the hub's one repository."""
    for bare in git_root.glob("*.git"):
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", sha, "main"],
            cwd=bare,
            capture_output=True,
        )
        if done.returncode == 0:
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    """Run a soak; exit 1 when something that must hold did not."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__, allow_abbrev=False
    )
    defaults = Size()
    for name in ("jobs", "tasks", "workers", "watchers", "seed"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    parser.add_argument("--faults", type=float, default=defaults.faults)
    parser.add_argument("--kill-chance", type=float, default=defaults.kill_chance)
    parser.add_argument("--timeout", type=float, default=defaults.timeout)
    args = parser.parse_args(argv)
    size = Size(
        jobs=args.jobs,
        tasks=args.tasks,
        workers=args.workers,
        watchers=args.watchers,
        faults=args.faults,
        kill_chance=args.kill_chance,
        seed=args.seed,
        timeout=args.timeout,
    )
    with tempfile.TemporaryDirectory(prefix="relay-soak-") as tmp:
        report = soak(Path(tmp), size)
    for line in report.lines():
        print(line, flush=True)
    return 1 if report.problems else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
