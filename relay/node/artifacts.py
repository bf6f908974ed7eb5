"""The artifacts a TASK names, from the worker's clone to its RESULT: found inside the
clone only, each read once; text redacted before it is committed, binary recorded by
size and hash; and any file name brought back under one a RESULT can carry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from relay.protocol import Artifact, TaskMsg

if TYPE_CHECKING:
    from relay.node.context import NodeContext
    from relay.node.execute import TaskRun
    from relay.redact import Redactor


@dataclass(frozen=True)
class Found:
    """One artifact file as the worker found it (``data`` is None when it was too large
    to bring back: then only its size and hash travel)."""

    path: str
    size: int
    sha256: str
    data: bytes | None


ARTIFACT_CAP = 5 * 1024 * 1024  # bytes of one artifact brought back; larger: hash only
MAX_ARTIFACTS = 50


def find_artifacts(root: Path, globs: tuple[str, ...]) -> tuple[tuple[Found, ...], tuple[str, ...]]:
    """The files inside ``root`` that the TASK's globs name (never under .git, never a
    link out of the clone), each read once; and the globs that matched nothing."""
    import hashlib

    base = root.resolve()
    seen: dict[str, Found] = {}
    unmatched: list[str] = []
    for pattern in globs:
        hits = [p for p in sorted(root.glob(pattern)) if p.is_file()]
        kept = 0
        for path in hits:
            real = path.resolve()
            if not real.is_relative_to(base) or ".git" in real.relative_to(base).parts:
                continue
            rel = real.relative_to(base).as_posix()
            kept += 1
            if rel in seen or len(seen) >= MAX_ARTIFACTS:
                continue
            size = real.stat().st_size
            data: bytes | None = None
            if size <= ARTIFACT_CAP:
                data = real.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
            else:
                with real.open("rb") as f:
                    digest = hashlib.file_digest(f, "sha256").hexdigest()
            seen[rel] = Found(rel, size, digest, data)
        if not kept:
            unmatched.append(pattern)
    return tuple(seen.values()), tuple(unmatched)


def bring_back(
    ctx: NodeContext, task: TaskMsg, run: TaskRun, redactor: Redactor
) -> tuple[tuple[Artifact, ...], tuple[tuple[str, bytes], ...], list[str]]:
    """The TASK's artifacts for the RESULT: text redacted and committed (withheld, by size
    and hash only, when it cannot be made safe); anything else recorded by size and
    sha256, and committed only when the master section allows binary artifacts. Returns
    the records, the files to commit and what to say about the rest."""
    from relay.protocol.wire import show_controls
    from relay.protocol.work import artifact_path

    records: list[Artifact] = []
    files: list[tuple[str, bytes]] = []
    commit_binary = ctx.master.scope.binary_artifacts == "commit"
    for item, name in zip(run.found, _names(run.found, redactor), strict=True):
        text = _as_text(item.data)
        where = artifact_path(task.issue, task.task, name)
        said: list[str] = []
        if item.data is None:
            said.append(f"over {ARTIFACT_CAP // (1024 * 1024)} MiB: recorded by size and hash only")
        elif text is not None:
            cleaned, report = redactor.redact_with_report(text)
            if report.safe:
                files.append((where, cleaned.encode("utf-8")))
            else:
                said.append(f"withheld: {report.reason}")
        elif commit_binary and not _holds_secret(item.data, redactor):
            files.append((where, item.data))
        elif commit_binary:
            said.append("withheld: it holds what redaction removes, and binary cannot be redacted")
        if name != item.path:  # its own name, shown and redacted, after what happened
            said.append(f"its name: {redactor.redact(show_controls(item.path))}")
        note = redactor.redact("; ".join(said))
        records.append(
            Artifact(
                path=name,
                size=item.size,
                sha256=item.sha256,
                text=text is not None,
                note=note[:300],
            )
        )
    unmatched = [f"The artifact {code!r} matched no file." for code in run.unmatched]
    return tuple(records), tuple(files), unmatched + list(run.problems)


def _names(found: tuple[Found, ...], redactor: Redactor) -> list[str]:
    """The name each artifact travels under: its own path when that is safe to show and a
    RESULT can carry it; a path redaction changes says who or where, so it becomes
    ``artifact-N``; any other character is replaced, never taking another file's name."""
    from pathlib import PurePosixPath

    from relay.protocol.wire import show_controls
    from relay.protocol.work import safe_artifact_name

    wanted = []
    for number, item in enumerate(found, start=1):
        shown = show_controls(item.path)  # a name that is not UTF-8 is redacted as shown
        name = item.path
        if redactor.redact(shown) != shown:
            name = f"artifact-{number}{PurePosixPath(item.path).suffix}"
        wanted.append(name)
    plain = {n for i, n in enumerate(wanted, 1) if safe_artifact_name(n, number=i) == n}
    names: list[str] = []
    for number, name in enumerate(wanted, start=1):
        if name not in plain:
            name = safe_artifact_name(name, number=number, taken=plain | set(names))
        names.append(name)
    return names


def _as_text(data: bytes | None) -> str | None:
    """The file as text when it is text in any encoding a step's output may have (UTF-8,
    UTF-16 as PowerShell writes it, the console's or a fallback code page); None: binary."""
    if data is None:
        return None
    from relay.edges.console import as_text, console_codepages

    return as_text(data, codepages=console_codepages())


def _holds_secret(data: bytes, redactor: Redactor) -> bool:
    """Whether a binary file shows anything redaction would remove, read as bytes and as
    UTF-16 text (both byte orders): such a file is never committed raw."""
    views = [data.decode("latin-1")]
    views += [data[i:].decode("utf-16-le", errors="replace") for i in (0, 1)]
    return any(redactor.redact_with_report(view)[1].counts for view in views)
