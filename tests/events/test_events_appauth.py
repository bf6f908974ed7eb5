"""GitHub App authentication against the real hub process.

The App is registered through the hub's admin endpoint with its public key; relay's
``AppAuth`` signs the JWT with the private key and trades it for an installation token
through gidgethub, exactly as against GitHub. Then a worker node that is the App (only
RELAY_APP_* in its environment, no token) joins, checks itself and takes a turn as
processes — against a hub that refuses ``GET /user`` to an installation token, as GitHub
does, so the node learns its bot account from ``GET /app`` instead.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import urllib.error
from pathlib import Path
from typing import Any

import aiohttp
import gidgethub
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gidgethub.aiohttp import GitHubAPI
from worlds import WORKER, World, api

from relay.edges.github.appauth import AppAuth
from relay.protocol import parse_master

PY = Path(sys.executable).as_posix()


def new_key() -> tuple[str, str]:
    """A fresh RSA key pair as (private PEM, public PEM)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    return new_key()


def register(world: World, slug: str, public: str) -> dict[str, Any]:
    body = {"slug": slug, "public_key": public, "repositories": [world.repo]}
    made: dict[str, Any] = world.hub.admin("POST", "/_hub/apps", body)  # type: ignore[attr-defined]
    return made


def exchange(url: str, auth: AppAuth) -> Any:
    async def main() -> Any:
        async with aiohttp.ClientSession() as session:
            return await auth.installation_token(GitHubAPI(session, "test", base_url=url))

    return asyncio.run(main())


def test_app_jwt_buys_an_installation_token_that_acts_as_the_bot(
    world: World, keys: tuple[str, str], unique: str
) -> None:
    private, public = keys
    app = register(world, f"relay-{unique}", public)
    auth = AppAuth(app_id=str(app["app_id"]), installation_id=app["installation_id"],
                   private_key=private)  # fmt: skip
    token = exchange(world.hub.url, auth)
    assert token.startswith("ghs_") and auth.cached is not None
    assert exchange(world.hub.url, auth) == token  # cached until it is due
    with pytest.raises(urllib.error.HTTPError) as refused:
        api(f"{world.hub.url}/user", token)  # GitHub's 403 for an installation token
    assert refused.value.code == 403
    me = api(f"{world.hub.url}/users/relay-{unique}%5Bbot%5D", token)
    assert (me["login"], me["type"]) == (f"relay-{unique}[bot]", "Bot")
    perm = world.api(f"/collaborators/{me['login']}/permission")
    assert perm["permission"] == "write"

    other, _ = new_key()
    wrong_key = AppAuth(app_id=str(app["app_id"]), installation_id=app["installation_id"],
                        private_key=other)  # fmt: skip
    stale = AppAuth(app_id=str(app["app_id"]), installation_id=app["installation_id"],
                    private_key=private, clock=lambda: 1_000_000.0)  # fmt: skip
    not_ours = AppAuth(app_id=str(app["app_id"]), installation_id=999_999, private_key=private)
    for bad, status in ((wrong_key, 401), (stale, 401), (not_ours, 404)):
        with pytest.raises(gidgethub.HTTPException) as caught:
            exchange(world.hub.url, bad)
        assert caught.value.status_code == status


def test_a_worker_that_is_an_app_takes_its_turn_with_no_token(
    world: World, keys: tuple[str, str], unique: str, tmp_path: Path
) -> None:
    private, public = keys
    app = register(world, f"worker-{unique}", public)
    key_file = tmp_path / "app.pem"
    key_file.write_text(private)
    key_file.chmod(0o600)
    out = world.controller.call(
        "job", "open", "--worker", WORKER, "--title", "As an App", "--objective", "Run it."
    )
    job = int(out.split("#", 1)[1].split(":", 1)[0])
    world.controller.call("task", str(job), "--step", f'"{PY}" -c "print(40 + 2)"')
    env = {k: v for k, v in os.environ.items() if k not in ("RELAY_TOKEN", "GITHUB_TOKEN")}
    env.update(
        RELAY_APP_ID=str(app["app_id"]), RELAY_APP_INSTALLATION_ID=str(app["installation_id"]),
        RELAY_APP_PRIVATE_KEY_FILE=str(key_file),
    )  # fmt: skip
    bot = f"worker-{unique}[bot]"
    hub: Any = world.hub

    def asked(path: str, status: int) -> int:
        return int(hub.count(method="GET", path=path, status=status))

    refused_before = asked("/user", 403)

    def relay(*args: str) -> str:
        argv = [sys.executable, "-m", "relay.cli", *args, "--repo-dir", str(world.worker.clone)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        return done.stdout

    # who am I: join registers a new node row whose account is the App's bot
    relay("join", "--node", f"app-{unique}", "--scheduler", "none")
    key = relay("nodes", "key", "--node", f"app-{unique}").strip()
    world.controller.call(
        "nodes", "approve", f"app-{unique}", "--node", "mac-studio", "--fingerprint", key
    )
    row = parse_master(world.remote_file("docs/loop/LOOP.md")).node(f"app-{unique}")
    assert row is not None and bot in [a.login for a in row.accounts]
    assert f"GET /app: {bot}" in relay("doctor", "--node", WORKER)
    relay("watch", "--once", "--node", WORKER)
    result = world.comments(job)[-1]
    assert result["body"].startswith("### RESULT 1 · done")  # its log pushed as the App
    pushed = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    assert "print(40 + 2)" in pushed
    assert result["user"]["login"] == bot
    assert asked("/user", 403) == refused_before  # never asked who it is as a user
    assert asked("/app", 200) >= 2  # join and doctor asked the App instead
