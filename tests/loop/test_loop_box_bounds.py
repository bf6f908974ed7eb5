"""A box's bounds, so that code run in it overnight cannot take the machine down: a root
relay's box has a bound on its processes (its user is its own, so the bound is that
box's alone) that a fork bomb hits, and every writable tmpfs a box gets (/dev/shm,
/var/tmp, the emptied real HOME) is bounded, so a write past it fails in the box with
ENOSPC instead of filling the machine's memory."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL, make_project
from root_boxes import box_in, needs_root_boxes, person_share, run, start

from relay.errors import LocalUsageError
from relay.ratchet import sandbox
from relay.ratchet.sandbox import BOX_PROCS, PROCS_ENV, TMPFS_ENV, TMPFS_INODES

LIMIT = "grep 'Max processes' /proc/self/limits"


def limit_of(said: str) -> tuple[str, str]:
    soft, hard = said.split("Max processes", 1)[1].split()[:2]
    return soft, hard


@needs_root_boxes
def test_a_root_box_has_a_process_bound_that_a_fork_bomb_hits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with box_in("relay-test-procs-") as box:
        done = run(box, LIMIT)
        assert done.returncode == 0, done.stderr
        assert limit_of(done.stdout) == (str(BOX_PROCS), str(BOX_PROCS))
        monkeypatch.setenv(PROCS_ENV, "64")
        bomb = "i=0; while [ $i -lt 200 ]; do sleep 5 & i=$((i+1)); done; echo NEVER"
        done = run(box, f"{LIMIT}; {bomb}")
    assert limit_of(done.stdout) == ("64", "64")
    assert done.returncode != 0 and "NEVER" not in done.stdout, done
    assert "fork" in done.stderr.lower(), done.stderr
    # nor can the box raise it (root of its own user namespace is no root of the machine)
    with box_in("relay-test-procs-") as box:
        raise_it = "import resource; resource.setrlimit(resource.RLIMIT_NPROC, (10**5, 10**5))"
        done = run(box, f"{sys.executable} -c '{raise_it}'")
    assert done.returncode != 0 and "not allowed to raise" in done.stderr, done
    # the host still forks
    assert subprocess.run(["true"], check=False).returncode == 0


@needs_root_boxes
def test_one_boxs_processes_leave_another_box_its_whole_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each box is a user of its own: a box holding most of its bound takes nothing of the
    next box's (one shared user would have the second fail to fork)."""
    monkeypatch.setenv(PROCS_ENV, "64")
    hold = "i=0; while [ $i -lt 50 ]; do sleep 60 & i=$((i+1)); done; touch ready"
    hold += "; while [ ! -e go ]; do sleep 0.1; done"
    with box_in("relay-test-procs-a-") as one, box_in("relay-test-procs-b-") as two:
        holding = start(one, hold)
        try:
            deadline = time.monotonic() + 60
            while not (one.tree / "ready").exists():
                assert holding.poll() is None, holding.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.05)
            many = "i=0; while [ $i -lt 50 ]; do sleep 1 & i=$((i+1)); done; wait; echo ALL"
            done = run(two, many)
            assert done.returncode == 0 and "ALL" in done.stdout, done
        finally:
            (one.tree / "go").touch()
            _, err = holding.communicate(timeout=60)
        assert holding.returncode == 0, err


def test_a_process_bound_that_is_not_a_count_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PROCS_ENV, "lots")
    with pytest.raises(LocalUsageError, match=f"^{PROCS_ENV}='lots' is not a count"):
        sandbox.box_procs()
    monkeypatch.setenv(TMPFS_ENV, "half")
    with pytest.raises(LocalUsageError, match=f"^{TMPFS_ENV}='half' is not a tmpfs size"):
        sandbox.box_tmpfs()


def scratch_places() -> list[str]:
    """The box's /dev/shm and /var/tmp, and the real HOME it sees emptied (the password
    database's: the tests' HOME lies in the temporary folder, the box's own there)."""
    homes = [h for h in sandbox.real_homes() if not h.is_relative_to("/tmp")]
    return ["/dev/shm", "/var/tmp", *map(str, homes[:1])]


def top_options(box: sandbox.Sandbox, place: str) -> set[str]:
    done = run(box, f"findmnt -no OPTIONS -T {place} | tail -1")
    assert done.returncode == 0, done.stderr
    return set(done.stdout.strip().split(","))


@needs_root_boxes
def test_each_writable_tmpfs_of_a_box_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    ram_k = next(
        int(row.split()[1])
        for row in Path("/proc/meminfo").read_text().splitlines()
        if row.startswith("MemTotal:")
    )
    with box_in("relay-test-tmpfs-") as box:
        assert len(scratch_places()) == 3
        for place in scratch_places():
            options = top_options(box, place)
            sizes = [int(o[5:-1]) for o in options if o.startswith("size=")]
            assert sizes and sizes[0] <= ram_k // 9, (place, options)  # 10% by default
            assert f"nr_inodes={TMPFS_INODES}" in options, (place, options)
        monkeypatch.setenv(TMPFS_ENV, "4m")
        for place in scratch_places():
            assert "size=4096k" in top_options(box, place), place
        # (the emptied HOME is root's here, which a root relay's box does not write)
        for place in scratch_places()[:2]:
            fill = f"dd if=/dev/zero of={place}/fill bs=1M count=8 2>&1; wc -c <{place}/fill"
            done = run(box, fill)
            assert "No space left on device" in done.stdout, (place, done)
            assert done.stdout.split()[-1] == str(4 * 1024 * 1024), (place, done)


# run in a user namespace of the test's own, as a relay not run as root runs (its boxes
# are the person's user, root of a user namespace): each scratch tmpfs is bounded there too
AS_A_PERSON = """
import subprocess, sys
from pathlib import Path
from relay.ratchet import sandbox
assert not sandbox._as_root()
root = Path(sys.argv[1])
box = sandbox.Sandbox(root, root / "tree", root / "home", (), sandbox.NAMESPACES)
fill = "; ".join(
    f"dd if=/dev/zero of={p}/fill bs=1M count=8 2>&1 | grep -c 'No space'; wc -c <{p}/fill"
    for p in sys.argv[2:]
)
grep = "grep 'Max processes' /proc/self/limits"
done = subprocess.run(box.wrap(f"{grep}; {fill}"), shell=True, capture_output=True, text=True,
                      cwd=root / "tree")
print(done.stdout, done.stderr, done.returncode)
"""


@pytest.mark.skipif(sandbox.level() != sandbox.NAMESPACES, reason="no user namespaces here")
def test_a_box_of_a_relay_not_run_as_root_has_bounded_scratch_and_no_process_bound(
    tmp_path: Path,
) -> None:
    """Its /dev/shm, /var/tmp and emptied real HOME (the person's to write there) are
    bounded; no process bound is set (the limit would count every process of the
    person's)."""
    root = tmp_path / "box"
    (root / "tree").mkdir(parents=True)
    (root / "home").mkdir()
    argv = ["unshare", "--user", "--map-root-user", "--mount", sys.executable, "-c", AS_A_PERSON]
    # (no share: the loop tests' are the boxes' user's, no one's in this user namespace)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_SANDBOX_SHARE")}
    env[TMPFS_ENV] = "4m"
    places = scratch_places()
    done = subprocess.run(
        [*argv, str(root), *places], capture_output=True, text=True, timeout=60, env=env
    )
    said = done.stdout.split()
    assert done.returncode == 0 and said[-1] == "0", done
    assert said[2:4] == [said[3]] * 2 and int(said[2]) > BOX_PROCS, said  # the host's
    assert said[5:-1] == ["1", str(4 * 1024 * 1024)] * len(places), said


@pytest.mark.skipif(sandbox.level() != sandbox.NAMESPACES, reason="no user namespaces here")
def test_a_run_lists_every_box_bound_on_the_board_and_refuses_one_that_is_not_a_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, retries=0)
    body = f"count('maker')\nput('src/calc.py', {CALC_MUL!r})\n"
    body += f"put('tests/test_mul.py', {TEST_MUL!r})\n"
    maker = project.script("maker", body)
    monkeypatch.setenv(TMPFS_ENV, "lots")
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 2 and project.calls("maker") == 0, ran
    assert ran.errors[0]["message"].startswith(f"{TMPFS_ENV}='lots' is not a tmpfs size"), ran
    monkeypatch.setenv(TMPFS_ENV, "64m")
    monkeypatch.setenv(PROCS_ENV, "3000")
    monkeypatch.setenv("RELAY_CANDIDATE_TOTAL_MAX", "1g")
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0 and project.calls("maker") == 1, ran
    board = project.read("docs/loop/BOARD.md")
    assert "- Box scratch tmpfs: size=64m,nr_inodes=262144 each" in board, board
    assert "- Candidate file: 100 MiB at most (relay; RELAY_CANDIDATE_FILE_MAX)" in board
    assert "- Candidate new and resized files: 1 GiB in all" in board
    if sandbox._as_root():
        assert "- Box processes: 3000 each (RLIMIT_NPROC) (relay; RELAY_BOX_PROCS)" in board
    else:
        assert "- Box processes: none set (relay: a box is the person's own user" in board


@needs_root_boxes
def test_the_empty_folder_a_judged_box_has_for_a_share_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A share a judged box does not see is an empty, writable tmpfs of its own there:
    bounded like the box's other scratch."""
    monkeypatch.setenv(TMPFS_ENV, "4m")
    monkeypatch.delenv(sandbox.JUDGED_SHARE_ENV, raising=False)
    with person_share("relay-test-tmpfs-share-") as share, box_in("relay-test-tmpfs-j-") as box:
        monkeypatch.setenv(sandbox.SHARE_ENV, str(share))
        judged = replace(box, shared=False)
        assert "size=4096k" in top_options(judged, str(share))
        fill = f"dd if=/dev/zero of={share}/fill bs=1M count=8 2>&1; wc -c <{share}/fill"
        done = run(judged, fill)
        assert "No space left on device" in done.stdout, done
        assert done.stdout.split()[-1] == str(4 * 1024 * 1024), done
        assert list(share.iterdir()) == []  # (and nothing reached the share)
