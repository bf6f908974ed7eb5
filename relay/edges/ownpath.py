"""Where relay's own process finds the programs it runs itself (git, gh, crontab...),
apart from where the project's gates and roles find theirs.

A folder of the clone relay works on may hold what a maker wrote and relay kept (a
``bin/git``), and the person's PATH may name it (direnv's ``PATH_add bin``, binstubs),
so the PATH recorded for the schedule too. Relay's own process never searches such a
folder: :func:`fence` takes the clone's folders (and any relative entry) off relay's own
PATH, and :func:`program` looks relay's programs up on what is left. The boxed gates and
roles still start from the PATH as it was, and from the recorded environment relay's own
process does not take (its PYTHON* variables): :func:`box_environ`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

_FENCES: list[Path] = []  # the clones whose folders relay's own process never searches
# what the boxes get over relay's own environment, and the PATH relay set for itself when
# it was handed (a PATH changed since, by a test in this process, is another's)
_BOX: dict[str, str] = {}
_BOX_FOR: list[str] = []
_FOUND: dict[tuple[str, str], str | None] = {}
_OWN: dict[tuple[str, tuple[Path, ...]], str] = {}


def _resolved(folder: str) -> Path:
    try:
        return Path(folder).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(folder))


def fenced(folder: str, fences: Sequence[Path]) -> bool:
    """Whether relay's own process must not search ``folder`` (a PATH entry): an empty or
    relative one (the working directory's, which is the clone's) or one inside a clone of
    ``fences`` (their resolved tops)."""
    return not folder or not os.path.isabs(folder) or fenced_at(folder, fences)


def fenced_at(folder: str, fences: Sequence[Path]) -> bool:
    """Whether ``folder`` (a sys.path entry; relative ones are the working directory's)
    lies inside a clone of ``fences``."""
    where = _resolved(folder or os.curdir)
    return any(where == f or where.is_relative_to(f) for f in fences)


def own_path(path: str, fences: Sequence[Path] | None = None) -> str:
    """``path`` without the entries relay's own process must not search (asked once for
    each PATH and set of clones: every git command relay runs asks)."""
    tops = tuple(_FENCES if fences is None else fences)
    key = (path, tops)
    if key not in _OWN:
        _OWN[key] = os.pathsep.join(p for p in path.split(os.pathsep) if not fenced(p, tops))
    return _OWN[key]


def work_tree_top(where: Path) -> Path:
    """The top of the work tree holding ``where`` (the nearest folder up with a ``.git``),
    found without running git; ``where`` itself when none holds it."""
    for folder in (where, *where.parents):
        if (folder / ".git").exists():
            return folder
    return where


def installed() -> tuple[Path, ...]:
    """The folders of relay's own installation, which its sys.path keeps whatever is
    fenced: the folder holding relay/, the standard library and the interpreter's
    site-packages (a virtual environment inside the clone is relay's own when relay runs
    from it)."""
    folders = [Path(__file__).resolve().parents[2], Path(os.__file__).resolve().parent]
    site = sys.modules.get("site")  # already imported at start-up (unless ``-S``)
    if site is not None:
        with_user = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
        folders += [_resolved(f) for f in [*site.getsitepackages(), *with_user]]
    return tuple(folders)


def kept(folder: str, mine: Sequence[Path]) -> bool:
    """Whether the sys.path entry ``folder`` is one of relay's installation ``mine``."""
    where = _resolved(folder or os.curdir)
    return any(where == m or (m != mine[0] and where.is_relative_to(m)) for m in mine)


def fence(root: Path) -> None:
    """Relay's own process never searches a folder of the clone holding ``root`` again
    (asked before git runs there or relay imports an optional module): its PATH and its
    sys.path lose them (the boxes keep the PATH as it was; relay's own package stays
    where it is imported from)."""
    top = work_tree_top(_resolved(str(root)))
    if top not in _FENCES:
        _FENCES.append(top)
    mine = installed()
    sys.path[:] = [p for p in sys.path if kept(p, mine) or not fenced_at(p, _FENCES)]
    path = os.environ.get("PATH", "")
    own = own_path(path)
    if own != path:
        handed = dict(_BOX) if [path] == _BOX_FOR else {}
        os.environ["PATH"] = own
        _BOX.clear()
        _BOX.update({"PATH": path, **handed})
        _BOX_FOR[:] = [own]


def fence_work_tree(where: Path) -> None:
    """:func:`fence` the work tree holding ``where``, when a work tree holds it (a folder
    outside every clone, the home folder or ``/``, is never fenced whole)."""
    if (work_tree_top(_resolved(str(where))) / ".git").exists():
        fence(where)


def fence_start(repo_dir: str | None, environ: Mapping[str, str] | None = None) -> None:
    """Fence what relay's own process searches before a verb's module is imported: the
    work tree of ``repo_dir`` (else of the working directory; none when neither is in a
    work tree), and every sys.path entry the PYTHONPATH or the working directory put there
    that is not relay's installation (a clone's ``src/`` holding a module named like an
    optional one a library tries)."""
    env = os.environ if environ is None else environ
    try:
        here = _resolved(os.getcwd())
    except OSError:  # the working directory was removed: nothing of it to search
        here = None
    where = _resolved(repo_dir) if repo_dir else here
    if where is not None:
        fence_work_tree(where)
    handed = {_resolved(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p}
    if here is not None:
        handed.add(here)
    mine = installed()
    sys.path[:] = [p for p in sys.path if kept(p, mine) or _resolved(p or os.curdir) not in handed]


def program(name: str) -> str:
    """``name`` (git, gh, crontab...) as relay's own process runs it: its absolute path on
    relay's own PATH outside every fenced clone, found once for that PATH; the bare name
    when it is not there (the call then says it is missing)."""
    path = own_path(os.environ.get("PATH", ""))
    key = (name, path)
    if key not in _FOUND:
        import shutil  # not at start-up: every verb imports this module before it runs

        _FOUND[key] = shutil.which(name, path=path) if path else None
    return _FOUND[key] or name


def own_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with a bare program name replaced by :func:`program`'s absolute path."""
    words = list(argv)
    if words and os.sep not in words[0] and "/" not in words[0]:
        words[0] = program(words[0])
    return words


def hand_to_boxes(env: Mapping[str, str]) -> None:
    """Keep ``env`` for the boxed gates and roles alone (over relay's own environment)."""
    if [os.environ.get("PATH", "")] != _BOX_FOR:
        _BOX.clear()
    _BOX.update(env)
    _BOX_FOR[:] = [os.environ.get("PATH", "")]


def box_environ() -> dict[str, str]:
    """The environment the boxed gates and roles start from: relay's own, with the PATH
    relay's own process dropped folders of and the recorded variables it does not take."""
    if [os.environ.get("PATH", "")] != _BOX_FOR:
        return dict(os.environ)
    return {**os.environ, **_BOX}
