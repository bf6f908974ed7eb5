"""The roles' threads on disk: live under the clone's common git directory (shared by
every worktree a parallel run makes, so `relay loop status` and `relay loop interrupt`
see each role wherever it runs), and copied under the spine's state
(``docs/loop/state/threads/``) with the main line's bookkeeping commits.

Ground rules: a thread is appended to under a lock, never rewritten; a status file is
written whole (temp file, then rename), so a reader never sees half of one.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from relay.edges.git import known_dirs
from relay.edges.ownpath import program
from relay.loop.threads import (
    THREADS_DIR,
    Status,
    Thread,
    ThreadState,
    continues,
    goal_stamp,
    parse_status,
    parse_thread,
    render_status,
    render_thread,
    thread_keys,
    with_entry,
)

_LOCK = threading.Lock()
# what the live store keeps beside a thread: how much is committed, the role's work on it
_BESIDE = (".committed", ".status", ".interrupted")


def now_word() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=64)
def common_dir(root: Path) -> Path:
    """The clone's common git directory (the same from any of its worktrees), asked of git
    once per folder in a process (a run asks at every thread it reads or writes), or
    known from when the clone was found (:func:`relay.edges.git.known_dirs`)."""
    known = known_dirs(root)
    if known is not None:
        return known.absolute_common
    done = subprocess.run(
        [program("git"), "rev-parse", "--path-format=absolute", "--git-common-dir"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


@dataclass(frozen=True)
class ThreadStore:
    """The live threads of one clone."""

    where: Path  # <common git dir>/relay/loop/threads

    @classmethod
    def of(cls, root: Path) -> ThreadStore:
        return cls(common_dir(root) / "relay" / "loop" / "threads")

    def _file(self, role: str, goal: str) -> Path:
        return self.where / role / f"{goal}.md"

    def read(self, role: str, goal: str) -> Thread:
        path = self._file(role, goal)
        if not path.is_file():
            return Thread(role, goal)
        return parse_thread(path.read_text(encoding="utf-8"), name=str(path))

    def append(self, role: str, goal: str, kind: str, text: str) -> None:
        """One more entry on the role's thread on the goal."""
        with _LOCK:
            thread = with_entry(self.read(role, goal), kind, text, when=now_word())
            path = self._file(role, goal)
            path.parent.mkdir(parents=True, exist_ok=True)
            _write(path, render_thread(thread))

    def set(
        self,
        role: str,
        goal: str,
        state: ThreadState,
        *,
        pgid: int | None = None,
        job: str | None = None,
    ) -> None:
        """The role's work on the goal is now ``state`` (run by ``pgid`` or node job ``job``)."""
        path = self.where / role / f"{goal}.status"
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, render_status(Status(role, goal, state, now_word(), pgid, job)))

    def interrupt(self, role: str, goal: str) -> None:
        """Mark the role's work on the goal as stopped by a person, before it is stopped,
        so the run reads its end as a person's stop, not a failure."""
        path = self.where / role / f"{goal}.interrupted"
        path.parent.mkdir(parents=True, exist_ok=True)
        _write(path, now_word() + "\n")

    def interrupted(self, role: str, goal: str) -> bool:
        """Whether a person stopped the role's work on the goal (the mark is taken)."""
        path = self.where / role / f"{goal}.interrupted"
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def statuses(self) -> list[Status]:
        """Every role's status on every goal, by role then goal."""
        found: list[Status] = []
        if not self.where.is_dir():
            return found
        for path in sorted(self.where.glob("*/*.status")):
            got = parse_status(path.parent.name, path.stem, path.read_text(encoding="utf-8"))
            if got is not None:
                found.append(got)
        return found

    def reconcile(self, root: Path) -> None:
        """Make the spine in ``root`` (its HEAD's ``docs/loop/state/threads``) the source:
        a thread the spine has and the live store lacks or contradicts (a fresh clone,
        another history) is taken from the spine; the live threads of a goal id now used
        for another goal (another title or acceptance) are dropped, so it inherits none."""
        goals = _goals(root)
        if goals is None:
            return
        with _LOCK:
            stamps = self.where / ".goals"
            for goal_id, stamp in goals.stamps.items():
                mark = stamps / goal_id
                was = mark.read_text(encoding="utf-8").strip() if mark.is_file() else None
                if was is not None and was != stamp:
                    for old in self.where.glob(f"*/{goal_id}.*"):
                        old.unlink(missing_ok=True)
                if was != stamp:
                    mark.parent.mkdir(parents=True, exist_ok=True)
                    _write(mark, stamp + "\n")
            spine = root / THREADS_DIR
            if _main_tree(root):  # a goal's own worktree may lag the main line: not there
                for live in sorted(self.where.glob("*/*.md")) if self.where.is_dir() else ():
                    copy = spine / live.parent.name / live.name
                    held = copy.read_text(encoding="utf-8") if copy.is_file() else None
                    committed = _committed(live)
                    if committed is None or not live.is_file():
                        continue  # never committed: a run's entry not yet on the main line
                    mine = live.read_text(encoding="utf-8")
                    if held is None or not held.startswith(mine[:committed]):
                        # committed in a history HEAD does not hold (reset away)
                        for gone in (live, *[live.with_suffix(x) for x in _BESIDE]):
                            gone.unlink(missing_ok=True)
            for path in sorted(spine.glob("*/*.md")) if spine.is_dir() else ():
                if path.stem not in goals.keys:
                    continue
                live = self._file(path.parent.name, path.stem)
                text = path.read_text(encoding="utf-8")
                have = live.read_text(encoding="utf-8") if live.is_file() else None
                if have is None or not continues(text, have):
                    live.parent.mkdir(parents=True, exist_ok=True)
                    _write(live, text)
                    _write(live.with_suffix(".committed"), f"{len(text)}\n")

    def threads(self) -> list[tuple[str, str]]:
        """Every live thread, as (role, goal), by role then goal."""
        if not self.where.is_dir():
            return []
        return [(p.parent.name, p.stem) for p in sorted(self.where.glob("*/*.md"))]

    def copy_into(self, root: Path) -> list[str]:
        """Copy the threads of the goals (and groups) ``root``'s GOALS.md holds under its
        spine's state (never another history's); the paths written."""
        written: list[str] = []
        if not self.where.is_dir():
            return written
        goals = _goals(root)
        main = _main_tree(root)
        with _LOCK:
            for path in sorted(self.where.glob("*/*.md")):
                if goals is not None and path.stem not in goals.keys:
                    continue
                rel = f"{THREADS_DIR}/{path.parent.name}/{path.name}"
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.is_file() or target.read_bytes() != path.read_bytes():
                    shutil.copyfile(path, target)
                    written.append(rel)
                if main:  # on the main line's spine now: a history without it drops it
                    size = len(path.read_text(encoding="utf-8"))
                    if _committed(path) != size:  # each goal's, every board write: once
                        _write(path.with_suffix(".committed"), f"{size}\n")
        return written


def _committed(live: Path) -> int | None:
    """How much of a live thread (its first characters) went onto the main line's spine;
    None when none of it has."""
    mark = live.with_suffix(".committed")
    try:
        return int(mark.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


@functools.lru_cache(maxsize=64)
def _main_tree(root: Path) -> bool:
    """Whether ``root`` is the clone's main work tree (not a goal's own worktree), asked
    of git once per folder in a process (or known from when the clone was found)."""
    known = known_dirs(root)
    if known is not None:
        return known.git_dir == known.absolute_common
    done = subprocess.run(
        [program("git"), "rev-parse", "--path-format=absolute", "--git-dir"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode == 0 and Path(done.stdout.strip()) == common_dir(root)


@dataclass(frozen=True)
class _Goals:
    stamps: dict[str, str]  # goal id: what the goal is (relay.loop.threads.goal_stamp)
    keys: frozenset[str]  # the thread keys the spine may hold


def _goals(root: Path) -> _Goals | None:
    """The goals ``root``'s GOALS.md holds (None when it cannot be read: nothing is
    filtered or dropped on a guess)."""
    from relay.errors import RelayError
    from relay.ratchet.files import Spine

    try:
        goals = Spine(root).goals().goals
    except (RelayError, OSError):
        return None
    return _Goals(
        {g.id: goal_stamp(g.id, g.title, g.accept) for g in goals},
        thread_keys([(g.id, g.group) for g in goals]),
    )


def _write(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)
