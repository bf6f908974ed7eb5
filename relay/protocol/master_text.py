"""Reading and editing the ``## Relay`` section inside the whole text of LOOP.md.

Edits are pure ``str -> str`` functions that touch only the lines they must (one inserted
row, one rewritten row, one replaced section), so a person's own text around and inside
the file survives byte for byte.
"""

from __future__ import annotations

import re

from relay.protocol.master import (
    SECTION_HEADING,
    Account,
    InvalidValue,
    Master,
    MasterSectionError,
    Node,
    Scope,
    build,
    render_master,
    render_node_row,
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ACCOUNT = re.compile(r"([A-Za-z0-9][A-Za-z0-9-]*(?:\[bot\])?)\s*\((\d+)\)")
_BULLET = re.compile(r"^\s*[-*]\s+([^:]+):\s*(.*?)\s*$")
_NO_SECTION = "docs/loop/LOOP.md has no '## Relay' section"


def _headings(lines: list[str]) -> list[tuple[int, str]]:
    """(index, stripped line) of every ATX heading line outside code fences."""
    found: list[tuple[int, str]] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if match:
            mark = match.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
        elif fence is None and re.match(r" {0,3}#{1,6}(\s|$)", line):
            found.append((index, line.strip()))
    return found


def _span(lines: list[str]) -> tuple[int, int] | None:
    """Line indices [start, end) of the ``## Relay`` section, or None."""
    heads = _headings(lines)
    for pos, (index, text) in enumerate(heads):
        if text == SECTION_HEADING:
            after = [i for i, t in heads[pos + 1 :] if re.match(r"#{1,2}(\s|$)", t)]
            return index, after[0] if after else len(lines)
    return None


def has_section(loop_text: str) -> bool:
    """Whether LOOP.md already has a ``## Relay`` section."""
    return _span(loop_text.splitlines(keepends=True)) is not None


def section_text(loop_text: str) -> str:
    """The text of the ``## Relay`` section; raises MasterSectionError when absent."""
    lines = loop_text.splitlines(keepends=True)
    span = _span(lines)
    if span is None:
        raise MasterSectionError(_NO_SECTION, hint="run `relay init` first")
    return "".join(lines[span[0] : span[1]])


def _subsections(section: str) -> dict[str, list[str]]:
    lines = section.splitlines()
    heads = [(i, t) for i, t in _headings(lines) if t.startswith("### ")]
    parts: dict[str, list[str]] = {}
    for pos, (index, text) in enumerate(heads):
        end = heads[pos + 1][0] if pos + 1 < len(heads) else len(lines)
        parts.setdefault(text[4:].strip().lower(), lines[index + 1 : end])
    return parts


def _bullets(lines: list[str]) -> dict[str, str]:
    found = (_BULLET.match(line) for line in lines)
    return {m.group(1).strip().lower(): m.group(2) for m in found if m}


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == "`" else value


def _words(value: str) -> tuple[str, ...]:
    if value.strip() in {"", "(none)"}:
        return ()
    return tuple(w.strip() for w in value.split(",") if w.strip())


def _patterns(value: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([^`]+)`", value))


def split_row(line: str) -> list[str]:
    """The cells of a markdown table row, stripped."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [cell.strip() for cell in inner.split("|")]


def _table(lines: list[str]) -> tuple[tuple[str, ...], list[tuple[int, list[str]]]]:
    """Header columns, the header's index, and (line index, cells) of each body row."""
    rows = [(i, line) for i, line in enumerate(lines) if line.lstrip().startswith("|")]
    if len(rows) < 2:
        raise MasterSectionError(
            "the node table in '## Relay' is missing", hint="restore its header row"
        )
    header = tuple(split_row(rows[0][1]))
    if header[0].lower() != "node":
        raise MasterSectionError("the node table's first column must be 'node'")
    return header, [(i, split_row(line)) for i, line in rows[2:]]


def _node(header: tuple[str, ...], cells: list[str]) -> Node:
    named = {h.lower(): c for h, c in zip(header, cells, strict=False)}
    accounts = tuple(
        build(Account, login=m.group(1), id=int(m.group(2)))
        for m in _ACCOUNT.finditer(named.get("instruction accounts", ""))
    )
    return build(
        Node,
        name=named.get("node", ""),
        os=named.get("os", ""),
        accounts=accounts,
        scheduler=named.get("scheduler", "") or "none",
        public_key=named.get("public key", ""),
    )


def parse_master(loop_text: str) -> Master:
    """The master section of LOOP.md's text.

    Raises MasterSectionError when the section or its parts are missing or malformed.
    """
    parts = _subsections(section_text(loop_text))
    try:
        repo = _bullets(parts["repository"])
        header, rows = _table(parts["nodes"])
        scope = _bullets(parts["shared scope"])
        return build(
            Master,
            repository=_unquote(repo["repository"]),
            api_url=_unquote(repo["api base url"]),
            data_branch=_unquote(repo["data branch"]) if repo.get("data branch") else None,
            nodes=tuple(_node(header, cells) for _, cells in rows),
            scope=build(
                Scope,
                delegable=_words(scope.get("delegable jobs", "")),
                allowed=_words(scope.get("workers may run", "")),
                destructive=scope.get("destructive steps", "authorized-by-human"),
                destructive_commands=_patterns(scope.get("destructive commands", "")),
                redact=_patterns(scope.get("extra redaction patterns", "")),
                redact_allow=_patterns(scope.get("allowed exceptions", "")),
                binary_artifacts=scope.get("binary artifacts", "record").strip() or "record",
            ),
            protocol_text="\n".join(parts.get("protocol", [])),
            **_watcher_prompt(parts),
        )
    except KeyError as err:
        raise MasterSectionError(
            f"the '## Relay' section lacks {err.args[0]!r}", hint="restore it from the template"
        ) from None
    except InvalidValue as err:
        raise MasterSectionError(f"the '## Relay' section is malformed: {err.message}") from None


def _watcher_prompt(parts: dict[str, list[str]]) -> dict[str, str]:
    """The agent's instructions when the section has them (older sections do not: then
    every node uses the default prompt)."""
    lines = parts.get("watcher instructions")
    text = "\n".join(lines or []).strip("\n")
    return {"watcher_prompt": text} if text else {}


def set_section(loop_text: str, master: Master) -> str:
    """LOOP.md with its ``## Relay`` section replaced by ``master`` (appended if absent)."""
    lines = loop_text.splitlines(keepends=True)
    span = _span(lines)
    rendered = render_master(master)
    if span is None:
        sep = "" if not loop_text else ("\n" if loop_text.endswith("\n") else "\n\n")
        return loop_text + sep + rendered
    tail = "".join(lines[span[1] :])
    return "".join(lines[: span[0]]) + rendered + ("\n" if tail else "") + tail


def _nodes_lines(loop_text: str) -> tuple[list[str], int, int]:
    """All lines (with their endings) and the [start, end) indices of the Nodes part."""
    lines = loop_text.splitlines(keepends=True)
    span = _span(lines)
    if span is None:
        raise MasterSectionError(_NO_SECTION, hint="run `relay init` first")
    inside = lines[span[0] : span[1]]
    heads = [(i, t) for i, t in _headings(inside) if t.startswith("### ")]
    for pos, (index, text) in enumerate(heads):
        if text[4:].strip().lower() == "nodes":
            end = heads[pos + 1][0] if pos + 1 < len(heads) else len(inside)
            return lines, span[0] + index + 1, span[0] + end
    raise MasterSectionError("the '## Relay' section has no '### Nodes' table")


def add_node(loop_text: str, node: Node) -> str:
    """LOOP.md with one row added after the node table's last row; all else is kept.

    Raises InvalidValue when a node of that name is already in the table.
    """
    lines, start, end = _nodes_lines(loop_text)
    part = [line.rstrip("\r\n") for line in lines[start:end]]
    header, rows = _table(part)
    if any(cells and cells[0] == node.name for _, cells in rows):
        raise InvalidValue(f"node {node.name!r} is already in the node table")
    table = [i for i, line in enumerate(part) if line.lstrip().startswith("|")]
    last = start + (rows[-1][0] if rows else table[1])
    newline = "\r\n" if lines[last].endswith("\r\n") else "\n"
    if not lines[last].endswith("\n"):
        lines[last] += newline
    lines.insert(last + 1, render_node_row(node, header) + newline)
    return "".join(lines)


def set_scheduler(loop_text: str, *, node: str, scheduler: str) -> str:
    """LOOP.md with one node's scheduler cell set; every other byte is kept.

    Raises InvalidValue when the node is not in the table or the value cannot be a cell.
    """
    checked = build(Node, name=node, scheduler=scheduler)
    return _set_cell(loop_text, node=node, column_name="scheduler", value=checked.scheduler)


def set_public_key(loop_text: str, *, node: str, keys: str) -> str:
    """LOOP.md with one node's ``public key`` cell set; every other byte is kept."""
    checked = build(Node, name=node, public_key=keys)
    return _set_cell(loop_text, node=node, column_name="public key", value=checked.public_key)


def set_accounts(loop_text: str, *, node: str, accounts: tuple[Account, ...]) -> str:
    """LOOP.md with one node's ``instruction accounts`` cell set (``relay join --accounts``
    on a node already in the table); every other byte is kept."""
    checked = build(Node, name=node, accounts=accounts)
    cell = ", ".join(str(a) for a in checked.accounts)
    return _set_cell(loop_text, node=node, column_name="instruction accounts", value=cell)


def _set_cell(loop_text: str, *, node: str, column_name: str, value: str) -> str:
    lines, start, end = _nodes_lines(loop_text)
    header, rows = _table([line.rstrip("\r\n") for line in lines[start:end]])
    column = next((i for i, h in enumerate(header) if h.lower() == column_name), None)
    match = next((r for r in rows if r[1] and r[1][0] == node), None)
    if match is None or column is None:
        raise InvalidValue(f"node {node!r} is not in the node table", hint="run `relay join`")
    cells = match[1] + [""] * (len(header) - len(match[1]))
    cells[column] = value
    line = lines[start + match[0]]
    ending = line[len(line.rstrip("\r\n")) :]
    lines[start + match[0]] = "| " + " | ".join(cells) + " |" + ending
    return "".join(lines)
