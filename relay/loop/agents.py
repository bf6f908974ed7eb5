"""The roles' commands, decided purely: which built-in agent adapter a role names
(``--maker claude``, ``--checker codex:review``), the argv that turns a brief into that
CLI's headless invocation, what its output says (its final message, whether it used tools,
a rate limit or a usage wall with its reset time), and the exit-code contract any other
command follows.

Ground rules: only what the CLI itself reports counts as a signal: its result object, its
error events, its exit code; text that merely appears in what an agent printed while it
worked (a test named ``test_rate_limiter``, a log line saying 503) is data, never a
transient failure. A plain command speaks only through its exit code: 0 done, 3 cannot do
this (the reason in the file the brief names), 75 transient, 75 with a
``RELAY_LOOP_RESET_AT=<time>`` line a usage wall. ``now`` is always given, never read.
"""

from __future__ import annotations

import enum
import json
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from relay.loop.classify import TRANSIENT_EXIT
from relay.loop.patterns import later
from relay.loop.resume import HORIZON, named_zone, reset_time

AGENTS = ("claude", "codex", "gemini", "aider")
MODES = ("make", "review")
CANNOT_EXIT = 3  # "cannot do this": the reason is in the file RELAY_LOOP_CANNOT names
RESET_AT = "RELAY_LOOP_RESET_AT"
CANNOT_ENV = "RELAY_LOOP_CANNOT"
_SPEC = re.compile(rf"^({'|'.join(AGENTS)})(?::({'|'.join(MODES)}))?$")
_RESET_LINE = re.compile(rf"^\s*{RESET_AT}\s*=\s*(\S+)\s*$", re.MULTILINE)
# what the CLIs' own error reports say about an interruption (read only from the error
# they report, never from the agent's work)
_TRANSIENT = later(
    r"\b(?:429|503|529)\b|overloaded|rate[ _-]?limit|too many requests"
    r"|resource[ _]exhausted|quota|temporarily unavailable|service unavailable",
    re.IGNORECASE,
)
_WALL = later(
    r"usage limit|hit your (?:usage )?limit|limit reached|quota|resource[ _]exhausted"
    r"|rate[ _-]?limit|too many requests|\b429\b",
    re.IGNORECASE,
)
_CLAUDE_EPOCH = later(r"usage limit reached\|(\d{9,11})", re.IGNORECASE)
_CODEX_TOOLS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})


class Signal(enum.StrEnum):
    """What a role's run amounts to, before its work is judged."""

    DONE = "done"  # it ran to the end; judge what it left
    FAILED = "failed"  # it failed (a crash): an attempt spent
    CANNOT = "cannot"  # it says it cannot do this: the goal goes to a person, no strike
    TRANSIENT = "transient"  # interrupted (rate limit, overload): retried, nothing spent
    WALL = "wall"  # a usage wall with a reset time: the run pauses until then
    STOPPED = "stopped"  # a person stopped it (`relay loop interrupt`): the goal reopens, no strike


@dataclass(frozen=True)
class Agent:
    """A built-in adapter: the CLI and whether it makes or reviews."""

    name: str
    mode: str


@dataclass(frozen=True)
class Invocation:
    """How to run a role: the argv and the file its standard input reads (the brief)."""

    argv: tuple[str, ...]
    stdin: str | None


@dataclass(frozen=True)
class Reading:
    """What a role's run said: its signal, why, the reset time of a wall, its final message
    (what a review is read from) and how many tools it used (None: the CLI does not say)."""

    signal: Signal
    what: str
    until: datetime | None = None
    text: str = ""
    tools: int | None = None


def parse_role(spec: str) -> Agent | None:
    """The adapter a role's command names (``claude``, ``codex:review``), or None for any
    other command, which runs as it is."""
    match = _SPEC.match(spec.strip())
    if match is None:
        return None
    return Agent(match.group(1), match.group(2) or "")


def mode_for(agent: Agent, *, maker: bool) -> Agent:
    """The adapter with its mode settled: a maker makes, every other role reviews."""
    return agent if agent.mode else Agent(agent.name, "make" if maker else "review")


# each CLI's flag for the model it runs (the roster's ``Model:``)
MODEL_FLAGS = {"claude": "--model", "codex": "--model", "gemini": "--model", "aider": "--model"}


def invocation(agent: Agent, brief: str, *, history: str, model: str | None = None) -> Invocation:
    """The CLI's headless invocation for ``brief`` (a file path): the brief is its
    standard input (no argument-length limit), its output the structured form it has.
    ``history`` is a directory outside the work tree for what a CLI keeps of a session;
    ``model`` is passed with the CLI's own model flag."""
    review = agent.mode == "review"
    chosen = [MODEL_FLAGS[agent.name], model] if model else []
    if agent.name == "claude":
        tools = "Read,Grep,Glob" if review else "Read,Grep,Glob,Edit,Write,Bash"
        argv = ["claude", "-p", "--output-format", "stream-json", "--verbose", *chosen]
        argv += ["--allowedTools", tools]
        argv += ["--permission-mode", "default" if review else "acceptEdits"]
        return Invocation(tuple(argv), brief)
    if agent.name == "codex":
        sandbox = "read-only" if review else "workspace-write"
        argv = ["codex", "exec", "--json", *chosen, "--sandbox", sandbox]
        argv += ["--skip-git-repo-check", "-"]
        return Invocation(tuple(argv), brief)
    if agent.name == "gemini":
        prompt = "Follow the brief given on standard input."
        argv = ["gemini", "-p", prompt, "--output-format", "json", *chosen]
        argv += ["--approval-mode", "default" if review else "auto_edit"]
        return Invocation(tuple(argv), brief)
    argv = ["aider", *chosen, "--message-file", brief, "--yes-always", "--no-auto-commits"]
    argv += ["--no-gitignore", "--no-check-update", "--analytics-disable", "--no-pretty"]
    argv += ["--chat-history-file", f"{history}/aider.chat.md"]
    argv += ["--input-history-file", f"{history}/aider.input"]
    if review:
        argv += ["--chat-mode", "ask"]
    return Invocation(tuple(argv), None)


def command_line(inv: Invocation) -> str:
    """The invocation as one shell command line (POSIX quoting)."""
    line = " ".join(shlex.quote(a) for a in inv.argv)
    return line if inv.stdin is None else f"{line} < {shlex.quote(inv.stdin)}"


# --- where each CLI goes out to ---

# the hosts each CLI's work needs (its model API and its login's token refresh): a box
# lets its role out to these alone, on port 443, through relay's egress proxy
API_HOSTS: dict[str, tuple[str, ...]] = {
    "claude": ("api.anthropic.com", "console.anthropic.com", "platform.claude.com"),
    "codex": ("api.openai.com", "chatgpt.com", "auth.openai.com"),
    # named one by one: all of *.googleapis.com would let a role upload to any bucket
    "gemini": (
        "generativelanguage.googleapis.com",  # a Gemini API key's
        "cloudcode-pa.googleapis.com",  # a Google login's (Code Assist)
        "oauth2.googleapis.com",  # its token refresh
    ),
    "aider": (),  # per the model's provider: :func:`aider_hosts`
}
# the variables that point a CLI at another endpoint (a gateway, a proxy of the person's)
BASE_URL_ENV: dict[str, tuple[str, ...]] = {
    "claude": ("ANTHROPIC_BASE_URL",),
    "codex": ("OPENAI_BASE_URL",),
    "gemini": ("GOOGLE_GEMINI_BASE_URL",),
    "aider": ("OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_API_BASE"),
}
# aider's model providers (its model names' prefixes and aliases), the key that selects each
# when no model is named, and their hosts
_PROVIDERS: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...] = (
    (("anthropic/", "claude", "sonnet", "opus", "haiku"), "ANTHROPIC_API_KEY",
     ("api.anthropic.com",)),
    (("openai/", "gpt", "o1", "o3", "o4", "4o", "4", "3", "35turbo", "chatgpt"), "OPENAI_API_KEY",
     ("api.openai.com",)),
    (("gemini/", "gemini", "flash"), "GEMINI_API_KEY", ("generativelanguage.googleapis.com",)),
    (("deepseek", "r1"), "DEEPSEEK_API_KEY", ("api.deepseek.com",)),
    (("openrouter/",), "OPENROUTER_API_KEY", ("openrouter.ai",)),
    (("groq/",), "GROQ_API_KEY", ("api.groq.com",)),
    (("mistral/",), "MISTRAL_API_KEY", ("api.mistral.ai",)),
    (("xai/", "grok"), "XAI_API_KEY", ("api.x.ai",)),
    (("vertex_ai/",), "VERTEXAI_PROJECT", ("aiplatform.googleapis.com", "oauth2.googleapis.com")),
    (("bedrock/",), "AWS_BEDROCK_RUNTIME", ("*.amazonaws.com",)),
)  # fmt: skip


def api_hosts(
    agent: str, environ: Mapping[str, str], *, model: str | None = None
) -> tuple[str, ...]:
    """The hosts ``agent``'s CLI must reach for its work: its own (aider's: its model's
    provider's, or with no model every provider whose key ``environ`` holds), and the host
    of any base URL ``environ`` points it at (``https`` alone: a box's way out is CONNECT)."""
    found = list(API_HOSTS.get(agent, ()))
    if agent == "aider":
        found += aider_hosts(model, environ)
    if agent == "gemini" and environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
        found += vertex_hosts(environ)
    if agent == "aider" and any(h == "aiplatform.googleapis.com" for h in found):
        found += vertex_hosts(environ)
    for name in BASE_URL_ENV.get(agent, ()):
        host = url_host(environ.get(name, ""))
        if host is not None:
            found.append(host)
    return tuple(dict.fromkeys(found))


def vertex_hosts(environ: Mapping[str, str]) -> list[str]:
    """Vertex AI's endpoints: the global one and the location's the environment names."""
    location = (
        (environ.get("GOOGLE_CLOUD_LOCATION") or environ.get("VERTEXAI_LOCATION") or "")
        .strip()
        .lower()
    )
    regional = (
        [f"{location}-aiplatform.googleapis.com"] if location.replace("-", "").isalnum() else []
    )
    return ["aiplatform.googleapis.com", *regional, "oauth2.googleapis.com"]


def aider_hosts(model: str | None, environ: Mapping[str, str]) -> list[str]:
    """The hosts of aider's model provider: the one ``model`` names, else each whose key
    ``environ`` holds."""
    found: list[str] = []
    name = (model or "").strip().lower()
    for prefixes, key, hosts in _PROVIDERS:
        if name:
            bare = name.split("/", 1)[0] + ("/" if "/" in name else "")
            if any(name.startswith(p) if p.endswith("/") else bare.startswith(p) for p in prefixes):
                return list(hosts)
        elif environ.get(key, "").strip():
            found += hosts
    return found


def url_host(url: str) -> str | None:
    """``https://host[:port]/…`` as a listed host (``host``, or ``host:port`` off 443)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme != "https" or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if port in (None, 443):
        return host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# --- reading what a run said ---


def read_run(
    agent: Agent | None,
    *,
    exit_code: int | None,
    output: str,
    cannot: str | None,
    now: datetime,
    local: tzinfo = UTC,
) -> Reading:
    """What a role's run amounts to: through its adapter for a built-in agent, through the
    exit-code contract for any other command. ``cannot`` is the reason file's text, when
    the role wrote one; ``local`` is the zone a CLI's clock times without one are in."""
    if cannot is not None and cannot.strip():
        return Reading(Signal.CANNOT, cannot.strip().splitlines()[0][:300], text=output)
    if agent is None:
        return read_contract(exit_code=exit_code, output=output, now=now)
    if agent.name == "claude":
        return _claude(exit_code, output, now, local)
    if agent.name == "codex":
        return _codex(exit_code, output, now, local)
    if agent.name == "gemini":
        return _gemini(exit_code, output, now, local)
    return _aider(exit_code, output, now, local)


def read_contract(*, exit_code: int | None, output: str, now: datetime) -> Reading:
    """Any command's exit code, as the contract says: 0 done; 3 cannot do this; 75
    transient, or a usage wall when a ``RELAY_LOOP_RESET_AT=`` line says when it resets
    (ISO 8601, a zone or offset named or UTC, or epoch seconds); anything else failed."""
    if exit_code == 0:
        return Reading(Signal.DONE, "exit 0", text=output)
    if exit_code == CANNOT_EXIT:
        return Reading(Signal.CANNOT, "it exited 3 and gave no reason", text=output)
    if exit_code == TRANSIENT_EXIT:
        lines = _RESET_LINE.findall(output)
        until = _reset_at(lines[-1]) if lines else None
        if until is not None and now < until <= now + HORIZON:
            return Reading(Signal.WALL, f"exit {exit_code}", until=until, text=output)
        return Reading(Signal.TRANSIENT, f"exit {exit_code}", text=output)
    how = "it was stopped" if exit_code is None else f"exit {exit_code}"
    return Reading(Signal.FAILED, how, text=output)


def maker_failed(reading: Reading) -> str:
    """A failed maker run in one line: its exit code, or what its CLI reported."""
    if reading.what.startswith("exit "):
        return f"the maker exited {reading.what.removeprefix('exit ')}"
    return f"the maker failed: {reading.what}"


def _reset_at(value: str) -> datetime | None:
    """``RELAY_LOOP_RESET_AT``'s value: epoch seconds or ISO 8601, its offset or the zone
    it names in RFC 9557's brackets (``2026-12-02T06:00:00[Europe/Rome]``), else UTC."""
    if value.isdigit():
        return datetime.fromtimestamp(int(value), UTC)
    stamp, bracket, name = value.partition("[")
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo:
        return when
    if not bracket:
        return when.replace(tzinfo=UTC)
    zone = named_zone(name.rstrip("]"), UTC)
    return when.replace(tzinfo=zone) if zone is not None else None  # unknown: no guess


def _limited(
    said: str, *, who: str, exit_code: int | None, now: datetime, local: tzinfo
) -> Reading | None:
    """The CLI's own error report as a wall (a reset time it names) or an interruption."""
    epoch = _CLAUDE_EPOCH().search(said)
    until = datetime.fromtimestamp(int(epoch.group(1)), UTC) if epoch else None
    if until is None and _WALL().search(said):
        until = reset_time(said, now, local=local)
    if until is not None and now < until <= now + HORIZON:
        return Reading(Signal.WALL, f"{who} hit a usage limit (exit {exit_code})", until=until)
    if _TRANSIENT().search(said):
        return Reading(Signal.TRANSIENT, f"{who}: {_first_line(said)}")
    return None


def _first_line(text: str) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line[:200]


def _objects(output: str) -> Iterator[dict[str, object]]:
    """The JSON objects the output holds, one a line (JSONL) or one over several lines."""
    decoder = json.JSONDecoder()
    at = 0
    while True:
        start = output.find("{", at)
        if start < 0:
            return
        if start and output[start - 1] not in "\n":
            at = start + 1
            continue
        try:
            doc, end = decoder.raw_decode(output, start)
        except ValueError:
            at = start + 1
            continue
        if isinstance(doc, dict):
            yield doc
        at = end


def _outside_objects(output: str) -> str:
    """The output's lines that are not a JSON object of their own (a stream's events)."""
    kept = []
    for line in output.splitlines():
        if line.lstrip().startswith("{"):
            try:
                if isinstance(json.loads(line), dict):
                    continue
            except ValueError:
                pass
        kept.append(line)
    return "\n".join(kept)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _claude(exit_code: int | None, output: str, now: datetime, local: tzinfo) -> Reading:
    """Claude Code's ``--output-format json`` object or ``stream-json`` lines: the last
    ``{"type": "result", "subtype", "is_error", "result"}``; tool_use blocks in assistant
    messages are its tools."""
    result: dict[str, object] | None = None
    tools = 0
    for doc in _objects(output):
        if doc.get("type") == "result":
            result = doc
        message = doc.get("message")
        if doc.get("type") == "assistant" and isinstance(message, dict):
            content = message.get("content")
            if isinstance(content, list):
                tools += sum(
                    1 for c in content if isinstance(c, dict) and c.get("type") == "tool_use"
                )
    if result is None:
        # no result: only what the CLI printed itself (not the stream's messages, which
        # hold the model's words and its tools' output) can say it was limited, and a run
        # relay stopped (its timeout) was not
        plain = _outside_objects(output)
        limited = _limited(plain, who="claude", exit_code=exit_code, now=now, local=local)
        if limited is not None and exit_code not in (0, None):
            return limited
        how = "claude printed no result" + ("" if exit_code is None else f" (exit {exit_code})")
        return Reading(Signal.FAILED, how, text=output)
    said = _text(result.get("result"))
    errored = bool(result.get("is_error")) or str(result.get("subtype", "success")) != "success"
    limited = _limited(said, who="claude", exit_code=exit_code, now=now, local=local)
    if limited is not None and (errored or _CLAUDE_EPOCH().search(said)):
        return limited
    if errored or exit_code not in (0, None):
        what = f"claude ended {result.get('subtype', 'in error')}: {_first_line(said)}"
        return Reading(Signal.FAILED, what, text=said, tools=tools)
    if exit_code is None:
        return Reading(Signal.FAILED, "claude was stopped", text=said, tools=tools)
    return Reading(Signal.DONE, "claude finished", text=said, tools=tools)


def _codex(exit_code: int | None, output: str, now: datetime, local: tzinfo) -> Reading:
    """Codex's ``exec --json`` events: the last ``agent_message`` item is its answer,
    ``command_execution``/``file_change``/``mcp_tool_call`` items are its tools, and a
    ``turn.failed`` or ``error`` event carries its error."""
    text, tools, errors, completed = "", 0, [], False
    for doc in _objects(output):
        kind = doc.get("type")
        item = doc.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            if item.get("type") == "agent_message":
                text = _text(item.get("text"))
            elif item.get("type") in _CODEX_TOOLS:
                tools += 1
        elif kind == "turn.completed":
            completed = True
        elif kind == "turn.failed":
            error = doc.get("error")
            errors.append(_text(error.get("message")) if isinstance(error, dict) else "")
        elif kind == "error":
            errors.append(_text(doc.get("message")))
    said = "\n".join(e for e in errors if e)
    if said and not completed:
        limited = _limited(said, who="codex", exit_code=exit_code, now=now, local=local)
        if limited is not None:
            return limited
        return Reading(Signal.FAILED, f"codex failed: {_first_line(said)}", text=text, tools=tools)
    if exit_code == 0 and completed:
        return Reading(Signal.DONE, "codex finished", text=text, tools=tools)
    how = "codex was stopped" if exit_code is None else f"codex exited {exit_code}"
    return Reading(Signal.FAILED, how, text=text, tools=tools)


def _gemini(exit_code: int | None, output: str, now: datetime, local: tzinfo) -> Reading:
    """Gemini CLI's ``--output-format json`` object: ``{"response", "stats", "error"}``;
    ``stats.tools.totalCalls`` counts its tools; its exit codes are 0, 1 (API failure),
    42 (bad input) and 53 (turn limit)."""
    doc: dict[str, object] | None = None
    for found in _objects(output):
        if "response" in found or "error" in found or "stats" in found:
            doc = found
    if doc is None:
        if exit_code not in (0, None):
            limited = _limited(output, who="gemini", exit_code=exit_code, now=now, local=local)
            if limited is not None and re.search(r"\bapi error\b", output, re.IGNORECASE):
                return limited
        return Reading(Signal.FAILED, f"gemini printed no JSON (exit {exit_code})", text=output)
    text = _text(doc.get("response"))
    stats = doc.get("stats")
    tools = None
    if isinstance(stats, dict) and isinstance(stats.get("tools"), dict):
        calls = stats["tools"].get("totalCalls")
        tools = calls if isinstance(calls, int) else None
    error = doc.get("error")
    if isinstance(error, dict):
        said = " ".join(str(error.get(k, "")) for k in ("type", "code", "message"))
        limited = _limited(said, who="gemini", exit_code=exit_code, now=now, local=local)
        if limited is not None:
            return limited
        return Reading(Signal.FAILED, f"gemini failed: {_first_line(said)}", text=text, tools=tools)
    if exit_code == 0:
        return Reading(Signal.DONE, "gemini finished", text=text, tools=tools)
    why = {42: "bad input", 53: "turn limit exceeded"}.get(exit_code or 0, "")
    how = "gemini was stopped" if exit_code is None else f"gemini exited {exit_code} {why}"
    return Reading(Signal.FAILED, how.strip(), text=text, tools=tools)


_AIDER_ERROR = later(
    r"^.*litellm\.(?:RateLimitError|ServiceUnavailableError|APIError|InternalServerError)\b.*$",
    re.MULTILINE,
)


def _aider(exit_code: int | None, output: str, now: datetime, local: tzinfo) -> Reading:
    """Aider has no structured output: its litellm error lines are its signals (a
    ``litellm.RateLimitError`` or an overloaded ``APIError``); its text is the answer."""
    errors = "\n".join(m.group(0) for m in _AIDER_ERROR().finditer(output))
    if errors:
        limited = _limited(errors, who="aider", exit_code=exit_code, now=now, local=local)
        if limited is not None:
            return limited
    if exit_code == 0:
        return Reading(Signal.DONE, "aider finished", text=output)
    how = "aider was stopped" if exit_code is None else f"aider exited {exit_code}"
    return Reading(Signal.FAILED, how, text=output)


# --- what a role's command needs to exist ---


_BUILTINS = frozenset(
    {":", ".", "true", "false", "exec", "cd", "echo", "printf", "test", "[", "eval", "set"}
)


def program_of(command: str) -> str | None:
    """The program a role's command starts (the first word after ``NAME=value``
    assignments), None when the shell itself runs it; ValueError when it cannot be split."""
    words = list(_after_assignments(shlex.split(command)))
    if not words:
        raise ValueError("it is empty")
    first = words[0]
    return None if first in _BUILTINS else first


_INTERPRETERS = re.compile(
    r"^(sh|bash|dash|zsh|ksh|python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|ruby|perl|php|uv)$"
)
_INLINE = frozenset(("-c", "-e", "-m", "--eval", "-E", "eval", "-p", "--print"))


def script_of(command: str) -> str | None:
    """The script file a command hands to a known interpreter (``sh ./maker.sh``,
    ``python3 -u agent.py``, ``node maker.js``, ``uv run maker.py``), None when there is
    none (inline code, a module, another program); ValueError when it cannot be split."""
    words = list(_after_assignments(shlex.split(command)))
    if not words or not _INTERPRETERS.match(words[0].rsplit("/", 1)[-1]):
        return None
    rest = words[1:]
    if words[0].rsplit("/", 1)[-1] == "uv":
        if not rest or rest[0] != "run":
            return None
        rest = rest[1:]
    for word in rest:
        if word in _INLINE:
            return None
        if word.startswith("-"):
            continue
        return word
    return None


def _after_assignments(words: Sequence[str]) -> Iterator[str]:
    started = False
    for word in words:
        if not started and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            continue
        started = True
        yield word


def review_cites(review: str, diff: str) -> bool:
    """Whether a review cites the change: a ``path:line`` (or ``path`` line N) naming a
    file of ``diff`` and a line inside one of its hunks; for a file with no hunks (binary,
    a rename), naming the file is enough."""
    hunks = diff_hunks(diff)
    if not hunks:
        return True  # nothing to cite
    for path, ranges in hunks.items():
        if not ranges and path in review:
            return True
        pattern = re.compile(rf"{re.escape(path)}(?::|\s*(?:,\s*)?lines?\s+|#L)(\d+)")
        for match in pattern.finditer(review):
            line = int(match.group(1))
            if any(lo - 3 <= line <= hi + 3 for lo, hi in ranges):
                return True
    return False


def diff_hunks(diff: str) -> dict[str, list[tuple[int, int]]]:
    """Each file a unified diff changes, with its hunks' line ranges (old and new)."""
    files: dict[str, list[tuple[int, int]]] = {}
    current: str | None = None
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            parts = line.split(" b/", 1)
            current = parts[1] if len(parts) == 2 else None
            if current is not None:
                files.setdefault(current, [])
        elif line.startswith("+++ ") and line[4:] != "/dev/null":
            current = line[4:].removeprefix("b/")
            files.setdefault(current, [])
        elif line.startswith("@@") and current is not None:
            m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
            if m:
                for start, count in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
                    lo = int(start)
                    files[current].append((lo, lo + max(int(count or "1"), 1) - 1))
    return files
