"""A box of a relay run as root is root of a user namespace of its own whose root is an
unprivileged user outside, the box's own (one of :data:`BOX_IDS`), never the real root
nor another running box's (test_loop_box_own_user): a file only root may
read is unreadable in it by its mode, whatever the lists of hidden paths say, while its
tree, scratch HOME and temporary folder are its own to write, and relay (root) reads and
removes what it left. A relay run as any other user runs its boxes as itself (those
tests skip here)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from root_boxes import as_nobody, box_in, needs_root_boxes, run

from relay.errors import LocalUsageError
from relay.ratchet import sandbox
from relay.ratchet.sandbox import BOX_ID, BOX_IDS, NAMESPACES, Sandbox, mapped


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with box_in("relay-test-user-") as made:
        (made.tree / "kept.txt").write_text("relay's clone\n")
        yield made


@pytest.fixture
def root_only() -> Iterator[Path]:
    """A fresh file only root may read, in /etc (which every box shows whole)."""
    path = Path(f"/etc/relay-test-root-only-{os.getpid()}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"ROOT-ONLY-5521\n")
    os.close(fd)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


@needs_root_boxes
def test_a_root_only_file_is_unreadable_in_a_box_of_a_root_relay(
    box: Sandbox, root_only: Path
) -> None:
    done = run(
        box,
        f"id -u; id -g; cat {root_only} || echo denied;"
        " cat /proc/self/uid_map;"
        " echo made > made.txt && echo more >> kept.txt && echo wrote-tree;"
        " echo h > $HOME/h && echo t > $TMPDIR/t && echo wrote-scratch",
    )
    assert done.returncode == 0, done.stderr
    words = done.stdout.split()
    outside = int(words[4])  # the box's own user: none of the boxes' shared one, nor root
    assert words == ["0", "0", "denied", "0", str(outside), "1", "wrote-tree", "wrote-scratch"]
    assert outside in BOX_IDS and outside != BOX_ID
    assert "Permission denied" in done.stderr and "ROOT-ONLY" not in done.stdout
    # relay, root, reads what the box wrote, which is the box's user's, not root's
    assert (box.tree / "made.txt").read_text() == "made\n"
    assert (box.tree / "made.txt").stat().st_uid == outside
    assert (box.home / "h").stat().st_uid == outside
    assert (box.tree / "kept.txt").read_text() == "relay's clone\nmore\n"
    assert root_only.stat().st_uid == 0 and root_only.stat().st_mode & 0o777 == 0o600


@needs_root_boxes
def test_a_hard_link_in_the_box_folder_is_not_given_to_the_box(
    box: Sandbox, tmp_path: Path
) -> None:
    """The set-up gives the box folder to the box's user file by file: a file with another
    link (a host file's, put there by hand or a link a box could make) stays root's."""
    secret = box.folder / "secret-elsewhere"
    secret.write_text("ROOT-ONLY-5522\n")
    secret.chmod(0o600)
    (box.tree / "linked").hardlink_to(secret)
    done = run(box, "cat linked || echo denied")
    assert done.stdout.split() == ["denied"], done
    assert secret.stat().st_uid == 0 and secret.stat().st_mode & 0o777 == 0o600


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder in /tmp every user may pass through, as a person's shared folder is: an
    ordinary user of the host runs what a box left there."""
    folder = Path(tempfile.mkdtemp(prefix="relay-test-share-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@needs_root_boxes
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv to run as nobody")
def test_what_a_box_leaves_in_a_share_is_its_user_s_and_makes_no_one_root(
    box: Sandbox, open_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A share is bound as it is: copies of programs made by the box in a share are the
    box's user's on disk, so an ordinary user of the host who runs them is that
    unprivileged user at most, never root, and holds no capability; the box can neither
    make one set-user-ID (test_loop_box_share_suid) nor give one a file capability
    (``setcap``, where the machine has it: the filter refuses extended attributes). A share
    that user cannot write is refused first, in one line that says what to do."""
    share = open_folder / "share"
    share.mkdir()
    monkeypatch.setenv("RELAY_SANDBOX_SHARE", str(share))
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home), "TMPDIR": str(box.tmp)}
    with pytest.raises(LocalUsageError, match=f"id {BOX_ID}.*chown -R {BOX_ID} {share}"):
        box.wrap("true", env)
    os.chown(share, BOX_ID, -1)  # as the message says
    setcap = shutil.which("setcap", path=f"{os.environ['PATH']}:/usr/sbin:/sbin")
    command = f"cp /usr/bin/id {share}/sticky && (chmod 4755 {share}/sticky || echo refused)"
    if setcap:
        command += (
            f" && cp /usr/bin/grep {share}/capped && ({setcap} cap_setuid,cap_dac_override+ep"
            f" {share}/capped 2>/dev/null && echo capped || echo cap-refused)"
        )
    command += f"; echo new > {share}/new.txt && echo wrote-share"
    done = run(box, command)
    assert done.returncode == 0, done.stderr
    said = ["refused", *(["cap-refused"] if setcap else []), "wrote-share"]
    assert done.stdout.split() == said, done
    sticky = (share / "sticky").stat()
    assert sticky.st_uid == BOX_ID  # never root's, and cleared once the box is over
    assert not sticky.st_mode & stat.S_ISUID
    assert as_nobody(str(share / "sticky"), "-u").split() == ["65534"]
    assert (share / "new.txt").stat().st_uid == BOX_ID
    assert (share / "new.txt").read_text() == "new\n"
    if setcap:
        assert (share / "capped").stat().st_uid == BOX_ID
        assert not os.listxattr(share / "capped")
        got = as_nobody(str(share / "capped"), "^CapEff", "/proc/self/status")
        assert got.split() == ["CapEff:", "0000000000000000"], got


@needs_root_boxes
def test_a_file_of_root_s_in_a_shown_folder_is_read_by_its_bits_for_others(
    box: Sandbox, tmp_path: Path
) -> None:
    """What relay shows is bound as it is: root's files are no one's in the box, so a 0600
    file of root's in a shown folder (a virtualenv's, a tool's) is unreadable there, while
    a 0644 one is read and the virtualenv's tool runs; the folders above it, root's alone
    (0700), are made by relay in the box, so they do not stand in the way."""
    private = tmp_path / "private"
    private.mkdir()
    private.chmod(0o700)  # as /root is
    done = subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(private / "venv")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    tools = private / "venv" / "bin"
    (tools / "secret.txt").write_text("ROOT-ONLY-5523\n")
    (tools / "secret.txt").chmod(0o600)
    (tools / "open.txt").write_text("for all\n")
    (tools / "open.txt").chmod(0o644)
    (tools / "mytool").write_text(f"#!{tools / 'python'}\nprint('tool ran')\n")
    (tools / "mytool").chmod(0o755)
    command = (
        f"mytool; cat {tools}/open.txt; cat {tools}/secret.txt || echo denied;"
        f" test -e {tools}/secret.txt && echo there"
    )
    done = run(box, command, PATH=f"{tools}:{os.environ['PATH']}")
    assert "ROOT-ONLY-5523" not in done.stdout, done
    assert done.stdout.splitlines() == ["tool ran", "for all", "denied", "there"], done


@needs_root_boxes
def test_a_box_folder_given_to_the_box_s_user_is_removed_when_its_run_is_over(
    tmp_path: Path,
) -> None:
    """A run killed after its box wrote leaves a folder the box's user owns (with files
    root cannot list by mode alone): the next judged box's clean-up removes it all."""
    folder = tmp_path / f"{sandbox.JUDGED_PREFIX}killed"
    for name in ("tree", "home", "tmp"):
        (folder / name).mkdir(parents=True)
    (folder / sandbox.OWNER_FILE).write_text(f"{os.getpid()} 1 another-boot\n")
    box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    done = run(box, "mkdir -p deep/er && echo x > deep/er/f && chmod 0 deep/er deep")
    assert done.returncode == 0, done.stderr
    owner = folder.stat().st_uid
    assert owner in BOX_IDS and (folder / "tree").stat().st_uid == owner
    assert sandbox.drop_stale_boxes(tmp_path) == [folder]
    assert not folder.exists()


def test_an_id_is_a_user_namespaces_where_a_row_of_its_map_holds_it() -> None:
    """A container's root whose map holds no box user keeps its boxes as before (its root
    is no real root)."""
    assert mapped("0 0 4294967295\n", BOX_ID)
    assert not mapped("0 100000 65536\n", BOX_ID)
    assert not mapped("0 0 1\n", BOX_ID)
    assert not mapped(f"0 1000 1\n1 100000 {BOX_ID - 1}\n", BOX_ID)
    assert mapped(f"0 1000 1\n1 100000 {BOX_ID}\n", BOX_ID)
    assert mapped("0 0 4294967295\n", BOX_IDS.start, len(BOX_IDS))
    assert not mapped(f"0 0 {BOX_IDS.stop - 1}\n", BOX_IDS.start, len(BOX_IDS))
    assert not mapped(f"0 0 {BOX_IDS.start}\n{BOX_IDS.start} 7 9\n", BOX_IDS.start, 10)
