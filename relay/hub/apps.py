"""GitHub Apps on the hub: an App's JWT traded for an installation token, as on GitHub.

Registering an App is an admin act (there is no web UI to create one):
``POST /_hub/apps`` with ``{"slug", "public_key" (PEM of the App's RSA key),
"repositories": ["owner/name", ...]}`` creates the App, its bot account ``<slug>[bot]``
(type ``Bot``, push access to each repository) and one installation on those
repositories, and answers 201 ``{"app_id", "slug", "installation_id", "bot"}``. The hub
keeps only the public half; the node signs with the private key it was given.

``GET /app`` with the JWT answers the App (its ``slug``) and
``POST /app/installations/{id}/access_tokens`` then works as on GitHub: the caller sends
``Authorization: Bearer <JWT>``; the JWT must be RS256, signed by the App's key, name the
App in ``iss``, have ``iat`` not in the future (60 s of skew allowed) and ``exp`` in the
future but at most 10 minutes ahead. Any failure is a 401; an installation of another App
is a 404. The answer is 201 ``{token, expires_at (one hour), permissions,
repository_selection}``; the token acts as the bot. Known difference: the hub does not
expire installation tokens after the hour it announces.

GitHub docs: "Generating a JSON Web Token (JWT) for a GitHub App", "Generating an
installation access token for a GitHub App".
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from typing import Any

from aiohttp import web

from relay.hub import render
from relay.hub.store import Store, digest, now_us
from relay.hub.web import (
    MAX_ID,
    ApiError,
    hub_of,
    invalid,
    one_row,
    origin,
    path_int,
    read_object,
    reply,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS apps (
  id INTEGER PRIMARY KEY AUTOINCREMENT, slug TEXT NOT NULL UNIQUE, public_key TEXT NOT NULL,
  bot_id INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS installations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, app_id INTEGER NOT NULL, created_at INTEGER NOT NULL);
"""
SKEW = 60  # seconds of clock drift GitHub tolerates on iat
MAX_LIFETIME = 600  # exp at most 10 minutes ahead
TOKEN_LIFETIME = 3600
PERMISSIONS = {"issues": "write", "contents": "write", "metadata": "read"}
_UNDECODABLE = "A JSON web token could not be decoded"


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _decode(token: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    """Header, claims, signed bytes and signature; 401 when it is not a JWT."""
    try:
        head, body, sig = token.split(".")
        header, claims = json.loads(_b64(head)), json.loads(_b64(body))
        signature = _b64(sig)
    except ValueError:
        raise ApiError(401, _UNDECODABLE) from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise ApiError(401, _UNDECODABLE)
    return header, claims, f"{head}.{body}".encode(), signature


def _verify_signature(pem: str, signed: bytes, signature: bytes) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = load_pem_public_key(pem.encode())
    assert isinstance(key, rsa.RSAPublicKey)
    try:
        key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        raise ApiError(401, _UNDECODABLE) from None


def _check_times(claims: dict[str, Any], now: int) -> None:
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or iat > now + SKEW:
        raise ApiError(
            401, "'Issued at' claim ('iat') must be an Integer representing the time that the"
            " assertion was issued",
        )  # fmt: skip
    if not isinstance(exp, int) or exp <= now:
        raise ApiError(
            401, "'Expiration time' claim ('exp') must be a numeric value representing the"
            " future time at which the assertion expires",
        )  # fmt: skip
    if exp > now + MAX_LIFETIME + SKEW:
        raise ApiError(401, "'Expiration time' claim ('exp') is too far in the future")


def verify_app_jwt(store: Store, token: str, *, now: int) -> dict[str, Any]:
    """The App row a JWT proves to be, or a 401 saying what is wrong with it."""
    header, claims, signed, signature = _decode(token)
    if header.get("alg") != "RS256":
        raise ApiError(401, _UNDECODABLE)
    issuer = str(claims.get("iss", ""))
    row = store.db.execute(
        "SELECT * FROM apps WHERE id = ?",
        (int(issuer) if issuer.isdigit() and int(issuer) <= MAX_ID else -1,),
    ).fetchone()
    if row is None:
        raise ApiError(401, "'Issuer' claim ('iss') must be an Integer")
    _verify_signature(row["public_key"], signed, signature)
    _check_times(claims, now)
    return dict(row)


async def create_access_token(request: web.Request) -> web.Response:
    """``POST /app/installations/{id}/access_tokens`` (JWT auth): 201 with a fresh token."""
    jwt = request.get("jwt")
    if not jwt:  # no Authorization, or a user's token: GitHub wants the App's JWT here
        raise ApiError(401, _UNDECODABLE)
    store = hub_of(request).store
    app = verify_app_jwt(store, jwt, now=int(time.time()))
    sql = "SELECT * FROM installations WHERE id = ? AND app_id = ?"
    one_row(request, sql, (path_int(request, "installation_id"), app["id"]))  # or 404
    token = installation_token(app["id"], int(request.match_info["installation_id"]))
    with store.write() as db:
        db.execute(
            "INSERT INTO tokens VALUES (?, ?, 0, ?)", (digest(token), app["bot_id"], now_us())
        )
    expires = render.stamp(now_us() + TOKEN_LIFETIME * 1_000_000)
    body = {
        "token": token, "expires_at": expires, "permissions": PERMISSIONS,
        "repository_selection": "selected",
    }  # fmt: skip
    return reply(body, 201)


def installation_token(app_id: int, installation_id: int) -> str:
    """A token shaped like GitHub's stateless installation tokens: ``ghs_<app id>_`` and a
    JWT-like tail, several hundred characters, never the classic 40."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    head = part({"alg": "HS256", "typ": "JWT"})
    body = part({"iss": app_id, "ins": installation_id, "iat": int(time.time()),
                 "nonce": secrets.token_urlsafe(24)})  # fmt: skip
    return f"ghs_{app_id}_{head}.{body}.{secrets.token_urlsafe(32)}"


def _repo_ids(store: Store, names: Any) -> list[int]:
    if not isinstance(names, list):
        raise invalid("App", "repositories", "invalid")
    ids = []
    for full in names:
        owner, _, name = str(full).partition("/")
        row = store.db.execute(
            "SELECT r.id FROM repos r JOIN users u ON u.id = r.owner_id"
            " WHERE u.login = ? AND r.name = ?",
            (owner, name),
        ).fetchone()
        if row is None:
            raise invalid("App", "repositories", "missing", f"no repository {full}")
        ids.append(int(row[0]))
    return ids


async def register_app(request: web.Request) -> web.Response:
    """``POST /_hub/apps`` (admin): an App, its bot and one installation on the repositories."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    data = await read_object(request)
    slug, pem = data.get("slug"), data.get("public_key")
    if not isinstance(slug, str) or not slug.strip() or not isinstance(pem, str):
        raise invalid("App", "slug", "missing_field")
    try:
        valid = isinstance(load_pem_public_key(pem.encode()), rsa.RSAPublicKey)
    except ValueError:
        valid = False
    if not valid:
        raise invalid("App", "public_key", "invalid", "public_key must be an RSA PEM key")
    store, now = hub_of(request).store, now_us()
    repos = _repo_ids(store, data.get("repositories", []))
    if store.db.execute("SELECT 1 FROM apps WHERE slug = ?", (slug,)).fetchone():
        raise invalid("App", "slug", "already_exists")
    with store.write() as db:
        db.execute(
            "INSERT OR IGNORE INTO users (login, type, created_at) VALUES (?, 'Bot', ?)",
            (f"{slug}[bot]", now),
        )
        bot = db.execute("SELECT * FROM users WHERE login = ?", (f"{slug}[bot]",)).fetchone()
        app = db.execute(
            "INSERT INTO apps (slug, public_key, bot_id, created_at) VALUES (?, ?, ?, ?)",
            (slug, pem, bot["id"], now),
        ).lastrowid
        inst = db.execute(
            "INSERT INTO installations (app_id, created_at) VALUES (?, ?)", (app, now)
        ).lastrowid
        for repo_id in repos:
            db.execute(
                "INSERT OR REPLACE INTO collaborators VALUES (?, ?, 'push')", (repo_id, bot["id"])
            )
    body = {"app_id": app, "slug": slug, "installation_id": inst, "bot": bot["login"]}
    return reply(body, 201)


async def get_app(request: web.Request) -> web.Response:
    """``GET /app`` (JWT auth): the App the JWT proves to be, with its ``slug`` (its bot is
    ``<slug>[bot]``), in GitHub's shape. Known difference: the hub records no account that
    owns an App, so ``owner`` is the owner of the first repository it is installed on."""
    jwt = request.get("jwt")
    if not jwt:
        raise ApiError(401, _UNDECODABLE)
    app = verify_app_jwt(hub_of(request).store, jwt, now=int(time.time()))
    db = hub_of(request).store.db
    count = db.execute(
        "SELECT COUNT(*) FROM installations WHERE app_id = ?", (app["id"],)
    ).fetchone()[0]
    owner = (
        db.execute(
            "SELECT u.* FROM collaborators c JOIN repos r ON r.id = c.repo_id"
            " JOIN users u ON u.id = r.owner_id WHERE c.user_id = ? ORDER BY r.id LIMIT 1",
            (app["bot_id"],),
        ).fetchone()
        or db.execute("SELECT * FROM users WHERE id = ?", (app["bot_id"],)).fetchone()
    )
    base = origin(request)
    web = render.web_of(base)
    body = {
        "id": app["id"], "slug": app["slug"], "node_id": render.node_id("App", app["id"]),
        "name": app["slug"], "description": "", "external_url": f"{web}/apps/{app['slug']}",
        "html_url": f"{web}/apps/{app['slug']}", "owner": render.user_row(base, dict(owner)),
        "created_at": render.stamp(app["created_at"]),
        "updated_at": render.stamp(app["created_at"]),
        "permissions": PERMISSIONS, "events": [], "installations_count": count,
    }  # fmt: skip
    return reply(body)


ROUTES = (
    ("GET", "/app", get_app),
    ("POST", r"/app/installations/{installation_id:\d+}/access_tokens", create_access_token),
)
ADMIN_ROUTES = (("POST", "/_hub/apps", register_app),)


def install(store: Store) -> None:
    """Create the tables (idempotent)."""
    store.db.executescript(SCHEMA)
