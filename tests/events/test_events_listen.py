"""`relay watch --webhook --listen`: bad addresses are one-line errors, not tracebacks."""

from __future__ import annotations

import socket

import pytest
from worlds import World

from relay.commands.watch import listen_address
from relay.errors import LocalUsageError


def test_listen_addresses_are_parsed_or_refused_in_one_line() -> None:
    assert listen_address("127.0.0.1:8787") == ("127.0.0.1", 8787)
    assert listen_address("[::1]:0") == ("::1", 0)
    for bad in ("8787", "127.0.0.1:99999", "host:port", ":80"):
        with pytest.raises(LocalUsageError, match="HOST:PORT"):
            listen_address(bad)


def test_a_port_in_use_is_a_one_line_error(world: World) -> None:
    w = world.worker
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        done = w.run(
            "watch",
            "--webhook",
            "--listen",
            f"127.0.0.1:{port}",
            env=w.env(RELAY_WEBHOOK_SECRET="s3cret"),
        )
    finally:
        taken.close()
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("relay: cannot listen on"), done.stderr
    assert "--listen" in lines[0]
