"""relay against a GitHub Enterprise Server's shape: ``--api https://HOST/api/v3``.

The hub started with ``--tls`` serves HTTPS with a CA of its own and its REST API under
``/api/v3`` (GraphQL at ``/api/graphql``, git and pages at the root), as a GitHub
Enterprise Server does. relay is given only ``https://HOST/api/v3`` and must find
everything else from it: the API, git's URL, webhooks, App tokens and the html_urls it
prints. The hub's request counters show that no API request missed the prefix.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from worlds import Tokens, World, make_world

from relay.commands.demo import CONTROLLER, OWNER, WORKER


@dataclass
class EnterpriseHub:
    """The TLS hub as relay sees it: its API base is ``https://HOST/api/v3``."""

    proc: Any
    url: str
    data_dir: Path

    def token(self, login: str, *, admin: bool = False) -> str:
        return str(self.proc.token(login, admin=admin))


@pytest.fixture
def ghes(tls_hub: Any, monkeypatch: pytest.MonkeyPatch) -> EnterpriseHub:
    """The session's TLS hub, its CA trusted by this process, its children and their git."""
    ca = str(tls_hub.data_dir / "tls" / "ca.pem")
    monkeypatch.setenv("SSL_CERT_FILE", ca)
    monkeypatch.setenv("GIT_SSL_CAINFO", ca)
    tls_hub.reset_requests()
    return EnterpriseHub(tls_hub, tls_hub.url + "/api/v3", tls_hub.data_dir)


class _Sink(http.server.BaseHTTPRequestHandler):
    got: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.got.append((self.headers.get("X-GitHub-Event", ""), json.loads(body)))
        self.send_response(202)
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        return


@pytest.fixture
def sink() -> Iterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """A webhook receiver on loopback: its URL and the deliveries it got."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    _Sink.got = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", _Sink.got
    server.shutdown()
    server.server_close()


def test_relay_works_with_an_enterprise_server_api_url(
    ghes: EnterpriseHub,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sink: tuple[str, list[tuple[str, dict[str, Any]]]],
) -> None:
    web = ghes.proc.url  # https://HOST: where people and git go
    world: World = make_world(
        tmp_path, ghes, Tokens(ghes), name="enterprise", monkeypatch=monkeypatch
    )
    assert world.url == f"{web}/{OWNER}/enterprise.git"  # git at the root, not under /api/v3
    # as processes: each starts with SSL_CERT_FILE set, as a shell that trusts the CA would
    boss, worker = world.controller, world.worker
    boss.ok("init", "--yes", "--node", CONTROLLER, "--repo", world.repo, "--api", ghes.url)
    worker.ok("join", "--node", WORKER, "--scheduler", "none")
    url, got = sink
    boss.ok("join", "--node", CONTROLLER, "--scheduler", "none", "--webhook", url)
    key = worker.ok("nodes", "key", "--node", WORKER).strip()
    boss.ok("nodes", "approve", WORKER, "--node", CONTROLLER, "--fingerprint", key)
    said = boss.ok("job", "open", "--worker", WORKER, "--title", "Enterprise", "--objective", "Go.")
    number = int(said.split("#", 1)[1].split(":", 1)[0])
    issue = world.issue(number)
    assert issue["url"] == f"{ghes.url}/repos/{OWNER}/enterprise/issues/{number}"
    assert issue["html_url"] == f"{web}/{OWNER}/enterprise/issues/{number}"

    # webhooks: relay registered its hook through /api/v3 (join --webhook); the hub delivers
    hooks = world.api("/hooks")
    assert [h["config"]["url"] for h in hooks] == [url]
    assert hooks[0]["url"].startswith(f"{ghes.url}/repos/{OWNER}/enterprise/hooks/")
    world.api(f"/issues/{number}/comments", "POST", {"body": "a delivery"})
    for _ in range(200):
        if any(event == "issue_comment" for event, _ in got):
            break
        threading.Event().wait(0.05)
    delivered = [payload for event, payload in got if event == "issue_comment"]
    assert delivered and delivered[0]["issue"]["html_url"] == issue["html_url"]
    assert delivered[0]["repository"]["url"] == f"{ghes.url}/repos/{OWNER}/enterprise"

    # App tokens: the JWT buys an installation token at /api/v3/app/installations/…
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()  # fmt: skip
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    made = ghes.proc.admin(
        "POST", "/_hub/apps",
        {"slug": "ghes-app", "public_key": public, "repositories": [world.repo]},
    )  # fmt: skip
    key_file = tmp_path / "app.pem"
    key_file.write_text(private)
    ids = {"RELAY_APP_ID": str(made["app_id"]),
           "RELAY_APP_INSTALLATION_ID": str(made["installation_id"])}  # fmt: skip
    app_env = worker.env("", **ids, RELAY_APP_PRIVATE_KEY_FILE=str(key_file))
    done = worker.run("doctor", "--node", WORKER, env=app_env)
    assert "GET /app: ghes-app[bot]" in done.stdout, (done.stdout, done.stderr)
    # every API request relay made went to /api/v3 (or GHES's GraphQL); git to the root
    paths = {row["path"] for row in ghes.proc.requests()}
    api_paths = {p for p in paths if ".git/" not in p}
    assert api_paths, paths
    stray = {p for p in api_paths if not p.startswith(("/api/v3/", "/api/graphql"))}
    assert stray == set(), stray
    assert any(p.endswith("/access_tokens") for p in api_paths)
    assert any(".git/" in p and not p.startswith("/api/") for p in paths)
