"""The early GET (``relay.edges.github.primed``): a waiter that gives up while it travels
leaves its thread to finish quietly, its answer unread."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from relay.edges.github import primed


def test_a_waiter_cancelled_while_the_early_get_travels_leaves_no_thread_error() -> None:
    """Cancelling the waiter cancels the future it waits on (asyncio.wrap_future); the
    thread then set the answer of a cancelled future, which raised in the thread."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    answer = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            answer.wait(10)  # answers once the waiter has given up
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")

    threading.Thread(target=serve, daemon=True).start()
    errors: list[threading.ExceptHookArgs] = []
    hook, threading.excepthook = threading.excepthook, errors.append
    try:
        url = f"http://127.0.0.1:{port}/repos/o/r/issues"
        assert primed.fetch_early(url, {"Accept": "application/json"}).wait(10)

        async def give_up() -> None:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(primed.take("GET", url, {"Accept": "application/json"}), 0.2)

        asyncio.run(give_up())
        answer.set()
        for thread in threading.enumerate():
            if thread.name == "relay-early-get":
                thread.join(10)
    finally:
        threading.excepthook = hook
        server.close()
        primed.forget()
    assert errors == [], [e.exc_value for e in errors]
