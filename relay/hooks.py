"""The repository webhook a node receives its events through (`relay join --webhook URL`).

Registering is idempotent, because joining twice must change nothing: a hook whose
``config.url`` is already the node's URL is updated (events, secret, active), never
duplicated (GitHub refuses a second hook on one URL with a 422 anyway). The secret is
``RELAY_WEBHOOK_SECRET`` when set; otherwise the node makes a random one and keeps it in
its state (``.git/relay/webhook-secret``, readable by this user only), where
`relay watch --webhook` finds it again.

GitHub docs: "Repository webhooks" (REST), "Validating webhook deliveries".
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from relay.errors import ConfigError
from relay.github import GitHubClient
from relay.node import NodeContext
from relay.state import NodeState, write_atomic

ENV_SECRET = "RELAY_WEBHOOK_SECRET"
SECRET_FILE = "webhook-secret"
EVENTS = ("issue_comment", "issues")


def secret_path(state: NodeState) -> Path:
    """Where the node keeps the secret it made (inside .git, never committed)."""
    return state.root / SECRET_FILE


def _read_secret(path: Path) -> str | None:
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None
    if os.name != "nt" and mode & 0o077:
        raise ConfigError(
            f"webhook secret file {path} is readable by others; run: chmod 600 {path}"
        )
    return path.read_text(encoding="utf-8").strip() or None


def webhook_secret(
    state: NodeState, environ: Mapping[str, str] | None = None, *, create: bool = False
) -> tuple[str, str]:
    """The secret and where it came from: the variable, the state file, or (``create``) a new
    random one saved in the state file. ConfigError when there is none and none may be made."""
    env = os.environ if environ is None else environ
    if env.get(ENV_SECRET, ""):
        return env[ENV_SECRET], ENV_SECRET
    path = secret_path(state)
    found = _read_secret(path)
    if found is not None:
        return found, f"the secret file {path}"
    if not create:
        raise ConfigError(
            f"no webhook secret: {ENV_SECRET} is not set and {path} does not exist",
            hint="run `relay join --webhook URL` on this clone, or set the variable",
        )
    made = secrets.token_hex(32)
    write_atomic(path, made.encode() + b"\n", mode=0o600)
    return made, f"a new secret saved in {path}"


class HookClient(GitHubClient):
    """The three repository-hook calls ``relay join --webhook`` makes."""

    async def list_hooks(self) -> list[dict[str, Any]]:
        """``GET /repos/{o}/{r}/hooks`` (needs admin on the repository)."""
        return await self._get_all(f"{self._repo_path}/hooks", "the repository's webhooks")

    async def create_hook(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /repos/{o}/{r}/hooks``; GitHub pings the URL at once."""
        made: dict[str, Any] = await self._send(
            "POST", f"{self._repo_path}/hooks", "a webhook", body
        )
        return made

    async def update_hook(self, hook_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """``PATCH /repos/{o}/{r}/hooks/{id}``."""
        path = f"{self._repo_path}/hooks/{hook_id}"
        changed: dict[str, Any] = await self._send("PATCH", path, f"webhook {hook_id}", body)
        return changed


def hook_body(url: str, secret: str) -> dict[str, Any]:
    """What relay registers: issue and comment events, JSON, signed with the secret."""
    config = {"url": url, "content_type": "json", "secret": secret, "insecure_ssl": "0"}
    return {"name": "web", "active": True, "events": list(EVENTS), "config": config}


async def register_webhook(ctx: NodeContext, url: str) -> list[str]:
    """Register (or update) the repository webhook that delivers to ``url``; lines to say."""
    secret, source = webhook_secret(ctx.state, create=True)
    body = hook_body(url, secret)
    async with HookClient(api_url=ctx.api_url, token=ctx.token().value, repo=ctx.repo) as gh:
        same = [h for h in await gh.list_hooks() if h.get("config", {}).get("url") == url]
        if same:
            hook = await gh.update_hook(int(same[0]["id"]), body)
            verb = "updated"
        else:
            hook = await gh.create_hook(body)
            verb = "registered"
    return [
        f"webhook {verb}: {url} (hook {hook['id']}, events {', '.join(EVENTS)})",
        f"webhook secret: {source}",
    ]
