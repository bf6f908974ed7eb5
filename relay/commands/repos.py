"""Naming a repository and an issue as gh does: ``-R OWNER/NAME``; ``12``, ``#12`` or the
issue's URL.

``-R`` chooses the clone a verb acts in: the current one when it is a clone of that
repository, else the one that joined it on this machine (remembered by `relay join`; of
several, the one ``--node`` names), else one line saying what to do. An issue's URL
names its repository too, and must name the one the verb acts on. Nothing here talks to the network.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from relay.edges.ownpath import program
from relay.errors import LocalUsageError

SLUG = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
CLONES_FILE = "clones.json"  # under the user data directory: OWNER/NAME -> clones that joined


class IssueNumber(int):
    """An issue number as typed; ``repo`` is the OWNER/NAME its URL named (None for 12 or
    #12), ``typed`` the words as given, for messages."""

    repo: str | None
    typed: str

    def __new__(cls, number: int, *, repo: str | None = None, typed: str = "") -> IssueNumber:
        made = super().__new__(cls, number)
        made.repo = repo
        made.typed = typed or str(number)
        return made


def issue_number(text: str) -> IssueNumber:
    """argparse type: ``12``, ``#12`` or ``https://HOST/OWNER/NAME/issues/12``."""
    word = text.strip()
    digits = word.removeprefix("#")
    if digits.isdigit() and int(digits) >= 1:
        return IssueNumber(int(digits), typed=word)
    parts = urlsplit(word)
    path = [p for p in parts.path.split("/") if p]
    if parts.scheme in ("http", "https") and len(path) >= 4:
        owner, name, kind, number = path[-4:]
        if kind == "issues" and number.isdigit() and int(number) >= 1:
            return IssueNumber(int(number), repo=f"{owner}/{name}", typed=word)
    raise argparse.ArgumentTypeError(
        f"{text!r} is not an issue: give its number (12 or #12) or its URL"
        " (https://github.com/OWNER/NAME/issues/12)"
    )


def repo_slug(text: str) -> str:
    """argparse type: OWNER/NAME."""
    word = text.strip().removesuffix(".git")
    if not SLUG.fullmatch(word):
        raise argparse.ArgumentTypeError(f"{text!r} is not OWNER/NAME, e.g. octo/proj")
    return word


def add_repo_flag(p: argparse.ArgumentParser, *, any_clone: bool = False) -> None:
    """``-R/--repo OWNER/NAME``: act on that repository's clone (see :func:`find_clone`);
    ``any_clone``: the verb only reads, as no node, so any joined clone will do."""
    p.add_argument(
        "-R",
        "--repo",
        type=repo_slug,
        default=None,
        metavar="OWNER/NAME",
        help="the repository to act on: this clone if it is one, else a clone that joined it",
    )
    p.set_defaults(find_clone=True, any_clone=any_clone)


def saved_clones_path() -> Path:
    """Where `relay join` remembers the clones that joined (the user's data directory)."""
    import platformdirs

    return platformdirs.user_data_path("relay", appauthor=False) / CLONES_FILE


def saved_clones() -> dict[str, list[str]]:
    """OWNER/NAME (lower case) -> the clones that joined it, as remembered."""
    try:
        doc = json.loads(saved_clones_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found = doc.get("clones", {}) if isinstance(doc, dict) else {}
    return {
        str(k): [str(p) for p in v if isinstance(p, str)]
        for k, v in found.items()
        if isinstance(v, list)
    }


def remember_clone(root: Path, repo: str) -> None:
    """Remember that ``root`` is a clone of ``repo`` that joined (best effort: a read-only
    home only means ``-R`` cannot find it from elsewhere)."""
    path = saved_clones_path()
    clones = saved_clones()
    key = repo.lower()
    kept = [p for p in clones.get(key, []) if p != str(root) and Path(p).is_dir()]
    clones[key] = [str(root), *kept]
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = path.with_name(f".{path.name}.{os.getpid()}")
        fresh.write_text(json.dumps({"version": 1, "clones": clones}, indent=1), "utf-8")
        os.replace(fresh, path)


def clone_repos(root: Path) -> set[str]:
    """The OWNER/NAMEs (lower case) a clone is known by: its joined node's, its master
    section's and its origin's."""
    from relay.edges.git import parse_remote_url
    from relay.edges.local import NodeState
    from relay.errors import RelayError

    found: set[str] = set()
    with contextlib.suppress(RelayError, ValueError, OSError):
        config = NodeState.for_clone(root).load_config()
        if config is not None and config.repo:
            found.add(config.repo.lower())
    with contextlib.suppress(RelayError, ValueError, OSError):
        from relay.node.spine import read_master

        found.add(read_master(root).repository.lower())
    with contextlib.suppress(Exception):
        import subprocess

        url = subprocess.run(
            [program("git"), "-C", str(root), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout
        slug = parse_remote_url(url)
        if slug is not None:
            found.add(str(slug).lower())
    return found


def wanted_repo(args: argparse.Namespace) -> str | None:
    """The repository the line names: ``-R``, else an issue URL's; both must agree."""
    wanted: str | None = getattr(args, "repo", None)
    ref = getattr(args, "issue", None)
    named = ref.repo if isinstance(ref, IssueNumber) else None
    if wanted and named and wanted.lower() != named.lower():
        raise LocalUsageError(
            f"issue {ref.typed} is in {named}, not in {wanted}",  # type: ignore[union-attr]
            hint=f"give -R {named}, or that repository's issue number",
        )
    return wanted or named


def joined_clones(wanted: str) -> list[tuple[Path, str | None]]:
    """The clones of ``wanted`` that joined on this machine, newest first, each with the
    node it joined as (None: not known)."""
    from relay.edges.local import NodeState

    found: list[tuple[Path, str | None]] = []
    for saved in saved_clones().get(wanted.lower(), []):
        path = Path(saved)
        if any(path == p for p, _ in found) or not path.is_dir():
            continue
        if wanted.lower() not in clone_repos(path):
            continue
        node = None
        with contextlib.suppress(Exception):
            config = NodeState.for_clone(path).load_config()
            node = config.node if config is not None else None
        found.append((path, node))
    return found


def _choose(
    args: argparse.Namespace, wanted: str, found: list[tuple[Path, str | None]]
) -> list[tuple[Path, str | None]]:
    """Of several joined clones, the one ``--node`` names; else one line naming them all
    (acting as whichever joined last would be a guess at which node the person meant)."""
    node = getattr(args, "node", None)
    if node:
        mine = [(p, n) for p, n in found if n == node]
        if mine:
            return mine[:1]
    listed = ", ".join(f"{p} (node {n or '?'})" for p, n in found)
    nodes = [n for _, n in found if n]
    if node:
        raise LocalUsageError(
            f"no clone of {wanted} joined on this machine as node {node!r}: {listed}",
            hint=f"give --node {' or --node '.join(nodes) or 'NAME'}, or run relay in the clone",
        )
    choose = (
        f"add --node {' or --node '.join(nodes)} to choose one, "
        if hasattr(args, "node") and nodes
        else ""
    )
    raise LocalUsageError(
        f"{len(found)} clones of {wanted} joined on this machine: {listed}",
        hint=f"{choose}run relay in the clone you mean, or pass --repo-dir PATH",
    )


def find_clone(args: argparse.Namespace) -> None:
    """Point ``args.repo_dir`` at a clone of the repository the line names (``-R`` or an
    issue URL): --repo-dir if it is one, else this clone, else the one that joined it here
    (of several, the one --node names, else the line is refused, naming them; a verb that
    only reads takes the newest)."""
    from relay.edges.statefile import clone_root
    from relay.errors import RelayError

    wanted = wanted_repo(args)
    if not wanted:
        return
    if args.repo_dir is not None:
        root = clone_root(args.repo_dir)
        if wanted.lower() not in clone_repos(root):
            known = ", ".join(sorted(clone_repos(root))) or "no repository relay knows"
            ref = getattr(args, "issue", None)
            if not getattr(args, "repo", None) and isinstance(ref, IssueNumber):
                raise LocalUsageError(
                    f"issue {ref.typed} is in {wanted}, but {args.repo_dir} is a clone of {known}",
                    hint=f"give an issue of {known} (its number, or its URL)",
                )
            raise LocalUsageError(
                f"{args.repo_dir} is a clone of {known}, not of {wanted}",
                hint=f"drop --repo-dir to find a clone of {wanted}, or drop -R",
            )
        return
    here = None
    with contextlib.suppress(RelayError):
        here = clone_root(Path.cwd())
    if here is not None and wanted.lower() in clone_repos(here):
        args.repo_dir = here
        return
    found = joined_clones(wanted)
    if len(found) > 1 and not getattr(args, "any_clone", False):
        found = _choose(args, wanted, found)
    if found:
        args.repo_dir = found[0][0]
        return
    names = sorted(clone_repos(here)) if here is not None else []
    this = f" (this clone is {', '.join(names)})" if names else ""
    raise LocalUsageError(
        f"no clone of {wanted} here or joined on this machine{this}",
        hint=f"clone {wanted} and run relay in it (`relay join` there lets -R find it),"
        " or pass --repo-dir PATH",
    )
