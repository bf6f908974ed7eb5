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

from typing import Any

from relay.edges.github import GitHubClient
from relay.edges.local import NodeState, webhook_secret

EVENTS = ("issue_comment", "issues")


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


async def register_webhook(
    *, state: NodeState, api_url: str, token: str, repo: str, url: str
) -> list[str]:
    """Register (or update) the repository webhook that delivers to ``url``; lines to say."""
    secret, source = webhook_secret(state, create=True)
    body = hook_body(url, secret)
    async with HookClient(api_url=api_url, token=token, repo=repo) as gh:
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
