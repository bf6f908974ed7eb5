"""How a scheduled pass finds its token, and where its lines go when nothing keeps them.

A scheduled pass carries no token and runs without the shell's variables: it finds one
at run time (``gh auth token``, the OS keyring, the node's token file). `relay doctor`
resolves the token the same way, so it checks the token scheduled passes will use, not
the one of the shell it runs in.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from relay.edges.github.credentials import Token
from relay.errors import ConfigError
from relay.node.context import NodeContext
from watchers.registration import WatcherRecord

SAVE_TOKEN_HINT = "run `relay join --save-token` (or `--save-token keyring`) where relay works"


def token_route(ctx: NodeContext, record: WatcherRecord | None) -> tuple[bool, str]:
    """How a scheduled pass will find its token (it carries none), and whether it will."""
    import shutil

    from relay.edges.github.credentials import read_token_file
    from relay.errors import ConfigError

    path = ctx.state.token_path
    entry_path = dict(record.entry["environment"]).get("PATH") if record else None
    gh = shutil.which("gh", path=entry_path)
    try:
        in_file = read_token_file(path) is not None
    except ConfigError as err:
        return False, f"scheduled passes cannot use the token file: {err}"
    from relay.edges.github.credentials import keyring_token

    if keyring_token(ctx.api_url) is not None:
        return True, "scheduled passes find their token in the OS keyring"
    if in_file:
        first = "`gh auth token`, then " if gh else ""
        return True, f"scheduled passes find their token through {first}the token file {path}"
    if gh:
        return True, "scheduled passes ask `gh auth token` for their token (keep gh logged in)"
    return False, (
        "a scheduled pass will find no token: run `relay join --save-token` (keeps the token"
        f" relay uses now in {path}, readable by you only) or log in with `gh auth login`"
    )


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
    """The token a scheduled pass will find: no token variables from this shell, the
    entry's PATH for gh, then the keyring and the token file; ConfigError when none."""
    from relay.edges.github.credentials import TOKEN_ENV_VARS, find_token

    env = {k: v for k, v in os.environ.items() if k not in TOKEN_ENV_VARS}
    if record is not None:
        env["PATH"] = dict(record.entry["environment"]).get("PATH", env.get("PATH", ""))
    try:
        return find_token(api_url=ctx.api_url, token_file=ctx.state.token_path, env=env)
    except ConfigError as err:
        raise ConfigError(
            f"a scheduled pass will find no token ({err.message})",
            hint=SAVE_TOKEN_HINT,
        ) from err


def append_log(path: Path, lines: Sequence[str]) -> None:
    """Append a pass's (already redacted) lines to its log, each stamped with the time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC"
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(f"{stamp} {line}\n" for line in lines)
