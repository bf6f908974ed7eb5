"""Each box of a relay run as root runs as a user of its own (one of :data:`BOX_IDS`, from
the pid outside of the process it lives under), never the boxes' shared user
(:data:`BOX_ID`), who owns what they leave in a share on disk. A process of that shared
user's — which any local account would be who ran a set-user-ID file a box once left in a
share — neither signals a running box, nor reads or writes its files through
``/proc/PID/root`` or its box folder, nor another box's; and two boxes that run at once are
two users, while a share stays the boxes' to write in turn."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from root_boxes import box_in, needs_root_boxes, person_share, run, start

from relay.errors import LocalUsageError
from relay.ratchet.sandbox import BOX_ID, BOX_IDS, Sandbox

pytestmark = [
    needs_root_boxes,
    pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv to run as a user"),
]


@pytest.fixture
def share(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A person's share, the boxes' shared user's as relay's refusal asks."""
    with person_share("relay-test-own-share-") as shared:
        monkeypatch.setenv("RELAY_SANDBOX_SHARE", str(shared))
        yield shared


def outside_user(pid: int) -> int:
    """The real user outside of host process ``pid``."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    return int(next(row.split()[1] for row in status.splitlines() if row.startswith("Uid:")))


def waiting(box: Sandbox, marker: str, share: Path) -> subprocess.Popen[str]:
    """A box that writes a secret in its tree and a file in the share, says it is ready
    and waits for ``go`` in the share (its sleeping process named by ``marker``)."""
    command = (
        f"echo BOX-SECRET-{marker} > secret.txt && chmod 600 secret.txt"
        f" && echo {marker} >> {share}/log && exec python3 -c 'import os, time, sys\n"
        'open(sys.argv[2], "w").close()\n'
        f"while not os.path.exists(sys.argv[1]): time.sleep(0.05)'"
        f" {share}/go {share}/ready-{marker} {marker}"
    )
    return start(box, command)


def host_pid(marker: str) -> int:
    """The host pid of the box's process whose command line ends with ``marker``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"python3" in argv[0] and argv[-2:] == [marker.encode(), b""]:
            return int(entry.name)
    raise AssertionError(f"no box process for {marker}")


def as_shared_user(*argv: str) -> subprocess.CompletedProcess[str]:
    """``argv`` run on the host as the boxes' shared user."""
    ids = [f"--reuid={BOX_ID}", f"--regid={BOX_ID}", "--clear-groups"]
    return subprocess.run(
        ["setpriv", *ids, *argv], capture_output=True, text=True, timeout=30, check=False
    )


def test_two_boxes_at_once_are_two_users_none_the_shared_one_and_unreachable_by_it(
    share: Path,
) -> None:
    with box_in("relay-test-own-a-") as one, box_in("relay-test-own-b-") as two:
        first, second = waiting(one, "mark-a", share), waiting(two, "mark-b", share)
        try:
            deadline = time.monotonic() + 60
            while not all((share / f"ready-{m}").exists() for m in ("mark-a", "mark-b")):
                assert first.poll() is None and second.poll() is None, (
                    first.communicate(),
                    second.communicate(),
                )
                assert time.monotonic() < deadline
                time.sleep(0.05)
            pids = [host_pid("mark-a"), host_pid("mark-b")]
            users = [outside_user(p) for p in pids]
            assert users[0] != users[1] and all(u in BOX_IDS and u != BOX_ID for u in users)
            assert [one.folder.stat().st_uid, two.folder.stat().st_uid] == users
            for pid, box in zip(pids, (one, two), strict=True):
                secret = f"/proc/{pid}/root{box.tree}/secret.txt"
                for argv in (
                    ["cat", secret],
                    ["sh", "-c", f"echo FLIP > {secret}"],
                    ["cat", str(box.tree / "secret.txt")],
                    ["kill", "-STOP", str(pid)],
                    ["ls", f"/proc/{pid}/cwd/"],
                ):
                    done = as_shared_user(*argv)
                    assert done.returncode != 0 and "BOX-SECRET" not in done.stdout, (argv, done)
                assert outside_user(pid) in users
            # and a box of its own user cannot reach the other either (here: its user, on
            # the host)
            done = subprocess.run(
                [
                    "setpriv",
                    f"--reuid={users[0]}",
                    f"--regid={BOX_ID}",
                    "--clear-groups",
                    "cat",
                    f"/proc/{pids[1]}/root{two.tree}/secret.txt",
                ],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert done.returncode != 0 and "BOX-SECRET" not in done.stdout, done
        finally:
            (share / "go").touch()
            for each in (first, second):
                _, err = each.communicate(timeout=60)
                assert each.returncode == 0, err
        assert (one.tree / "secret.txt").read_text() == "BOX-SECRET-mark-a\n"
        assert (two.tree / "secret.txt").read_text() == "BOX-SECRET-mark-b\n"
    # the share is written by both, and stays the shared user's on disk
    log = share / "log"
    assert sorted(log.read_text().split()) == ["mark-a", "mark-b"]
    assert log.stat().st_uid == BOX_ID


def test_what_one_box_leaves_in_a_share_the_next_box_changes(share: Path) -> None:
    """A cache in a share (made by one box, as its own user) is the next box's to change
    and remove, though the two are different users: on disk it is the shared user's."""
    with box_in("relay-test-own-c-") as box:
        made = run(box, f"mkdir -p {share}/cache/a && echo 1 > {share}/cache/a/f && id -u")
        assert made.returncode == 0, made.stderr
        again = run(box, f"echo 2 >> {share}/cache/a/f && mv {share}/cache/a {share}/cache/b")
        assert again.returncode == 0, again.stderr
        gone = run(box, f"rm -r {share}/cache && echo removed")
        assert gone.stdout.split() == ["removed"], gone
    assert not (share / "cache").exists()


def test_shares_one_inside_another_or_open_to_everyone_are_refused(
    share: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A box could swap a folder between a share and one named inside it for a link to any
    folder of the host: the inner one is refused, in one line; so is a share every local
    account may write (any of them could change what a box runs from it)."""
    inner = share / "x" / "sub"
    inner.mkdir(parents=True)
    monkeypatch.setenv("RELAY_SANDBOX_SHARE", f"{share}:{inner}")
    with box_in("relay-test-own-d-") as box:
        with pytest.raises(LocalUsageError, match=f"names {inner} inside {share}.*name {share}"):
            box.wrap("true", dict(os.environ))
        monkeypatch.setenv("RELAY_SANDBOX_SHARE", str(share))
        os.chown(share, 0, 0)  # the person's, open to all: the person must close it
        share.chmod(0o777)
        with pytest.raises(LocalUsageError, match=r"writable by every local account.*chmod -R o-w"):
            box.wrap("true", dict(os.environ))
        os.chown(share, BOX_ID, BOX_ID)  # the boxes' user's, opened by a box: closed again
        share.chmod(0o1777)
        done = run(box, "true")
        assert done.returncode == 0, done.stderr
        assert share.stat().st_mode & 0o7777 == 0o1775


def test_what_a_box_opened_in_a_share_to_others_is_closed_before_the_next(share: Path) -> None:
    """A box gives a folder and a file in the share write access for others (its own
    umask cleared: no chmod of others' write bit goes through), and the folder holds a
    default access list that gives it to what is made there (no box sets one: as one where
    no filter holds would): before the next box starts, both are taken back, and nobody
    (an ordinary user of the host) writes nothing there."""
    # a default access list giving others rwx, as setfacl -d -m o::rwx writes it
    rows = [(1, 7, 2**32 - 1), (4, 7, 2**32 - 1), (32, 7, 2**32 - 1)]
    acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *row) for row in rows)
    with box_in("relay-test-own-e-") as box:
        done = run(box, f"umask 0 && mkdir -p {share}/open && touch {share}/open/f")
        assert done.returncode == 0, done.stderr
        os.setxattr(share / "open", "system.posix_acl_default", acl)
        assert (share / "open").stat().st_mode & 0o777 == 0o777
        assert "system.posix_acl_default" in os.listxattr(share / "open")
        nxt = run(box, f"stat -c %a {share}/open {share}/open/f")
        assert nxt.returncode == 0, nxt.stderr
        assert nxt.stdout.split() == ["775", "664"], nxt
    assert not os.listxattr(share / "open")
    wrote = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "touch", f"{share}/open/x"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert wrote.returncode != 0 and not (share / "open" / "x").exists(), wrote


def test_an_entry_of_another_user_in_a_share_stops_the_next_box(share: Path) -> None:
    """What another local account wrote in a share (while a box had opened it) is refused
    before any box runs again: one line naming the user and what to do."""
    planted = share / "planted"
    planted.write_text("#!/bin/sh\necho poisoned\n")
    os.chown(planted, 1000, 1000)
    with box_in("relay-test-own-f-") as box:
        done = run(box, "echo ran")
    assert done.returncode != 0 and "ran" not in done.stdout, done
    line = done.stderr.strip()
    assert "\n" not in line and "user 1000's" in line and "planted" in line, line


def test_a_file_with_another_link_or_a_folder_a_group_writes_is_handled(share: Path) -> None:
    """A file in a share with a second link (a virtualenv installed from a shared package
    cache by hard links: a box would change the virtualenv through the share) stops the
    next box in one line; write access a box gave a group other than the boxes' is taken
    back (that group's members are other local accounts)."""
    (share / "group").mkdir()
    os.chown(share / "group", BOX_ID, 100)
    (share / "group").chmod(0o2775)
    with box_in("relay-test-own-g-") as box:
        done = run(box, f"stat -c %a {share}/group")
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["2755"], done
        made = f"echo x > {share}/a && ln {share}/a {share}/b && mkdir {share}/d"
        inside = run(box, f"{made} && ln {share}/a {share}/d/e")
        assert inside.returncode == 0, inside.stderr  # links a box makes within the share
        again = run(box, "echo ran")
        assert again.returncode == 0 and again.stdout.split() == ["ran"], again
        venv = share.parent / "venv-file"
        venv.write_text("print('the virtualenv')\n")
        os.link(venv, share / "cached")
        os.chown(share / "cached", BOX_ID, BOX_ID)
        stopped = run(box, "echo ran")
    assert stopped.returncode != 0 and "ran" not in stopped.stdout, stopped
    line = stopped.stderr.strip()
    assert "\n" not in line and "a link outside it" in line and "cached" in line, line
