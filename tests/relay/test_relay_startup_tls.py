"""The idle pass over https: the same conditional GET, its TLS context made for the
connection and checked against the trust store (``SSL_CERT_FILE``), as the full client's.

The hub speaks http; here it is reached through a real TLS server on loopback (a thread
that terminates TLS with a certificate made for 127.0.0.1 and passes the bytes on), which
every process of the test trusts through ``SSL_CERT_FILE`` alone.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_relay_startup import HEAVY, last_pass, loaded, probe
from worlds import World

from relay.edges.local import NodeState


def certificate(where: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own authority) and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "relay test hub")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = where / "hub.pem", where / "hub.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def tls_front(upstream: str, cert: Path, key: Path) -> Iterator[str]:
    """``https://127.0.0.1:PORT`` in front of the http URL ``upstream``, while in use."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    target = urlsplit(upstream)
    server = socket.create_server(("127.0.0.1", 0))
    open_sockets: list[socket.socket] = []

    def serve(client: socket.socket) -> None:
        try:
            secure = context.wrap_socket(client, server_side=True)
        except (OSError, ssl.SSLError):
            client.close()
            return
        back = socket.create_connection((target.hostname or "", target.port or 80))
        open_sockets.extend((secure, back))
        threading.Thread(target=pump, args=(back, secure), daemon=True).start()
        pump(secure, back)

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = server.accept()
                threading.Thread(target=serve, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for sock in open_sockets:
            with contextlib.suppress(OSError):
                sock.close()


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="the idle fast path is POSIX's")
def test_an_idle_pass_over_https_makes_its_one_tls_context_when_it_connects(
    world: World, job: int, tmp_path: Path
) -> None:
    cert, key = certificate(tmp_path)
    worker = world.worker
    env = {**worker.env(), "SSL_CERT_FILE": str(cert)}
    with tls_front(world.hub.url, cert, key) as api:  # type: ignore[attr-defined]
        args = ("watch", "--once", "--api", api, "--repo-dir", str(worker.clone))
        # full passes over https: the first tells the thread this node's API is not the
        # one LOOP.md names (so it acts), the next are idle and the last leaves the marker
        for _ in range(3):
            probe(tmp_path, *args, env=env)
        assert (NodeState.for_clone(worker.clone).root / "quiet.json").is_file()
        quick, said = probe(tmp_path, *args, env=env)
        assert said.strip() == f"{worker.name}: nothing to do"
        assert loaded(quick, HEAVY) == []
        assert quick["tls_contexts"] == 1, "one context, made for the one connection"
        record = last_pass(worker)
        assert (record["requests"], record["not_modified"]) == (1, 1)
        # a certificate the trust store does not hold is refused, as by the full client
        untrusted = {**env, "SSL_CERT_FILE": str(tmp_path / "none.pem")}
        done, said = probe(tmp_path, *args, env=untrusted, ok=False)
        assert done["tls_contexts"] >= 1
        assert "nothing to do" not in said
