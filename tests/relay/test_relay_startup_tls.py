"""The idle pass over https, against `relay hub --tls` in a GitHub Enterprise Server's shape
(``--api https://HOST/api/v3``): the same conditional GET, its TLS context made for the
connection and checked against the trust store (``SSL_CERT_FILE``), as the full client's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_relay_enterprise import EnterpriseHub
from test_relay_startup import HEAVY, last_pass, loaded, probe
from worlds import Tokens, World, make_world

from relay.commands.demo import CONTROLLER, WORKER
from relay.edges.local import NodeState


@pytest.fixture
def ghes(tls_hub: Any, monkeypatch: pytest.MonkeyPatch) -> EnterpriseHub:
    """The session's TLS hub, its CA trusted by this process, its children and their git."""
    ca = str(tls_hub.data_dir / "tls" / "ca.pem")
    monkeypatch.setenv("SSL_CERT_FILE", ca)
    monkeypatch.setenv("GIT_SSL_CAINFO", ca)
    return EnterpriseHub(tls_hub, tls_hub.url + "/api/v3", tls_hub.data_dir)


def test_an_idle_pass_over_https_makes_its_one_tls_context_when_it_connects(
    ghes: EnterpriseHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world: World = make_world(
        tmp_path, ghes, Tokens(ghes), name="quiet-tls", monkeypatch=monkeypatch
    )
    boss, worker = world.controller, world.worker
    boss.ok("init", "--yes", "--node", CONTROLLER, "--repo", world.repo, "--api", ghes.url)
    worker.ok("join", "--node", WORKER, "--scheduler", "none")
    boss.ok("join", "--node", CONTROLLER, "--scheduler", "none")
    key = worker.ok("nodes", "key", "--node", WORKER).strip()
    boss.ok("nodes", "approve", WORKER, "--node", CONTROLLER, "--fingerprint", key)
    boss.ok("job", "open", "--worker", WORKER, "--title", "Quiet", "--objective", "Nothing.")
    args = ("watch", "--once", "--repo-dir", str(worker.clone))
    for _ in range(2):  # full passes over https; the second, idle after an idle one, marks
        full, said = probe(tmp_path, *args, env=worker.env())
        assert "nothing to do" in said
    assert loaded(full, ("aiohttp",)) and full["tls_contexts"] >= 1
    assert (NodeState.for_clone(worker.clone).root / "quiet.json").is_file()
    quick, said = probe(tmp_path, *args, env=worker.env())
    assert said.strip() == f"{WORKER}: nothing to do"
    assert loaded(quick, HEAVY) == []
    assert quick["tls_contexts"] == 1, "one context, made for the one connection"
    record = last_pass(worker)
    assert (record["requests"], record["not_modified"]) == (1, 1)
    # a certificate the trust store does not hold is refused, as by the full client
    untrusted = {**worker.env(), "SSL_CERT_FILE": str(tmp_path / "none.pem")}
    refused, said = probe(tmp_path, *args, env=untrusted, ok=False)
    assert loaded(refused, ("aiohttp",)), "the check failed; the full pass said why"
    assert "nothing to do" not in said and "TLS" in said, said
