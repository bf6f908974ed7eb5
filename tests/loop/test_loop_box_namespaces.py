"""A box makes no namespace of its own and mounts nothing: in a user namespace of its own a
box's code would be root with every capability there, free to mount over, unmount or
remount in a mount namespace of its own what the box hid or made read-only (and a root
relay's box, root of its own user namespace, would not even need a new one). The seccomp
filter refuses clone and unshare with a namespace's flag, setns, mount, umount2,
pivot_root and the new mount calls (EPERM), and clone3, whose flags it cannot see
(ENOSYS: libc makes threads and processes by clone then). Threads, fork, subprocesses and
git still run.

A real box, made as this test's user (root here, so a root relay's box) and as an ordinary
user of the host (nobody where this test is root)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_loop_box_removed import NOBODY, ROOT, as_ordinary_user, said_by_a_person

from relay.ratchet.sandbox import FILTERED, NAMESPACES, level

pytestmark = [
    pytest.mark.skipif(
        level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
    ),
    pytest.mark.skipif(os.uname().machine not in FILTERED, reason="no filter for this machine"),
]

# what a box's code tries, by the calls themselves (ctypes): each answer, -errno or what it gave
INSIDE = """
import ctypes, json, os, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": {"clone": 56, "setns": 308, "pivot_root": 155},
      "aarch64": {"clone": 220, "setns": 268, "pivot_root": 41}}[os.uname().machine]


def said(got):
    return got if got >= 0 else -ctypes.get_errno()


def cloned(flags):  # clone(2) as fork does it, with flags added: a child leaves at once
    flags = ctypes.c_ulong(flags | 17)  # SIGCHLD
    got = libc.syscall(ctypes.c_long(NR["clone"]), flags, None, None, None, None)
    if got == 0:
        os._exit(0)
    if got > 0:
        os.waitpid(got, 0)
    return said(got)


read, write = os.pipe()
if os.fork() == 0:  # tried in a child, whose namespaces and root are its own if let through
    tries = {
        "unshare user": said(libc.unshare(0x10000000)),
        "unshare mount": said(libc.unshare(0x20000)),
        "unshare net": said(libc.unshare(0x40000000)),
        "clone user": cloned(0x10000000),
        "clone mount": cloned(0x20000),
        "clone3": said(libc.syscall(ctypes.c_long(435), None, ctypes.c_size_t(0))),
        "setns": said(libc.setns(0, 0)),
        "mount": said(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
        "umount2": said(libc.umount2(b"/proc/sys", 2)),
        "pivot_root": said(libc.syscall(ctypes.c_long(NR["pivot_root"]), b"/tmp", b"/tmp")),
        "open_tree": said(libc.syscall(ctypes.c_long(428), -100, b"/", 1)),
        "fsopen": said(libc.syscall(ctypes.c_long(430), b"tmpfs", 0)),
        "unshare files": said(libc.unshare(0x400)),  # CLONE_FILES: no namespace, still allowed
    }
    os.write(write, json.dumps(tries).encode())
    os._exit(0)
os.close(write)
tries = json.loads(os.read(read, 65536))
os.wait()
ran = []
threads = [threading.Thread(target=ran.append, args=(i,)) for i in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
forked = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
git = subprocess.run("git init -q g && git -C g -c user.name=b -c user.email=b@e.invalid"
                     " commit -q --allow-empty -m one && git -C g log --format=%s",
                     shell=True, capture_output=True, text=True)
print(json.dumps({"tries": tries, "threads": sorted(ran), "forked": forked,
                  "git": git.stdout.strip() or git.stderr}))
"""
# the person: a real box made by relay as that person, its code run in it, then a look
OUTSIDE = """
import json, shlex, shutil, subprocess, sys, tempfile
from pathlib import Path
from relay.ratchet.sandbox import NAMESPACES, Sandbox

folder = Path(tempfile.mkdtemp(prefix="relay-test-ns-"))
for name in ("tree", "home", "tmp"):
    (folder / name).mkdir()
box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
env = {"PATH": "/usr/bin:/bin", "HOME": str(box.home), "TMPDIR": str(box.tmp)}
inside = " ".join(shlex.quote(w) for w in [sys.executable, "-I", "-S", "-c", sys.argv[1]])
shell = "unshare --user --map-root-user true 2>/dev/null; echo $?"
done = [subprocess.run(["/bin/sh", "-c", box.wrap(c, env)], cwd=box.tree, env=env,
                       capture_output=True, text=True) for c in (inside, shell)]
shutil.rmtree(folder, ignore_errors=True)
print(json.dumps({"box": done[0].stdout, "err": done[0].stderr + done[1].stderr,
                  "rc": [d.returncode for d in done], "shell": done[1].stdout.strip()}))
"""


def tried_in_a_box(ordinary: bool) -> dict[str, Any]:
    """What a real box's code got for each call, run as this test's user or as an
    ordinary user of the host (nobody, where this test is root)."""
    said: dict[str, Any] = said_by_a_person(OUTSIDE, INSIDE, ordinary=ordinary)
    assert said["rc"] == [0, 0], said["err"]
    return said


@pytest.mark.parametrize("ordinary", [False, True], ids=["this-user", "ordinary-user"])
def test_a_box_makes_no_namespace_and_mounts_nothing(ordinary: bool) -> None:
    said = tried_in_a_box(ordinary)
    inside = json.loads(said["box"])
    eperm, enosys = -1, -38
    tries = inside["tries"]
    # the filter's own: without it each of these succeeds in a box
    filtered = (
        "unshare user",
        "unshare mount",
        "unshare net",
        "clone user",
        "clone mount",
        "setns",
    )
    assert {k: tries[k] for k in filtered} == dict.fromkeys(filtered, eperm), tries
    # the kernel refuses these in the box's own user namespace too (it owns no mount
    # namespace there): the box's property, which the filter doubles, not a proof of it
    doubled = ("mount", "umount2", "pivot_root", "open_tree", "fsopen")
    assert {k: tries[k] for k in doubled} == dict.fromkeys(doubled, eperm), tries
    assert set(tries) == {*filtered, *doubled, "clone3", "unshare files"}
    assert tries["clone3"] == enosys, "clone3's flags are not seen: it must fall back to clone"
    assert tries["unshare files"] == 0, "an unshare with no namespace's flag was refused"
    assert said["shell"] == "1", "unshare(1) made a user namespace in the box"
    assert inside["threads"] == list(range(8)) and inside["forked"] == 7
    assert inside["git"] == "one", inside["git"]


def cgroup2_root() -> Path | None:
    """Where this machine's cgroup v2 hierarchy is mounted, if it is."""
    for row in Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines():
        left, _, right = row.partition(" - ")
        if right.split()[:1] == ["cgroup2"]:
            return Path(left.split()[4])
    return None


# what a box's code tries on the cgroup its person runs in (delegated to them, as systemd
# does a login's): through /sys/fs/cgroup, read-only in a box, and through a cgroup file
# system of its own mounted in new namespaces, where a limit would be the person's
CGROUP = """
mkdir -p "$TMPDIR/cg"
unshare --user --map-root-user --mount --cgroup sh -c 'mount -t cgroup2 none "$TMPDIR/cg" &&
    echo 7 > "$TMPDIR/cg/cgroup.max.descendants"; mkdir "$TMPDIR/cg/made"' 2>/dev/null
echo 7 > "$GROUP/cgroup.max.descendants" 2>/dev/null
mkdir "$GROUP/made" 2>/dev/null
true
"""
# the person: a real box made by relay as that person, running a shell command
SHELL = """
import shutil, subprocess, sys, tempfile
from pathlib import Path
from relay.ratchet.sandbox import NAMESPACES, Sandbox

folder = Path(tempfile.mkdtemp(prefix="relay-test-ns-"))
for name in ("tree", "home", "tmp"):
    (folder / name).mkdir()
box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
env = {"PATH": "/usr/bin:/bin", "HOME": str(box.home), "TMPDIR": str(box.tmp),
       "GROUP": sys.argv[2]}
done = subprocess.run(["/bin/sh", "-c", box.wrap(sys.argv[1], env)], cwd=box.tree, env=env)
shutil.rmtree(folder, ignore_errors=True)
sys.exit(done.returncode)
"""


@pytest.mark.skipif(
    os.getuid() != 0 or cgroup2_root() is None or shutil.which("setpriv") is None,
    reason="a cgroup is delegated to an ordinary user by root, with setpriv",
)
def test_a_box_changes_nothing_of_the_cgroup_its_person_runs_in() -> None:
    """An ordinary user's relay runs in a cgroup of theirs (a login's): its box neither
    sets a limit there nor makes a cgroup in it, by /sys/fs/cgroup or a mount of its own."""
    root = cgroup2_root()
    assert root is not None
    group = root / f"relay-test-box-{os.getpid()}"
    try:
        group.mkdir()
    except OSError as err:
        pytest.skip(f"no cgroup can be made here: {err}")
    try:
        for each in (group, *group.iterdir()):
            os.chown(each, NOBODY, NOBODY)
        python, _, more = as_ordinary_user()
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), **more}
        nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        joined = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
        done = subprocess.run(
            ["sh", "-c", joined, str(group), *nobody, python, "-c", SHELL, CGROUP, str(group)],
            cwd="/", env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert (group / "cgroup.max.descendants").read_text().strip() == "max"
        assert not [p for p in group.iterdir() if p.is_dir()], "the box made a cgroup"
    finally:
        for sub in sorted(group.glob("**/"), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                sub.rmdir()
