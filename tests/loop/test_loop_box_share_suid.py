"""A share is bound into a box as it is, so what a box of a relay run as root writes
there is the box's user's (:data:`BOX_ID`) on disk. Such a file left set-user-ID would
make any local user who runs it that user, the owner of every later box's folder and
processes: relay clears those bits and file capabilities in each share before a box
starts and once it is over, and the share is nosuid and nodev inside the box."""

from __future__ import annotations

import os
import resource
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from root_boxes import as_nobody, box_in, needs_root_boxes, person_share, run, start

from relay.ratchet import sandbox
from relay.ratchet.sandbox import BOX_ID, Sandbox

SETCAP = shutil.which("setcap", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with box_in("relay-test-suid-") as made:
        yield made


@pytest.fixture
def share(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A person's share, the boxes' shared user's as relay's refusal asks."""
    with person_share("relay-test-suid-share-") as shared:
        monkeypatch.setenv("RELAY_SANDBOX_SHARE", str(shared))
        yield shared


def capability(path: Path) -> bytes | None:
    try:
        return os.getxattr(path, "security.capability", follow_symlinks=False)
    except OSError:
        return None


@needs_root_boxes
def test_a_box_cannot_make_a_file_set_user_id_or_set_group_id(box: Sandbox, share: Path) -> None:
    """chmod, install, open and mknod with either bit fail in the box (seccomp), while a
    plain mode is set and a file made as ever; openat2 and io_uring are not there."""
    make = (
        "import os, stat, sys\n"
        "for how in (lambda: os.close(os.open('o', os.O_CREAT | os.O_WRONLY, 0o4755)),"
        " lambda: os.mknod('n', stat.S_IFREG | 0o2755), lambda: os.chmod('x', 0o6755)):\n"
        "    try:\n        how()\n        print('made')\n"
        "    except PermissionError:\n        print('refused')\n"
        "os.close(os.open('plain', os.O_CREAT | os.O_WRONLY, 0o755))\n"
        "os.close(os.open('x', os.O_RDONLY, 0o4755))\n"
        "print(oct(os.stat('plain').st_mode & 0o7777))\n"
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "for nr in (437, 425):  # openat2, io_uring_setup: modes no filter sees\n"
        "    print(libc.syscall(nr, 0, None, 0, 0), ctypes.get_errno() == 38)\n"
    )
    command = (
        f"cd {share} && cp /usr/bin/id x"
        " && for m in 4755 2755 u+s g+s; do chmod $m x 2>/dev/null && echo made || echo refused;"
        " done; install -m 4755 /usr/bin/id i 2>/dev/null && echo made || echo refused;"
        f' chmod 700 x && stat -c %a x && {sys.executable} -I -c "$MAKE"'
    )
    done = run(box, command, MAKE=make)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:10] == [*["refused"] * 5, "700", *["refused"] * 3, "0o755"], done
    if os.uname().machine in ("x86_64", "aarch64"):
        assert done.stdout.split()[10:] == ["-1", "True", "-1", "True"], done


@needs_root_boxes
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv to run as nobody")
def test_nothing_of_the_box_s_user_in_a_share_is_set_user_id_when_the_next_box_starts(
    box: Sandbox, share: Path
) -> None:
    """What the boxes' user's files in a share became while a box ran (set there by any
    process of that user's, in or out of the box: here root stands for one) is cleared
    before the next box's command runs (and, on a machine whose boxes no seccomp filter
    holds, once the box is over): set-user-ID, set-group-ID (one deep in a folder) and a
    file capability (which a box, root of its user namespace, gives where no filter
    refuses it extended attributes): nobody who runs one stays nobody. What is not that
    user's (a set-user-ID file of root's the person keeps there, a link to one outside) is
    left as it is, and no link is followed."""
    outside = share.parent / "root-suid"
    shutil.copy("/usr/bin/id", outside)
    outside.chmod(0o4755)
    kept = share / "person-suid"
    shutil.copy("/usr/bin/id", kept)
    kept.chmod(0o4755)
    command = (
        f"cp /usr/bin/id {share}/sticky && mkdir -p {share}/a/b"
        f" && cp /usr/bin/id {share}/a/b/deep"
        f" && ln -s {outside} {share}/link && ln -s {share.parent} {share}/up"
    )
    if SETCAP:
        command += f" && cp /usr/bin/id {share}/capped"
    command += f" && touch {share}/ready && while [ ! -e {share}/go ]; do sleep 0.05; done"
    running = start(box, command)
    try:
        deadline = time.monotonic() + 60
        while not (share / "ready").exists() and running.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        (share / "sticky").chmod(0o6755)
        (share / "a/b/deep").chmod(0o2755)
        if SETCAP:
            subprocess.run([SETCAP, "cap_setuid+ep", str(share / "capped")], check=True)
            assert capability(share / "capped") is not None
        (share / "go").touch()
        _, err = running.communicate(timeout=60)
    finally:
        running.kill()
    assert running.returncode == 0, err
    following = run(box, "true")
    assert following.returncode == 0, following.stderr
    for made in ("sticky", "a/b/deep"):
        st = (share / made).stat()
        assert st.st_uid == BOX_ID and stat.S_IMODE(st.st_mode) == 0o755, (made, oct(st.st_mode))
    assert as_nobody(str(share / "sticky"), "-u").split() == ["65534"]
    assert as_nobody(str(share / "a/b/deep"), "-g").split() == ["65534"]
    if SETCAP:
        assert capability(share / "capped") is None
        assert stat.S_IMODE((share / "capped").stat().st_mode) == 0o755
    assert stat.S_IMODE(outside.stat().st_mode) == 0o4755  # through no link
    assert stat.S_IMODE(kept.stat().st_mode) == 0o4755 and kept.stat().st_uid == 0
    assert (share / "link").is_symlink() and (share / "up").is_symlink()


@needs_root_boxes
def test_a_set_user_id_file_of_the_box_s_user_is_cleared_before_a_box_starts(
    box: Sandbox, share: Path
) -> None:
    """One left by a box relay never saw end (killed with its run) is cleared by the next
    box's start, before its command runs."""
    left = share / "left"
    shutil.copy("/usr/bin/id", left)
    os.chown(left, BOX_ID, BOX_ID)
    left.chmod(0o6755)
    done = run(box, f"stat -c %a {left}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["755"], done


@needs_root_boxes
def test_a_share_is_nosuid_and_nodev_in_a_box(box: Sandbox, share: Path) -> None:
    """Nothing set-user-ID runs from a share in any box, nor does a device node there open;
    the box still writes and runs programs there."""
    probe = (
        "import os, sys; f = os.statvfs(sys.argv[1]).f_flag;"
        " print(bool(f & os.ST_NOSUID), bool(f & os.ST_NODEV), bool(f & os.ST_RDONLY))"
    )
    command = (
        f"{sys.executable} -c '{probe}' {share} && cp /bin/true {share}/t && {share}/t && echo ran"
    )
    done = run(box, command)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False", "ran"], done


@needs_root_boxes
def test_the_box_s_exit_status_is_kept_around_the_clearing(box: Sandbox, share: Path) -> None:
    """The clearing after the box neither hides a failure nor makes one."""
    assert run(box, "exit 3").returncode == 3
    assert run(box, "true").returncode == 0


def nest(top: Path, depth: int, uid: int) -> int:
    """A folder ``depth`` deep under ``top`` (made by descriptor: its path is longer than a
    name may be) with a set-user-ID file of ``uid``'s at the bottom, kept open to look at."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = below
    try:
        made = os.open("x", os.O_CREAT | os.O_WRONLY, 0o755, dir_fd=fd)
    finally:
        os.close(fd)
    os.fchown(made, uid, uid)
    os.fchmod(made, 0o4755)
    return made


@needs_root_boxes
def test_a_set_user_id_file_at_the_bottom_of_a_deep_folder_is_cleared(
    box: Sandbox, share: Path
) -> None:
    """A folder nested deeper than Python's recursion goes (1,200) neither stops the
    clearing half-way nor leaves later boxes unable to start: the file at its bottom is
    cleared and the box runs, and so does the next."""
    deep = share / "deep"
    deep.mkdir()
    made = nest(deep, 1200, BOX_ID)
    try:
        done = run(box, "echo ran")
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["ran"], done
        assert stat.S_IMODE(os.fstat(made).st_mode) == 0o755
        again = run(box, "exit 3")
        assert again.returncode == 3, again.stderr
    finally:
        os.close(made)
        subprocess.run(["rm", "-rf", str(deep)], check=True, timeout=60)


def test_the_clearing_walks_a_folder_deeper_than_descriptors_allow(tmp_path: Path) -> None:
    """5,000 folders deep, with 100 descriptors allowed: the walk keeps a bounded number of
    folders open and still reaches the bottom, where it clears the file."""
    top = tmp_path / "share"
    top.mkdir()
    made = nest(top, 5000, os.getuid())

    def few() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (100, 100))

    argv = [sys.executable, "-I", "-S", "-c", sandbox._STRIP, str(os.getuid()), str(top)]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env={"RELAY_STRIP_COUNT": "1"},
            timeout=60,
            preexec_fn=few,
        )
        assert done.returncode == 0, done.stderr
        assert "5001 entries seen" in done.stderr
        assert stat.S_IMODE(os.fstat(made).st_mode) == 0o755
    finally:
        os.close(made)
        subprocess.run(["rm", "-rf", str(top)], check=True, timeout=60)


def test_the_clearing_walks_ten_thousand_files_in_bounded_time(tmp_path: Path) -> None:
    """The walk opens each entry once: a share of 10,000 entries (100 of them set-user-ID
    files of the user cleared for) is cleared in seconds, and says how many it saw."""
    top = tmp_path / "share"
    top.mkdir()
    for i in range(100):
        sub = top / f"d{i}"
        sub.mkdir()
        for j in range(99):
            (sub / f"f{j}").write_bytes(b"")
        (sub / "f0").chmod(0o4755)
    argv = [sys.executable, "-I", "-S", "-c", sandbox._STRIP, str(os.getuid()), str(top)]
    start = time.monotonic()
    done = subprocess.run(
        argv, capture_output=True, text=True, env={"RELAY_STRIP_COUNT": "1"}, timeout=60
    )
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    assert "10000 entries seen" in done.stderr
    assert not any((top / f"d{i}" / "f0").stat().st_mode & stat.S_ISUID for i in range(100))
    assert took < 20, took
