"""Deferred TLS contexts: the same settings as ``ssl.create_default_context()``, the trust
store read at the first handshake, and nothing left patched afterwards."""

from __future__ import annotations

import ssl

from relay.edges.github.tls import deferred_contexts


def handshake_start(context: ssl.SSLContext) -> ssl.SSLObject:
    """What asyncio does first with a client context: wrap a pair of memory BIOs."""
    return context.wrap_bio(ssl.MemoryBIO(), ssl.MemoryBIO(), server_hostname="example.test")


def test_a_deferred_client_context_is_the_default_one_once_it_connects() -> None:
    real = ssl.create_default_context()
    with deferred_contexts():
        lazy = ssl.create_default_context()
        plain = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        plain.set_default_verify_paths()
    assert type(lazy) is ssl.SSLContext and type(plain) is ssl.SSLContext
    for name in ("protocol", "verify_mode", "check_hostname", "options", "verify_flags"):
        assert getattr(lazy, name) == getattr(real, name), name
    assert lazy.cert_store_stats()["x509_ca"] == 0, "nothing read before a connection"
    assert plain.cert_store_stats()["x509_ca"] == 0
    handshake_start(lazy)
    handshake_start(plain)
    assert lazy.cert_store_stats() == real.cert_store_stats()
    assert plain.cert_store_stats() == real.cert_store_stats()
    assert "wrap_bio" not in vars(lazy), "the class's own methods from the first wrap on"


def test_nothing_stays_patched_and_explicit_locations_load_at_once() -> None:
    create, paths = ssl.create_default_context, ssl.SSLContext.set_default_verify_paths
    with deferred_contexts():
        server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    assert ssl.create_default_context is create
    assert ssl.SSLContext.set_default_verify_paths is paths
    assert "wrap_bio" not in vars(server), "a server context is made as always"
    made = ssl.create_default_context()
    assert made.cert_store_stats() == ssl.create_default_context().cert_store_stats()
