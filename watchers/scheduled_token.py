"""How a scheduled pass finds its token, and where its lines go when nothing keeps them.

A scheduled pass carries no token and runs without the shell's variables: it finds one
at run time (``gh auth token`` when gh answers it for the node's host, the OS keyring, the
node's token file). `relay doctor`
resolves the token the same way, so it checks the token scheduled passes will use, not
the one of the shell it runs in.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from relay.edges.github.credentials import Route, Token
from relay.errors import ConfigError
from relay.node.context import NodeContext
from relay.watchers.registration import WatcherRecord

# what gh also answers `gh auth token` from, set in a shell and never in a scheduler's entry
GH_SHELL_VARS = ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_CONFIG_DIR")
SAVE_TOKEN_HINT = "run `relay join --save-token` (or `--save-token keyring`) where relay works"


def token_route(ctx: NodeContext, record: WatcherRecord | None) -> tuple[bool, str]:
    """How a scheduled pass will find its token (it carries none), and whether it will: the
    routes of the one lookup order that such a pass has (no token variables from this
    shell, the entry's PATH for gh)."""
    from relay.errors import ConfigError

    path = ctx.state.token_path
    present = []
    for route in scheduled_routes(ctx, record):
        try:
            if route.present():
                present.append(route.name)
        except ConfigError as err:  # an unusable token file: say why
            return False, f"scheduled passes cannot use the token file: {err}"
    if not present:
        return False, (
            "a scheduled pass will find no token: run `relay join --save-token` (keeps the token"
            f" relay uses now in {path}, readable by you only) or log in with {gh_login(ctx)}"
        )
    locked = ""
    if runs_logged_out(record) and not any(name.startswith("the token file") for name in present):
        locked = (
            "; with nobody logged in the keychain is locked, and with it the keyring's and"
            " gh's token: `relay join --save-token` keeps one where such a pass finds it"
        )
    if present[0] == "`gh auth token`" and len(present) == 1:
        said = "scheduled passes ask `gh auth token` for their token (keep gh logged in)"
        return True, said + locked
    return True, "scheduled passes find their token through " + ", then ".join(present[:2]) + locked


def gh_login(ctx: NodeContext) -> str:
    """How to log gh in for this node's host (an installed gh said it has no token)."""
    from relay.edges.github.credentials import gh_hostname

    host = gh_hostname(ctx.api_url)
    return "`gh auth login`" if host == "github.com" else f"`gh auth login --hostname {host}`"


def runs_logged_out(record: WatcherRecord | None) -> bool:
    """Whether the entry runs passes with nobody logged in (S4U tasks, LaunchDaemons,
    lingering systemd timers can), where the OS keychain stays locked."""
    if record is None:
        return False
    return record.scheduler == "Task Scheduler" or record.at_boot


def scheduled_routes(ctx: NodeContext, record: WatcherRecord | None) -> list[Route]:
    """The token routes of a scheduled pass for this node: without this shell's token
    variables (relay's and gh's own), with the entry's PATH."""
    from relay.edges.github.credentials import TOKEN_ENV_VARS, token_routes

    shell_only = {*TOKEN_ENV_VARS, *GH_SHELL_VARS}
    env = {k: v for k, v in os.environ.items() if k not in shell_only}
    if record is not None:
        env["PATH"] = dict(record.entry["environment"]).get("PATH", env.get("PATH", ""))
    return token_routes(api_url=ctx.api_url, token_file=ctx.state.token_path, env=env, app=ctx.app)


def scheduled_token(ctx: NodeContext) -> Token:
    """The token of a scheduled pass (which carries none), or an error that says how to
    keep one where such a pass finds it."""
    try:
        return ctx.token()
    except ConfigError as err:
        raise ConfigError(
            f"a scheduled pass found no token for {ctx.api_url} ({err.message})",
            hint=SAVE_TOKEN_HINT,
        ) from err


def pass_token(ctx: NodeContext, record: WatcherRecord | None) -> Token:
    """The token a scheduled pass will find (see :func:`scheduled_routes`); ConfigError
    when none."""
    from relay.edges.github.credentials import first_token

    try:
        return first_token(scheduled_routes(ctx, record), api_url=ctx.api_url)
    except ConfigError as err:
        raise ConfigError(
            f"a scheduled pass will find no token ({err.message})", hint=SAVE_TOKEN_HINT
        ) from err


def append_log(path: Path, lines: Sequence[str]) -> None:
    """Append a pass's (already redacted) lines to its log, each stamped with the time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # a new log: private
    with open(fd, "a", encoding="utf-8") as handle:
        handle.writelines(f"{stamp} {line}\n" for line in lines)
