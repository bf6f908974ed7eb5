"""The node state's plumbing that needs no models: where a clone's ``.git/relay/`` is, and
versioned JSON documents read and written whole.

Apart from :mod:`relay.edges.local` (whose records are pydantic models) so that the idle
pass (:mod:`relay.watchers.quiet`) finds the clone and reads its state without loading them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from relay.edges.files import write_state
from relay.errors import ConfigError

SCHEMA_VERSION = 1


def clone_root(start: Path) -> Path:
    """Return the top of the git clone containing ``start``; ConfigError outside a clone."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    raise ConfigError(f"{start} is not inside a git clone; run relay from a clone of the repo")


def git_dir(clone: Path) -> Path:
    """Return the clone's git directory, following a ``.git`` file (worktrees, submodules)."""
    dot = clone / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        text = dot.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (clone / target).resolve()
    raise ConfigError(f"{clone} has no usable .git; run relay from a clone of the repository")


def read_versioned(path: Path) -> dict[str, Any] | None:
    """Read a versioned JSON document; None when absent; ConfigError when unusable."""
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"node state file {path} is unreadable ({exc}); delete it") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), int):
        raise ConfigError(f"node state file {path} has no schema version; delete it")
    if doc["schema"] > SCHEMA_VERSION:
        raise ConfigError(f"node state file {path} was written by a newer relay; upgrade relay")
    return doc


def write_versioned(path: Path, body: dict[str, Any]) -> None:
    """Write ``body`` with the current schema version, atomically, as private node state
    (0600 in a 0700 directory)."""
    doc = {"schema": SCHEMA_VERSION, **body}
    write_state(path, json.dumps(doc, indent=1, sort_keys=True).encode())
