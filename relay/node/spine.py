"""The spine's master section as a clone has it, read with git and nothing heavier.

Apart from ``context`` so that a command that needs only the master section (``relay
redact`` in a clone, for its patterns and node names) does not load the API client, the
git library and the rest of a node's edges to read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from relay.edges.ownpath import program
from relay.edges.refs import Refs as _Refs
from relay.edges.refs import read_refs as _read_refs
from relay.edges.refs import ref_object as _ref_object
from relay.errors import ConfigError

if TYPE_CHECKING:
    from relay.protocol import Master

LOOP_PATH = Path("docs/loop/LOOP.md")
# Every master section's heading holds this word: a text without it has no section, and
# the protocol (its models, most of a short command's start-up) need not be loaded to say so.
_HEADING_WORD = "Relay"


def has_section(text: str) -> bool:
    """``relay.protocol.has_section``, loaded only for a text that may have one."""
    if _HEADING_WORD not in text:
        return False
    from relay.protocol import has_section as full

    return full(text)


def parse_master(text: str) -> Master:
    """``relay.protocol.parse_master``, loaded when first needed."""
    from relay.protocol import parse_master as full

    return full(text)


def read_loop(root: Path) -> str | None:
    """The text of docs/loop/LOOP.md as the remote has it (its default branch's tip as
    last fetched, else the checked-out branch's), so a person's uncommitted or unpushed
    edit of the spine neither blocks relay nor stands for the shared one; the working file
    only when the remote has none (a repository relay is being set up in). When its
    master section names a data branch, the file as that branch has it: relay commits
    the node table there, so every node reads the same. None when absent.

    The branch checked out and the remote's branches are read from the repository's own
    files where they can be (see ``_read_refs``), so git is started only to read a file
    from a branch the remote has: a clone with no remote starts none."""
    refs = _read_refs(root)
    path = root / LOOP_PATH
    local = path.read_text(encoding="utf-8") if path.is_file() else None
    text = _at_remote_tip(root, refs) or local
    if text is None or not has_section(text):
        return _find_data_branch(root, refs) or text
    try:
        branch = parse_master(text).data_branch
    except (ConfigError, ValueError):
        return text
    if not branch:
        return text
    return _on_branch(root, branch, refs, any_head=True) or text


def _head(root: Path, refs: _Refs | None) -> str:
    """The branch checked out, '' when HEAD is detached."""
    if refs is not None:
        return refs.head
    import subprocess

    head = subprocess.run([program("git"), "symbolic-ref", "-q", "--short", "HEAD"], cwd=root,
                          capture_output=True, text=True, check=False)  # fmt: skip
    return head.stdout.strip()


def _show(root: Path, ref: str, refs: _Refs | None) -> str | None:
    """LOOP.md on ``refs/remotes/origin/<ref>``; None when absent (without starting git
    when the remote has no such branch)."""
    if refs is not None and ref not in refs.remote:
        return None
    shown = _read_at(root, f"refs/remotes/origin/{ref}", LOOP_PATH.as_posix())
    return shown.decode("utf-8") if shown is not None else None


# Files read at a commit, kept for the process (a pass reads LOOP.md and the roster
# several times): by the commit the ref named when it was read, never by the ref's name,
# so a ref that moves, or another ref, is read again. A commit's files never change.
_READ: dict[tuple[Path, str, str], bytes | None] = {}
_READ_CAP = 256
# read together at a commit first read (one process): a pass reads both there
# (relay.protocol.roster.ROSTER_PATH, not imported: the protocol loads only when needed)
_READ_TOGETHER = (LOOP_PATH.as_posix(), "docs/loop/relay/roster.json")


def _read_at(root: Path, ref: str, path: str) -> bytes | None:
    """``path`` as the full ref ``ref`` has it (git's bytes); None when absent. Read once
    per commit: the ref is resolved from the clone's files where they say for certain
    what git would (else git reads it by the ref's name, as it is now, and it is not
    kept)."""
    found = _ref_object(root, ref)
    if found is None:
        return _git_show(root, f"{ref}:{path}")
    common, sha = found
    key = (common, sha, path)
    if key not in _READ:
        if len(_READ) >= _READ_CAP:
            _READ.clear()
        if path in _READ_TOGETHER:
            for each, data in _cat_files(root, sha, _READ_TOGETHER).items():
                _READ[(common, sha, each)] = data
        if key not in _READ:  # not read together (or not a plain file: git shows it)
            _READ[key] = _git_show(root, f"{sha}:{path}")
    return _READ[key]


def _cat_files(root: Path, sha: str, paths: tuple[str, ...]) -> dict[str, bytes | None]:
    """The files ``paths`` of the commit ``sha`` in one git process (``cat-file
    --batch``): each file's bytes, None for one it does not have; a path that is
    anything but a file is left out (nothing at all when git fails)."""
    import subprocess

    asked = "".join(f"{sha}:{path}\n" for path in paths).encode("utf-8")
    done = subprocess.run([program("git"), "cat-file", "--batch"], cwd=root, input=asked,
                          capture_output=True, check=False)  # fmt: skip
    found: dict[str, bytes | None] = {}
    out, at = done.stdout, 0
    for path in paths if done.returncode == 0 else ():
        end = out.find(b"\n", at)
        if end < 0:
            break
        header, at = out[at:end].decode("utf-8", "replace"), end + 1
        if header.endswith(" missing"):
            found[path] = None
            continue
        kind, _, size = header.rpartition(" ")
        if not size.isdigit() or kind.count(" ") != 1:
            break  # not the shape asked for: the rest is read alone
        if kind.endswith(" blob"):
            found[path] = out[at : at + int(size)]
        at += int(size) + 1  # the contents, then a newline
    return found


def _git_show(root: Path, spec: str) -> bytes | None:
    """``git show SPEC``'s output; None when git fails (no such file, ref or commit)."""
    import subprocess

    shown = subprocess.run([program("git"), "show", spec], cwd=root, capture_output=True,
                           check=False)  # fmt: skip
    return shown.stdout if shown.returncode == 0 else None


def _at_remote_tip(root: Path, refs: _Refs | None) -> str | None:
    """LOOP.md on the remote's default branch, else on the checked-out branch's remote
    counterpart, as last fetched (None when the remote has neither, or no such file)."""
    head = _head(root, refs)
    for ref in ["HEAD", *([head] if head else [])]:
        text = _show(root, ref, refs)
        if text is not None:
            return text
    return None


def _find_data_branch(root: Path, refs: _Refs | None) -> str | None:
    """LOOP.md of the fetched branch whose master section names that very branch as relay's
    data branch: how a clone of a protected default branch (which has no section, since
    it refused relay's commits) learns where relay keeps its spine. None when none does."""
    if refs is not None:
        branches = list(refs.remote)
    else:
        import subprocess

        listed = subprocess.run(
            [program("git"), "for-each-ref", "--format=%(refname:lstrip=3)",
             "refs/remotes/origin/"],
            cwd=root, capture_output=True, text=True, check=False,
        )  # fmt: skip
        branches = listed.stdout.split()
    for branch in branches[:100]:
        if branch == "HEAD":
            continue
        text = _on_branch(root, branch, refs, any_head=True)
        if text is None or not has_section(text):
            continue
        try:
            if parse_master(text).data_branch == branch:
                return text
        except (ConfigError, ValueError):
            continue
    return None


def _on_branch(
    root: Path, branch: str, refs: _Refs | None = None, *, any_head: bool = False
) -> str | None:
    """LOOP.md on ``origin/<branch>`` (None when this clone has not fetched it, or is on it)."""
    if not any_head and _head(root, refs) == branch:
        return None
    return _show(root, branch, refs)


def read_master(root: Path) -> Master:
    """The master section of a clone; ConfigError pointing at `relay init` when missing."""
    text = read_loop(root)
    if text is None or not has_section(text):
        raise ConfigError(
            f"no `## Relay` section in {LOOP_PATH} of {root}",
            hint="run `relay init` once for the repository, then `relay join` on each machine",
        )
    return parse_master(text)


def read_spine_file(root: Path, path: str, *, branch: str | None) -> str | None:
    """A spine file other than LOOP.md (the roster, a join request) as the remote has it:
    on ``branch`` when relay keeps its data there, else where LOOP.md is read from (the
    remote's default branch, the checked-out branch's counterpart); the working file only
    when the remote has none. None when absent."""
    refs = _read_refs(root)
    names = [branch] if branch else []
    head = _head(root, refs)  # from the clone's files where git would say the same
    names += ["HEAD", *([head] if head else [])]
    remote_has_spine = False
    for name in names:
        if refs is not None and name not in refs.remote:
            continue  # the remote has no such branch (as last fetched): nothing to read
        ref = f"refs/remotes/origin/{name}"
        shown = _read_at(root, ref, path)
        if shown is not None:
            return shown.decode("utf-8", errors="replace")
        has_spine = _read_at(root, ref, LOOP_PATH.as_posix()) is not None
        remote_has_spine = remote_has_spine or has_spine
        if branch and name == branch and has_spine:
            return None  # the data branch has the spine and no such file: that is the answer
    local = root / path
    if not remote_has_spine and local.is_file():
        return local.read_text(encoding="utf-8", errors="replace")
    return None


def in_history(root: Path, path: str) -> bool:
    """Whether ``path`` is in the history of any ref the clone has (a runner's checkout
    has no HEAD)."""
    import subprocess

    listed = subprocess.run(
        [program("git"), "log", "-1", "--format=%H", "--all", "--", path],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return listed.returncode == 0 and bool(listed.stdout.strip())


def versions_in_history(
    root: Path, path: str, *, first: str | None, most: int = 200, largest: int
) -> Iterator[bytes]:
    """The contents ``path`` has had in the history of the remote branch ``first`` (oldest
    first: a file a node wrote there comes before anyone's later edits of it), then in any
    other ref's (newest first): what a node searches for a file it wrote itself, among
    copies anyone with push access may have added on any branch. Each blob once, none over
    ``largest`` bytes, at most ``most`` in all, in three git processes, read one at a time
    (a pusher's thousands of large copies cost neither memory nor an unbounded read).
    Every line of history counts (``--full-history``: a merge that drops the file does not
    hide the side that added it)."""
    import subprocess

    def blobs(*refs: str) -> list[str]:
        listed = subprocess.run(
            [program("git"), "log", "--full-history", "--no-abbrev", "--raw", "--format=",
             *refs, "--", path],
            cwd=root, capture_output=True, text=True, check=False,
        )  # fmt: skip
        found = []
        for line in listed.stdout.splitlines() if listed.returncode == 0 else ():
            fields = line.split("\t", 1)[0].split()
            if len(fields) >= 4 and line.startswith(":") and fields[3].strip("0"):
                found.append(fields[3])
        return found

    ours = blobs(f"refs/remotes/origin/{first}")[::-1] if first else []
    wanted = list(dict.fromkeys([*ours, *blobs("--all")]))[:most]
    if not wanted:
        return
    asked = "".join(f"{blob}\n" for blob in wanted)
    sizes = subprocess.run(
        [program("git"), "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        cwd=root, input=asked, capture_output=True, text=True, check=False,
    )  # fmt: skip
    small = []
    for line in sizes.stdout.splitlines():
        blob, _, rest = line.partition(" ")
        kind, _, size = rest.partition(" ")
        if kind == "blob" and size.isdigit() and int(size) <= largest:
            small.append(blob)
    if not small:
        return
    with subprocess.Popen(
        [program("git"), "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    ) as reading:  # fmt: skip
        assert reading.stdin is not None and reading.stdout is not None
        reading.stdin.write("".join(f"{blob}\n" for blob in small).encode())
        reading.stdin.close()  # a few kilobytes: git reads them all before it writes much
        try:
            for _ in small:
                header = reading.stdout.readline().split()
                if len(header) != 3 or not header[2].isdigit():
                    return
                data = reading.stdout.read(int(header[2]))
                reading.stdout.read(1)  # the newline after the contents
                yield data
        finally:
            reading.kill()
