"""GitHub App auth: the JWT verified with the public key, and the token exchange over HTTP."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from gidgethub import BadRequest
from gidgethub.aiohttp import GitHubAPI

from relay.edges.github import appauth
from relay.errors import ConfigError

NOW = 1_790_000_000.0
TOKEN_LIFETIME = 3600


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def pem(rsa_key: rsa.RSAPrivateKey) -> str:
    return rsa_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode("ascii")


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def verify_jwt(token: str, public_key: rsa.RSAPublicKey) -> tuple[dict[str, Any], dict[str, Any]]:
    """Check the RS256 signature the way GitHub does and return (header, claims)."""
    head, body, sig = token.split(".")
    public_key.verify(
        _b64decode(sig), f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )
    return json.loads(_b64decode(head)), json.loads(_b64decode(body))


class FakeClock:
    """A settable clock: the one thing the tests replace, as the module intends."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_jwt_is_rs256_signed_with_backdated_iat(rsa_key: rsa.RSAPrivateKey, pem: str) -> None:
    token = appauth.app_jwt(app_id="12345", private_key=pem, now=NOW)
    header, claims = verify_jwt(token, rsa_key.public_key())
    assert header == {"alg": "RS256", "typ": "JWT"}
    assert claims == {"iat": int(NOW) - 60, "exp": int(NOW) + 540, "iss": "12345"}
    assert claims["exp"] - NOW <= 600


def test_jwt_signature_fails_with_another_key(pem: str) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = appauth.app_jwt(app_id="1", private_key=pem, now=NOW)
    with pytest.raises(InvalidSignature):
        verify_jwt(token, other.public_key())


def test_non_rsa_and_garbage_keys_are_config_errors() -> None:
    ec_pem = (
        ec.generate_private_key(ec.SECP256R1())
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )
    with pytest.raises(ConfigError, match="not an RSA key"):
        appauth.AppAuth(app_id="1", installation_id=2, private_key=ec_pem)
    with pytest.raises(ConfigError, match="not a readable PEM key"):
        appauth.AppAuth(app_id="1", installation_id=2, private_key="not a key")


def test_token_freshness_schedule() -> None:
    token = appauth.InstallationToken(token="t", expires_at=NOW + TOKEN_LIFETIME)
    assert token.fresh_at(NOW)
    assert token.fresh_at(NOW + TOKEN_LIFETIME - 301)
    assert not token.fresh_at(NOW + TOKEN_LIFETIME - 300)
    assert not token.fresh_at(NOW + TOKEN_LIFETIME + 1)


def test_token_answer_is_checked() -> None:
    parsed = appauth.parse_token_response({"token": "ghs_x", "expires_at": "2026-11-30T10:00:00Z"})
    assert parsed.expires_at == datetime(2026, 11, 30, 10, tzinfo=UTC).timestamp()
    for bad in ([], {"token": "x"}, {"token": "x", "expires_at": "soon"}):
        with pytest.raises(appauth.RemoteProtocolError):
            appauth.parse_token_response(bad)


def test_from_env_reads_inline_key_or_file(pem: str, tmp_path: Path) -> None:
    assert appauth.from_env({}) is None
    inline = appauth.from_env(
        {"RELAY_APP_ID": "7", "RELAY_APP_INSTALLATION_ID": "99", "RELAY_APP_PRIVATE_KEY": pem}
    )
    assert inline is not None and (inline.app_id, inline.installation_id) == ("7", 99)
    key_file = tmp_path / "app.pem"
    key_file.write_text(pem)
    env = {"RELAY_APP_ID": "7", "RELAY_APP_INSTALLATION_ID": "99"}
    from_file = appauth.from_env({**env, "RELAY_APP_PRIVATE_KEY_FILE": str(key_file)})
    assert from_file is not None and from_file.private_key == pem
    with pytest.raises(ConfigError, match="no private key"):
        appauth.from_env(env)
    with pytest.raises(ConfigError, match="numeric id"):
        appauth.from_env({**env, "RELAY_APP_INSTALLATION_ID": "abc"})


@dataclass
class TokenServer:
    """GitHub's access_tokens endpoint as far as an App sees it, checking the JWT for real."""

    public_key: rsa.RSAPublicKey
    clock: Callable[[], float]
    app_id: str
    issued: list[str] = field(default_factory=list)
    rejected: int = 0

    async def access_tokens(self, request: web.Request) -> web.Response:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        try:
            _, claims = verify_jwt(token, self.public_key)
        except (InvalidSignature, ValueError):
            return self._reject("A JSON web token could not be decoded")
        now = self.clock()
        if scheme.lower() != "bearer" or claims["iss"] != self.app_id:
            return self._reject("Bad credentials")
        if not claims["iat"] <= now < claims["exp"] or claims["exp"] - now > 600:
            return self._reject("'Expiration time' claim ('exp') is too far in the future")
        name = f"ghs_installation{request.match_info['id']}_{len(self.issued)}"
        self.issued.append(name)
        expires = datetime.fromtimestamp(now + TOKEN_LIFETIME, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return web.json_response({"token": name, "expires_at": expires}, status=201)

    def _reject(self, message: str) -> web.Response:
        self.rejected += 1
        return web.json_response({"message": message}, status=401)


@asynccontextmanager
async def serve(server: TokenServer) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/app/installations/{id}/access_tokens", server.access_tokens)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def test_token_exchange_caches_and_refreshes_early(rsa_key: rsa.RSAPrivateKey, pem: str) -> None:
    clock = FakeClock(NOW)
    server = TokenServer(public_key=rsa_key.public_key(), clock=clock, app_id="4242")
    auth = appauth.AppAuth(app_id="4242", installation_id=77, private_key=pem, clock=clock)

    async def scenario() -> list[str]:
        seen = []
        async with serve(server) as base, aiohttp.ClientSession() as session:
            gh = GitHubAPI(session, "relay-test", base_url=base)
            seen.append(await auth.installation_token(gh))
            clock.now = NOW + TOKEN_LIFETIME - 301  # still fresh: no request
            seen.append(await auth.installation_token(gh))
            clock.now = NOW + TOKEN_LIFETIME - 300  # five minutes early: refresh
            seen.append(await auth.installation_token(gh))
            gathered = await asyncio.gather(*(auth.installation_token(gh) for _ in range(5)))
            seen.extend(gathered)
        return seen

    seen = asyncio.run(scenario())
    assert server.issued == ["ghs_installation77_0", "ghs_installation77_1"]
    assert seen == ["ghs_installation77_0"] * 2 + ["ghs_installation77_1"] * 6
    assert server.rejected == 0
    assert auth.cached is not None
    assert auth.cached.expires_at == NOW + TOKEN_LIFETIME - 300 + TOKEN_LIFETIME


def test_token_exchange_rejected_for_wrong_app(rsa_key: rsa.RSAPrivateKey, pem: str) -> None:
    clock = FakeClock(NOW)
    server = TokenServer(public_key=rsa_key.public_key(), clock=clock, app_id="4242")
    auth = appauth.AppAuth(app_id="999", installation_id=77, private_key=pem, clock=clock)

    async def scenario() -> None:
        async with serve(server) as base, aiohttp.ClientSession() as session:
            await auth.installation_token(GitHubAPI(session, "relay-test", base_url=base))

    with pytest.raises(BadRequest) as caught:
        asyncio.run(scenario())
    assert caught.value.status_code == 401
    assert server.rejected == 1 and server.issued == [] and auth.cached is None


def test_skewed_server_clock_still_accepts_backdated_jwt(
    rsa_key: rsa.RSAPrivateKey, pem: str
) -> None:
    """A node whose clock runs 45 s fast still gets a token, thanks to the 60 s back-dating."""
    node_clock = FakeClock(NOW + 45)
    server = TokenServer(public_key=rsa_key.public_key(), clock=lambda: NOW, app_id="5")
    auth = appauth.AppAuth(app_id="5", installation_id=1, private_key=pem, clock=node_clock)

    async def scenario() -> str:
        async with serve(server) as base, aiohttp.ClientSession() as session:
            return await auth.installation_token(GitHubAPI(session, "relay-test", base_url=base))

    assert asyncio.run(scenario()) == "ghs_installation1_0"
