"""The GitHub Actions adapter: what a workflow run was started for, read as Actions gives it.

Actions describes the run through environment variables and a JSON file (the event's
webhook payload at ``GITHUB_EVENT_PATH``). This module turns them into one frozen
:class:`ActionsContext`: which repository and API to talk to, with which token, and which
issue the event names, or ``None`` for a full pass (``schedule``, ``workflow_dispatch``).
It also decides, from the payload alone, whether the event can concern relay at all, so a
run started by an unrelated label or comment ends before it touches the network. Nothing
here performs I/O beyond reading that file and appending to the step summary.

GitHub docs: "Variables reference" (default environment variables), "Events that trigger
workflows", "Adding a job summary".

:func:`actions_pass` is the driver: it reads the context, ends at once for an event that is
not this node's, and otherwise runs the one pass every watcher runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relay.errors import ConfigError, RemoteProtocolError
from relay.protocol.labels import Label
from relay.protocol.wire import MARKER

if TYPE_CHECKING:
    from relay.edges.local import NodeState
    from relay.watchers.once import PassReport

DEFAULT_API_URL = "https://api.github.com"
FULL_PASS_EVENTS = frozenset({"schedule", "workflow_dispatch"})
ISSUE_EVENTS = frozenset({"issues", "issue_comment"})
LABEL_ACTIONS = frozenset({"labeled", "unlabeled"})
RELAY_LABELS = frozenset(label.value for label in Label)


@dataclass(frozen=True)
class ActionsContext:
    """One workflow run as relay sees it."""

    event_name: str
    repository: str
    api_url: str
    token: str = field(repr=False)
    issue_number: int | None
    concerns_relay: bool
    reason: str
    sender_login: str | None = None

    @property
    def full_pass(self) -> bool:
        """True when the pass must look at every open job, not one issue."""
        return self.concerns_relay and self.issue_number is None

    @property
    def owner(self) -> str:
        return self.repository.partition("/")[0]

    @property
    def repo(self) -> str:
        return self.repository.partition("/")[2]


@dataclass(frozen=True)
class Relevance:
    """Whether an event can concern relay, which issue it names, and why (for the summary)."""

    issue_number: int | None
    concerns_relay: bool
    reason: str


def _require(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(
            f"{name} is not set",
            hint="run inside a GitHub Actions job, or set it as Actions would",
        )
    return value


def load_event(path: str | Path) -> dict[str, Any]:
    """Read the event payload file; ConfigError if unreadable, RemoteProtocolError if not JSON."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read the event file {path}: {err.strerror}") from err
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise RemoteProtocolError(f"the event file {path} is not JSON: {err.msg}") from err
    if not isinstance(data, dict):
        raise RemoteProtocolError(f"the event file {path} does not hold a JSON object")
    return data


def _issue_fields(payload: Mapping[str, Any]) -> tuple[int | None, str, bool]:
    issue = payload.get("issue")
    if not isinstance(issue, Mapping):
        return None, "", False
    number = issue.get("number")
    body = issue.get("body")
    return (
        number if isinstance(number, int) and not isinstance(number, bool) else None,
        body if isinstance(body, str) else "",
        "pull_request" in issue,
    )


def relevance(event_name: str, payload: Mapping[str, Any]) -> Relevance:
    """Decide from the payload alone whether relay has anything to look at."""
    if event_name in FULL_PASS_EVENTS:
        return Relevance(None, True, f"{event_name}: full pass over the open jobs")
    if event_name not in ISSUE_EVENTS:
        return Relevance(None, False, f"{event_name} events do not concern relay")
    number, body, is_pull = _issue_fields(payload)
    action = payload.get("action")
    what = f"{event_name}.{action}" if isinstance(action, str) else event_name
    if number is None:
        return Relevance(None, False, f"{what}: the payload names no issue")
    if is_pull:
        return Relevance(number, False, f"{what} on pull request #{number}: not a relay job")
    if MARKER not in body:
        return Relevance(number, False, f"{what} on #{number}: not a relay job")
    if action in LABEL_ACTIONS:
        label = payload.get("label")
        name = label.get("name") if isinstance(label, Mapping) else None
        if name not in RELAY_LABELS:
            return Relevance(number, False, f"{what} on #{number}: {name!r} is not a relay label")
    return Relevance(number, True, f"{what} on #{number}")


def read_context(
    environ: Mapping[str, str] | None = None, *, event_path: str | Path | None = None
) -> ActionsContext:
    """Build the context from Actions' variables; `event_path` overrides GITHUB_EVENT_PATH.

    Raises ConfigError when a variable Actions always sets is missing, and
    RemoteProtocolError when the event file is not a JSON object.
    """
    env = os.environ if environ is None else environ
    event_name = _require(env, "GITHUB_EVENT_NAME")
    repository = _require(env, "GITHUB_REPOSITORY")
    owner, _, name = repository.partition("/")
    if not owner or not name or "/" in name:
        raise ConfigError(f"GITHUB_REPOSITORY {repository!r} is not OWNER/NAME")
    token = _require(env, "GITHUB_TOKEN")
    path = event_path if event_path is not None else _require(env, "GITHUB_EVENT_PATH")
    payload = load_event(path)
    found = relevance(event_name, payload)
    sender = payload.get("sender")
    login = sender.get("login") if isinstance(sender, Mapping) else None
    return ActionsContext(
        event_name=event_name,
        repository=repository,
        api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
        token=token,
        issue_number=found.issue_number,
        concerns_relay=found.concerns_relay,
        reason=found.reason,
        sender_login=login if isinstance(login, str) else None,
    )


def write_step_summary(text: str, environ: Mapping[str, str] | None = None) -> bool:
    """Append markdown to the job summary; False (and nothing written) outside Actions."""
    path = (os.environ if environ is None else environ).get("GITHUB_STEP_SUMMARY", "")
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as summary:
        summary.write(text if text.endswith("\n") else text + "\n")
    return True


def summary_line(context: ActionsContext, *, node: str) -> str:
    """One markdown line saying what this run was for, to open the step summary."""
    verdict = "handled" if context.concerns_relay else "skipped"
    return f"**relay node `{node}`** ({context.repository}): {verdict}: {context.reason}"


async def actions_pass(
    *, repo_dir: Path | None, node: str | None, event_path: str | None
) -> PassReport | None:
    """One pass for a GitHub Actions run; None (and no request sent) when the event does not
    concern this node. The step summary says which, either way."""
    import dataclasses
    import os

    from relay.edges.github.credentials import Token
    from relay.node.context import open_node
    from relay.protocol.thread import binds
    from relay.watchers.once import run_pass

    actions = read_context(event_path=event_path)
    if not actions.concerns_relay:
        _skipped(actions, node or os.environ.get("RELAY_NODE") or "?")
        return None
    ctx = open_node(repo_dir=repo_dir, node=node, api=actions.api_url)
    install_node_key(ctx.state, ctx.node)
    if actions.issue_number is not None:
        issue = load_event(event_path or os.environ["GITHUB_EVENT_PATH"]).get("issue", {})
        author = int((issue.get("user") or {}).get("id") or 0)
        body = str(issue.get("body") or "")
        number = actions.issue_number
        if not binds(body, ctx.node, author=author, master=ctx.master, issue=number):
            why = f"#{actions.issue_number} is a job of other nodes"
            _skipped(dataclasses.replace(actions, concerns_relay=False, reason=why), ctx.node)
            return None
    # A node that is a GitHub App acts with its installation token (its moves wake other
    # workflows); otherwise with the token the workflow gave.
    token = None if ctx.app is not None else Token(actions.token, "GITHUB_TOKEN")
    report = await run_pass(
        ctx, issue=actions.issue_number, token=token, find_account=token is not None
    )
    lines = [summary_line(actions, node=ctx.node), *report.lines]
    acting = untrusted_login(report.lines)
    if acting is not None:
        lines.append(UNTRUSTED_HELP.format(node=ctx.node, login=acting))
    exposed = key_exposed()
    if exposed is not None:
        print(f"::warning::{exposed}")
        lines.append(f"\n**Warning:** {exposed}")
    write_step_summary("\n".join(lines))
    return report


NODE_KEY_ENV = "RELAY_NODE_KEY"


def install_node_key(state: NodeState, node: str, environ: Mapping[str, str] | None = None) -> bool:
    """A runner starts with no local state, so the node's signing key comes from the
    RELAY_NODE_KEY secret (the content of the key file `relay join` made for the node):
    it is put where the node keeps it, readable by this user only. True when installed;
    ConfigError when the secret holds no key. A key already there is kept."""
    import base64
    import binascii

    from relay.edges.files import write_state

    text = (os.environ if environ is None else environ).get(NODE_KEY_ENV, "").strip()
    if not text or state.signing_key_path(node).exists():
        return False
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise ConfigError(
            f"{NODE_KEY_ENV} does not hold a signing key",
            hint="store the content of the node's key file (one base64 line) as the secret",
        )
    write_state(state.signing_key_path(node), text.encode() + b"\n", top=state.root)
    return True


def key_exposed(environ: Mapping[str, str] | None = None) -> str | None:
    """What to say when the node key reaches a job that names no environment (a copy of an
    older workflow): any pusher's workflow could read it. None when it does not."""
    from relay.watchers.actions_environment import ENVIRONMENT_ENV, verdict

    env = os.environ if environ is None else environ
    name = env.get(ENVIRONMENT_ENV, "").strip()
    if name or not env.get(NODE_KEY_ENV, "").strip():
        return None
    _, _, detail, fix = verdict(environment="", has_key=True, found=None)
    return f"{detail}; {fix}"


def untrusted_login(lines: list[str]) -> str | None:
    """The account a pass acted as when the job's nodes do not trust it (from the pass's
    own words), else None."""
    import re

    for line in lines:
        found = re.search(r"acts as (\S+), which is not an instruction account", line)
        if found:
            return found.group(1)
    return None


UNTRUSTED_HELP = (
    "\n**This run acted as `{login}`, an account the job's nodes do not trust, so it did"
    " nothing** (it said so once in the job's thread). The workflow's own `GITHUB_TOKEN`"
    " acts as `github-actions[bot]`, which no node table lists. To fix it, either:\n\n"
    "1. make the node a GitHub App (the default; see the README's \"A GitHub Actions runner"
    ' as a node"): set the variables `RELAY_APP_ID` and `RELAY_APP_INSTALLATION_ID` and the'
    " secret `RELAY_APP_PRIVATE_KEY`, and list the App's bot account for `{node}`; or\n"
    "2. store a token of an account that `{node}`'s row lists as the `RELAY_TOKEN` secret;"
    " or\n"
    "3. list `{login}` for the node: `relay join --node {node} --accounts ...` on a machine"
    " with a clone, which commits the row."
)


def _skipped(actions: ActionsContext, node: str) -> None:
    print(f"relay watch: nothing to do ({actions.reason})")
    write_step_summary(summary_line(actions, node=node))
