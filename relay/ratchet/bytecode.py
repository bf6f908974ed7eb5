"""Python's compiled files for a judged tree, compiled by relay from the candidate's own
sources, so that each gate does not compile the project again.

A judged tree is a fresh checkout, and after each gate the compiled files its run left are
swept away (:func:`relay.ratchet.measure.swept`: code under judgement could have forged
one for the next gate to load). So every gate that imports the project compiled all of it,
every iteration: a cost the person's own clone, whose ``__pycache__`` is warm, never pays
(a second or more a gate for a large project). Before each gate relay now writes the
compiled files that gate's run read last time, from its own cache:

- the files are compiled by relay, from the blobs of the commit the tree was checked out
  from (read from relay's clone, never from the tree), in a process of relay's own
  interpreter with no site and no path (``-I -S``), memory and time bounded; compiling runs
  none of the code;
- they are hash-checked (``CHECKED_HASH``): Python loads one only where the source beside
  it hashes as the one it was compiled from, and compiles the source otherwise;
- a source whose compiling warns, or would fail under a stricter gate's settings, is left
  out (marked, never compiled again): a gate compiles it as before, and its warnings are
  said or fail it as its settings ask (-W error), where a compiled file would say nothing;
- which sources a gate reads is learned from the names of the compiled files its first run
  left (names only, read before the sweep, each a tracked Python file of the commit; later
  runs write none, as gates did before); nothing a run wrote is ever read or kept; the
  ``__pycache__`` of each folder of the commit's sources is made before that first run, so
  its writing them touches none of the tree's folders (a touched folder in a baseline's run
  excuses a candidate's that stirred it: :func:`relay.loop.checks.unexplained`);
- they are written through folders opened one by one without following a link, never over
  an existing file, after the previous gate's processes have ended;
- only for a commit whose top-level ``.gitignore`` ignores compiled files in every folder
  (:func:`ignores_compiled`): elsewhere a gate could see them (`git status`);
- only for relay's own interpreter's kind (``sys.implementation.cache_tag``): a gate run on
  another Python ignores them and compiles as before.

The cache (by blob) and what each gate command read live in the loop's folder in the clone's
git directory, which no box sees.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from relay.loop.checks import PYCACHE, TreeState

TAG = sys.implementation.cache_tag
SUFFIX = f".{TAG}.pyc" if TAG else ""
FOLDER = "bytecode"  # in the loop's work folder
LEARNED_FILE = "learned.json"
MOST_SOURCES = 20_000  # sources remembered for one gate command
MOST_COMMANDS = 256  # gate commands remembered (a goal's acceptance is one of its own)
MOST_CACHED = 50_000  # compiled files kept before the cache starts again
COMPILE_TIMEOUT = 120.0
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_STRICT = ("-X", "int_max_str_digits=640")  # the least a gate may set (0 is no limit)

# The compiler: each ``<blob>.py`` of its folder to ``<blob>.pyc``, hash-checked. Run with
# -I -S (no site, no path but the standard library's); memory bounded where it can be. A
# source whose compiling warns (an invalid escape, `is` with a literal), or holds an integer
# a stricter gate would refuse to read (``int_max_str_digits`` at its least), is not
# compiled: a gate's run compiles it as before, and says so or fails as its settings ask
# (-W error, PYTHONWARNINGS), where a compiled file loaded would say nothing.
_COMPILER = """
import os, py_compile, sys, warnings
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))
except Exception:
    pass
warnings.simplefilter("error")
folder = sys.argv[1]
mode = py_compile.PycInvalidationMode.CHECKED_HASH
for name in sorted(os.listdir(folder)):
    if name.endswith(".py"):
        source = os.path.join(folder, name)
        try:
            py_compile.compile(source, cfile=source + "c", dfile=name, doraise=True,
                               invalidation_mode=mode)
        except Exception:
            pass
"""


def sources_left(folder: str, names: Iterable[str]) -> list[str]:
    """The sources whose compiled files (``names``, a ``__pycache__``'s entries in
    ``folder`` of the tree, "" for its top) a run left: this interpreter's plain ones,
    not optimised ones nor pytest's rewritten tests."""
    if not SUFFIX:
        return []
    found = []
    for name in names:
        if name.endswith(SUFFIX) and len(name) > len(SUFFIX):
            stem = name[: -len(SUFFIX)]
            found.append(f"{folder}/{stem}.py" if folder else f"{stem}.py")
    return found


def learned_now(had: Sequence[str], seen: Iterable[str], sources: Mapping[str, str]) -> list[str]:
    """What a gate command reads, after a run that left ``seen``: those of its tree's
    Python files (``sources``), with what it read before (``had``) kept first, in
    order; at most :data:`MOST_SOURCES`."""
    merged = dict.fromkeys(had)
    merged.update(dict.fromkeys(p for p in sorted(seen) if p in sources))
    return list(merged)[:MOST_SOURCES]


# The lines of a top-level .gitignore that ignore Python's compiled files in every folder
# (GitHub's Python template has the first and the fourth).
_IGNORES_COMPILED = frozenset(
    ("__pycache__/", "__pycache__", "**/__pycache__/", "**/__pycache__", "*.py[cod]",
     "*.py[co]", "*.pyc")
)  # fmt: skip


def ignores_compiled(gitignore: str | None) -> bool:
    """Whether a commit's top-level ``.gitignore`` (its text; None where there is none)
    ignores Python's compiled files in every folder, and takes none back (no ``!`` line):
    only then are relay's compiled files and a learning run's nothing a gate sees (a gate
    that asks `git status` for a clean tree, a test that lists a folder would fail)."""
    if gitignore is None:
        return False
    lines = [line.strip() for line in gitignore.splitlines()]
    if any(line.startswith("!") for line in lines):
        return False
    return any(line in _IGNORES_COMPILED for line in lines)


def by_folder(paths: Iterable[str]) -> dict[str, list[str]]:
    """Source paths grouped by their folder ("" for the tree's top), each with its name."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        groups.setdefault(folder, []).append(name)
    return groups


class Primer:
    """The compiled files of one judged commit's Python sources, written into its tree
    before each gate (:meth:`prime`) and learned from what each run left (:meth:`learn`).

    ``sources``: the commit's Python files and their blobs; ``read``: the blobs' contents
    (relay's clone's git, one process); ``work``: the loop's work folder."""

    def __init__(
        self,
        work: Path,
        sources: Mapping[str, str],
        read: Callable[[Sequence[str]], Mapping[str, bytes]],
    ) -> None:
        self.folder = work / FOLDER
        self.cache = self.folder / (TAG or "none")
        self.sources = sources
        self.read = read
        self.primed = 0  # compiled files written, all gates
        self.compiled = 0  # sources compiled, all gates

    def _learned(self) -> dict[str, list[str]]:
        try:
            data = json.loads((self.folder / LEARNED_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            k: [p for p in v if isinstance(p, str)]
            for k, v in data.items()
            if isinstance(k, str) and isinstance(v, list)
        }

    def knows(self, command: str) -> bool:
        """Whether what ``command`` reads was learned already: its runs then write no
        compiled file (writing them cost what compiling them saved), the first one does."""
        return bool(SUFFIX) and command in self._learned()

    def _cached(self, sha: str) -> Path:
        return self.cache / sha[:2] / f"{sha}.pyc"

    def _refused(self, sha: str) -> Path:
        """The mark of a blob the compiler left out (it is not compiled again)."""
        return self.cache / sha[:2] / f"{sha}.none"

    def ready(self, where: Path) -> None:
        """Before a run that writes compiled files (a command not learned yet): a
        ``__pycache__`` in each folder of the commit's Python sources, so that Python's
        writing them changes none of the tree's folders. One the run made would leave its
        folder touched (:func:`relay.loop.checks.tree_marks`), and a baseline's touched
        folder excuses a candidate's run that made and removed an entry there
        (:func:`relay.loop.checks.unexplained`), which a run that writes none never did."""
        if SUFFIX:
            for folder in by_folder(self.sources):
                _write_folder(where, folder, [])

    def prime(self, where: Path, command: str) -> int:
        """Write into ``where`` the compiled files of the sources ``command`` read last
        time (compiling those not cached yet); how many were written."""
        if not SUFFIX:
            return 0
        wanted = [p for p in self._learned().get(command, []) if p in self.sources]
        if not wanted:
            return 0
        blobs = dict.fromkeys(self.sources[p] for p in wanted)
        missing = [
            sha for sha in blobs if not (self._cached(sha).is_file() or self._refused(sha).exists())
        ]
        if missing:
            self._compile(missing)
        written = 0
        for folder, names in by_folder(wanted).items():
            written += _write_folder(
                where, folder, [(n, self._cached(self.sources[f"{folder}/{n}" if folder else n]))
                                for n in names],
            )  # fmt: skip
        self.primed += written
        return written

    def learn(self, where: Path, command: str, state: TreeState) -> None:
        """Keep which of the tree's sources ``command``'s run read: the compiled files it
        left in the tree's folders (``state``: the tree after the run, before the sweep),
        by their names alone."""
        if not SUFFIX:
            return
        seen: list[str] = []
        for folder, entry in state.folders.items():
            if entry is None or PYCACHE not in entry[2]:
                continue
            seen += sources_left(folder, _entries(where, folder))
        learned = self._learned()
        had = learned.get(command, [])
        now = learned_now(had, seen, self.sources)
        if now == had:
            return
        learned.pop(command, None)
        learned[command] = now
        while len(learned) > MOST_COMMANDS:
            learned.pop(next(iter(learned)))
        with contextlib.suppress(OSError):
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=self.folder, prefix=LEARNED_FILE, delete=False
            ) as partial:  # a name of its own: parallel judges share the folder
                partial.write(json.dumps(learned))
            Path(partial.name).replace(self.folder / LEARNED_FILE)

    def _compile(self, shas: Sequence[str]) -> None:
        """The blobs ``shas`` compiled into the cache (one that does not compile is left
        out, and marked so: Python compiles its source in the tree, as before)."""
        blobs = self.read(shas)
        if not blobs:
            return
        try:
            self.cache.mkdir(parents=True, exist_ok=True)
            if sum(1 for _ in _walk_files(self.cache)) > MOST_CACHED:
                shutil.rmtree(self.cache, ignore_errors=True)
                self.cache.mkdir(parents=True, exist_ok=True)
            # beside the cache, on its file system: a compiled file is moved into it, which
            # one made on another (a /tmp in memory) never is
            with tempfile.TemporaryDirectory(prefix="compile-", dir=self.folder) as scratch:
                self._compile_in(scratch, blobs)
        except OSError:
            return

    def _compile_in(self, scratch: str, blobs: Mapping[str, bytes]) -> None:
        for sha, data in blobs.items():
            Path(scratch, f"{sha}.py").write_bytes(data)
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-S", "-B", *_STRICT, "-c", _COMPILER, scratch],
                cwd=scratch,
                env={"PATH": os.defpath},
                capture_output=True,
                timeout=COMPILE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return
        for sha in blobs:
            made = Path(scratch, f"{sha}.pyc")
            with contextlib.suppress(OSError):
                if made.is_file():
                    self._cached(sha).parent.mkdir(parents=True, exist_ok=True)
                    os.replace(made, self._cached(sha))
                    self.compiled += 1
                elif done.returncode == 0:  # (one that stopped: which source did is unknown)
                    self._refused(sha).parent.mkdir(parents=True, exist_ok=True)
                    self._refused(sha).touch()


def _walk_files(folder: Path) -> Iterable[Path]:
    for sub in folder.iterdir():
        if sub.is_dir():
            yield from sub.iterdir()


def _entries(where: Path, folder: str) -> list[str]:
    """The names in ``folder``'s ``__pycache__`` of the tree, reached through real folders
    only (none where a link stands on the way)."""
    fd = _open_folder(where, [*(folder.split("/") if folder else []), PYCACHE])
    if fd is None:
        return []
    try:
        return os.listdir(fd)
    except OSError:
        return []
    finally:
        os.close(fd)


def _open_folder(where: Path, parts: Sequence[str]) -> int | None:
    """A descriptor of ``where``/``parts``, each step opened without following a link;
    None where one is not a real folder."""
    try:
        fd = os.open(where, _DIR)
    except OSError:
        return None
    for part in parts:
        try:
            child = os.open(part, _DIR, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = child
    return fd


def _write_folder(where: Path, folder: str, files: Sequence[tuple[str, Path]]) -> int:
    """Each (source name, cached compiled file) of ``folder`` written into its
    ``__pycache__`` (made where there is none; opened, never followed, where there is),
    never over an existing entry; how many were written. As root the ``__pycache__`` made
    is open to all and sticky, as the judged tree's folders are (``open_folders``): a box's
    user adds its own compiled files there but replaces none of relay's."""
    parent = _open_folder(where, folder.split("/") if folder else [])
    if parent is None:
        return 0
    written = 0
    try:
        made = False
        with contextlib.suppress(FileExistsError):
            os.mkdir(PYCACHE, 0o755, dir_fd=parent)
            made = True
        cache = os.open(PYCACHE, _DIR, dir_fd=parent)
    except OSError:
        os.close(parent)
        return 0
    try:
        if made and hasattr(os, "geteuid") and os.geteuid() == 0:
            os.fchmod(cache, 0o1777)
        for name, compiled in files:
            try:
                data = compiled.read_bytes()
            except OSError:
                continue
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
            try:
                out = os.open(f"{name[:-3]}{SUFFIX}", flags, 0o644, dir_fd=cache)
            except OSError:
                continue
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
                written += 1
            finally:
                os.close(out)
    except OSError:
        pass
    finally:
        os.close(cache)
        os.close(parent)
    return written
