"""The webhook receiver, served for real on loopback and sent signed deliveries."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from gidgethub import sansio

from relay.errors import ConfigError, LocalUsageError
from relay.watchers import webhook
from relay.watchers.webhook import WebhookEvent

EVENTS = Path(__file__).parent / "events"
SECRET = "relay webhook secret for tests"
VECTOR_SECRET = "It's a Secret to Everybody"
VECTOR_BODY = b"Hello, World!"
VECTOR_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def payload(name: str) -> bytes:
    return (EVENTS / name).read_bytes()


class Recorder:
    """The pass the lead will wire in, reduced to remembering what it was given."""

    def __init__(self, *, fail_first: bool = False) -> None:
        self.events: list[WebhookEvent] = []
        self.finished: list[str] = []
        self.reconciles = 0
        self.fail_first = fail_first
        self.gate: asyncio.Event | None = None

    async def on_event(self, event: WebhookEvent) -> None:
        self.events.append(event)
        if self.fail_first and len(self.events) == 1:
            raise RuntimeError("the pass blew up")
        if self.gate is not None:
            await self.gate.wait()
        self.finished.append(event.delivery_id)

    async def reconcile(self) -> None:
        self.reconciles += 1
        if self.fail_first and self.reconciles == 1:
            raise RuntimeError("the full pass blew up")


@asynccontextmanager
async def receiver(
    recorder: Recorder,
    *,
    secret: str = SECRET,
    interval: float = 3600.0,
    issue_interval: float = 0.0,
) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    """The receiver on loopback; ``issue_interval`` 0 unless a test is about it, so the
    passes of one issue follow each other at once."""
    app = webhook.build_app(
        secret=secret,
        on_event=recorder.on_event,
        reconcile=recorder.reconcile,
        reconcile_interval=interval,
        issue_interval=issue_interval,
    )
    runner, url = await webhook.start(app, host="127.0.0.1", port=0)
    try:
        async with aiohttp.ClientSession() as session:
            yield session, url
    finally:
        await runner.cleanup()


async def deliver(
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    *,
    event: str = "issues",
    delivery: str = "d-1",
    signature: str | None = None,
    content_type: str = "application/json",
) -> tuple[int, str]:
    headers = {"Content-Type": content_type, "X-GitHub-Event": event, "X-GitHub-Delivery": delivery}
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    async with session.post(url, data=body, headers=headers) as response:
        return response.status, await response.text()


def run(scenario: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(scenario)


async def settle() -> None:
    """Give background handlers a moment, so that 'nothing ran' is a real observation."""
    await asyncio.sleep(0.05)


def test_github_test_vector_through_our_verification_path() -> None:
    assert sign(VECTOR_SECRET, VECTOR_BODY) == VECTOR_SIGNATURE
    sansio.validate_event(VECTOR_BODY, signature=VECTOR_SIGNATURE, secret=VECTOR_SECRET)
    recorder = Recorder()

    async def scenario() -> tuple[tuple[int, str], tuple[int, str]]:
        async with receiver(recorder, secret=VECTOR_SECRET) as (session, url):
            good = await deliver(
                session, url, VECTOR_BODY, signature=VECTOR_SIGNATURE, content_type="text/plain"
            )
            bad = await deliver(
                session,
                url,
                VECTOR_BODY,
                signature=VECTOR_SIGNATURE[:-1] + "0",
                content_type="text/plain",
            )
            await settle()
            return good, bad

    good, bad = run(scenario())
    # The signature is accepted; "Hello, World!" is then refused for not being JSON.
    assert good[0] == 415
    assert bad[0] == 403
    assert recorder.events == []


def test_missing_and_bad_signatures_are_rejected_and_nothing_runs() -> None:
    body = payload("issues_labeled.json")
    recorder = Recorder()

    async def scenario() -> list[int]:
        async with receiver(recorder) as (session, url):
            answers = [
                await deliver(session, url, body, delivery="none"),
                await deliver(session, url, body, delivery="wrong", signature=sign("x", body)),
                await deliver(
                    session,
                    url,
                    body.replace(b"awaiting:worker", b"awaiting:worken"),
                    delivery="tampered",
                    signature=sign(SECRET, body),
                ),
                await deliver(session, url, body, delivery="garbled", signature="sha256=zz"),
                await deliver(session, url, body, delivery="prefix", signature="md5=abc"),
            ]
            await settle()
            return [status for status, _ in answers]

    assert run(scenario()) == [401, 403, 403, 403, 403]
    assert recorder.events == []


def test_ping_is_answered_and_runs_nothing() -> None:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 12}).encode()
    recorder = Recorder()

    async def scenario() -> tuple[int, str]:
        async with receiver(recorder) as (session, url):
            answer = await deliver(session, url, body, event="ping", signature=sign(SECRET, body))
            await settle()
            return answer

    assert run(scenario()) == (200, "pong")
    assert recorder.events == []


def test_issue_events_reach_the_pass_with_their_fields() -> None:
    labeled, commented = payload("issues_labeled.json"), payload("issue_comment_created.json")
    recorder = Recorder()

    async def scenario() -> list[int]:
        async with receiver(recorder) as (session, url):
            first = await deliver(
                session, url, labeled, delivery="a", signature=sign(SECRET, labeled)
            )
            second = await deliver(
                session,
                url,
                commented,
                event="issue_comment",
                delivery="b",
                signature=sign(SECRET, commented),
            )
            await settle()
            return [first[0], second[0]]

    assert run(scenario()) == [202, 202]
    by_id = {event.delivery_id: event for event in recorder.events}
    issue = json.loads(labeled)["issue"]
    assert by_id["a"] == WebhookEvent(
        delivery_id="a",
        event="issues",
        action="labeled",
        repository="octo-lab/relay-demo",
        issue_number=7,
        is_pull_request=False,
        sender_id=5101,
        sender_login="ada-controller",
        label="awaiting:worker",
        comment_id=None,
        issue_body=issue["body"],
        labels=tuple(label["name"] for label in issue["labels"]),
    )
    assert by_id["a"].labels == ("awaiting:worker",)
    comment = json.loads(commented)["comment"]
    assert (by_id["b"].comment_author_id, by_id["b"].comment_body) == (
        comment["user"]["id"],
        comment["body"],
    )
    assert (by_id["b"].event, by_id["b"].action, by_id["b"].comment_id) == (
        "issue_comment",
        "created",
        880001,
    )
    assert by_id["b"].label is None and by_id["b"].issue_number == 7


def test_a_redelivered_id_runs_once() -> None:
    body = payload("issues_labeled.json")
    recorder = Recorder()

    async def scenario() -> list[tuple[int, str]]:
        async with receiver(recorder) as (session, url):
            answers = [
                await deliver(session, url, body, delivery="same", signature=sign(SECRET, body)),
                await deliver(session, url, body, delivery="same", signature=sign(SECRET, body)),
                await deliver(session, url, body, delivery="other", signature=sign(SECRET, body)),
            ]
            await settle()
            return answers

    answers = run(scenario())
    assert [status for status, _ in answers] == [202, 200, 202]
    assert answers[1][1] == "duplicate delivery"
    assert [event.delivery_id for event in recorder.events] == ["same", "other"]


def test_answer_comes_at_once_while_the_pass_is_still_running() -> None:
    body = payload("issues_labeled.json")
    recorder = Recorder()

    async def scenario() -> tuple[int, list[str], list[str]]:
        # the pass waits on the gate until after the answer: an answer at all is at once
        recorder.gate = asyncio.Event()
        async with receiver(recorder) as (session, url):
            status, _ = await deliver(session, url, body, signature=sign(SECRET, body))
            await settle()
            unfinished = list(recorder.finished)
            recorder.gate.set()
            await settle()
            return status, unfinished, list(recorder.finished)

    status, while_blocked, after = run(scenario())
    assert status == 202
    assert while_blocked == [] and after == ["d-1"]


def test_a_failing_pass_is_logged_and_the_server_carries_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = payload("issues_labeled.json")
    recorder = Recorder(fail_first=True)

    async def scenario() -> list[int]:
        async with receiver(recorder) as (session, url):
            first = await deliver(session, url, body, delivery="x1", signature=sign(SECRET, body))
            await settle()
            second = await deliver(session, url, body, delivery="x2", signature=sign(SECRET, body))
            again = await deliver(session, url, body, delivery="x1", signature=sign(SECRET, body))
            await settle()
            return [first[0], second[0], again[0]]

    with caplog.at_level(logging.ERROR, logger="relay.watchers.webhook"):
        # The failed delivery is forgotten, so its manual redelivery runs again.
        assert run(scenario()) == [202, 202, 202]
    assert recorder.finished == ["x2", "x1"]
    assert any("x1: the pass failed" in record.getMessage() for record in caplog.records)


def test_reconcile_runs_on_a_timer_survives_errors_and_stops_with_the_server() -> None:
    recorder = Recorder(fail_first=True)

    async def scenario() -> tuple[int, int]:
        async with receiver(recorder, interval=0.05):
            await asyncio.sleep(0.4)
        stopped_at = recorder.reconciles
        await asyncio.sleep(0.15)
        return stopped_at, recorder.reconciles

    stopped_at, later = run(scenario())
    assert stopped_at >= 4
    assert later == stopped_at


def test_other_events_and_malformed_deliveries() -> None:
    push = json.dumps({"ref": "refs/heads/main"}).encode()
    array = b"[1, 2, 3]"
    recorder = Recorder()

    async def scenario() -> list[int]:
        async with receiver(recorder) as (session, url):
            answers = [
                await deliver(session, url, push, event="push", signature=sign(SECRET, push)),
                await deliver(session, url, array, delivery="arr", signature=sign(SECRET, array)),
                await deliver(
                    session,
                    url,
                    push,
                    delivery="form",
                    signature=sign(SECRET, push),
                    content_type="application/octet-stream",
                ),
            ]
            headers = {
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(SECRET, push),
            }
            async with session.post(url, data=push, headers=headers) as response:
                answers.append((response.status, ""))
            big = b"{" + b" " * webhook.MAX_BODY_BYTES + b"}"
            answers.append(await deliver(session, url, big, signature=sign(SECRET, big)))
            await settle()
            return [status for status, _ in answers]

    assert run(scenario()) == [202, 400, 415, 400, 413]
    assert recorder.events == []


def test_payload_extraction_from_github_shaped_files() -> None:
    data = json.loads(payload("issue_comment_created.json"))
    data["issue"]["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/7"}
    event = WebhookEvent.from_payload(event="issue_comment", delivery_id="z", data=data)
    assert event.is_pull_request and event.sender_login == "ada-controller"
    bare = WebhookEvent.from_payload(event="issues", delivery_id="y", data={"action": "opened"})
    assert bare.issue_number is None and bare.sender_id is None
    with pytest.raises(webhook.RemoteProtocolError):
        WebhookEvent.from_payload(event="issues", delivery_id="w", data=["not", "an", "object"])


def test_delivery_log_forgets_the_oldest_beyond_its_bound() -> None:
    log = webhook.DeliveryLog(capacity=3)
    assert [log.first_time(i) for i in ("a", "b", "c", "a")] == [True, True, True, False]
    assert log.first_time("d") and len(log) == 3
    assert log.first_time("b"), "b was the oldest and must have been forgotten"
    assert not log.first_time("a")


def test_secret_is_read_when_asked_and_must_not_be_empty() -> None:
    assert webhook.secret_from_env({"RELAY_WEBHOOK_SECRET": "s3"}) == "s3"
    with pytest.raises(ConfigError, match="RELAY_WEBHOOK_SECRET"):
        webhook.secret_from_env({})
    recorder = Recorder()
    with pytest.raises(ConfigError):
        webhook.build_app(secret="", on_event=recorder.on_event, reconcile=recorder.reconcile)
    with pytest.raises(LocalUsageError):
        webhook.build_app(
            secret="s",
            on_event=recorder.on_event,
            reconcile=recorder.reconcile,
            reconcile_interval=0,
        )


def test_deliveries_to_a_url_with_a_path_of_its_own_are_received() -> None:
    """`relay join --webhook https://node.example/relay` registers a URL with a path; the
    receiver must answer there, not 404 while the node silently falls back to polling."""
    labeled = payload("issues_labeled.json")
    recorder = Recorder()

    async def scenario() -> list[int]:
        async with receiver(recorder) as (session, url):
            codes = []
            for n, path in enumerate(("/relay", "/hooks/github", "/")):
                status, _ = await deliver(
                    session, url + path, labeled, delivery=f"p{n}", signature=sign(SECRET, labeled)
                )
                codes.append(status)
            await settle()
            return codes

    assert run(scenario()) == [202, 202, 202]
    assert sorted(e.delivery_id for e in recorder.events) == ["p0", "p1", "p2"]


async def head_only(url: str, headers: dict[str, str]) -> tuple[asyncio.StreamWriter, Any]:
    """A POST whose headers are sent and whose body never comes: the connection, and a
    task that reads the answer's status line (the server may answer without the body)."""
    from urllib.parse import urlsplit

    where = urlsplit(url)
    reader, writer = await asyncio.open_connection(where.hostname, where.port)
    lines = ["POST / HTTP/1.1", f"Host: {where.netloc}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    return writer, asyncio.ensure_future(reader.readline())


def test_an_unsigned_or_oversized_delivery_is_refused_before_its_body_is_read() -> None:
    """The answer comes while the 4 MiB body has not even been sent."""
    recorder = Recorder()
    size = str(webhook.MAX_BODY_BYTES)

    async def answer(url: str, headers: dict[str, str]) -> bytes:
        writer, status = await head_only(url, headers)
        try:
            return bytes(await asyncio.wait_for(status, timeout=2))
        finally:
            writer.close()

    async def scenario() -> list[bytes]:
        async with receiver(recorder) as (_session, url):
            base = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                    "X-GitHub-Delivery": "big", "Content-Length": size}  # fmt: skip
            return [
                await answer(url, base),
                await answer(url, {**base, "X-Hub-Signature-256": "sha1=abc"}),
                await answer(
                    url,
                    {
                        **base,
                        "X-Hub-Signature-256": "sha256=" + "0" * 64,
                        "Content-Length": str(webhook.MAX_BODY_BYTES + 1),
                    },
                ),
            ]

    first, second, third = run(scenario())
    assert first.startswith(b"HTTP/1.1 401"), first
    assert second.startswith(b"HTTP/1.1 403"), second
    assert third.startswith(b"HTTP/1.1 413"), third
    assert recorder.events == []


def test_only_a_few_bodies_are_read_at_once() -> None:
    """Signed-looking requests whose bodies trickle in hold every reading slot: the next
    one is 503 at once; once they go, deliveries are read again."""
    recorder = Recorder()
    body = payload("issues_labeled.json")

    async def scenario() -> tuple[bytes, int]:
        async with receiver(recorder) as (session, url):
            held = []
            for number in range(webhook.MAX_READING):
                headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                           "X-GitHub-Delivery": f"slow-{number}", "Content-Length": "1000",
                           "X-Hub-Signature-256": "sha256=" + "0" * 64}  # fmt: skip
                held.append(await head_only(url, headers))
            await settle()
            writer, status = await head_only(url, headers)
            busy = bytes(await asyncio.wait_for(status, timeout=2))
            writer.close()
            for slow, _ in held:
                slow.close()
            await settle()
            after, _ = await deliver(session, url, body, signature=sign(SECRET, body))
            return busy, after

    busy, after = run(scenario())
    assert busy.startswith(b"HTTP/1.1 503"), busy
    assert after == 202


def test_one_signed_delivery_replayed_with_fresh_ids_costs_one_follow_up_pass() -> None:
    """While the pass for an issue runs, its deliveries are folded into one follow-up;
    another issue's delivery runs at once."""
    body = payload("issues_labeled.json")
    data = json.loads(body)
    data["issue"]["number"] = 8
    other = json.dumps(data).encode()
    recorder = Recorder()

    async def scenario() -> tuple[list[str], list[str], list[str]]:
        recorder.gate = asyncio.Event()
        async with receiver(recorder) as (session, url):
            await deliver(session, url, body, delivery="r0", signature=sign(SECRET, body))
            await settle()
            signed = sign(SECRET, body)
            said = [
                (await deliver(session, url, body, delivery=f"r{n}", signature=signed))[1]
                for n in range(1, 21)
            ]
            await deliver(session, url, other, delivery="o1", signature=sign(SECRET, other))
            await settle()
            running = [e.delivery_id for e in recorder.events]
            recorder.gate.set()
            await asyncio.sleep(0.2)
            return said, running, [e.delivery_id for e in recorder.events]

    said, running, after = run(scenario())
    assert all("folded" in text for text in said), said
    assert running == ["r0", "o1"], "the other issue's pass does not wait"
    assert after == ["r0", "o1", "r20"], "twenty replays: one follow-up pass, the newest"


def test_passes_for_one_issue_start_at_most_once_per_interval() -> None:
    body = payload("issues_labeled.json")
    recorder = Recorder()

    async def scenario() -> tuple[int, int, int]:
        async with receiver(recorder, issue_interval=0.6) as (session, url):
            for n in range(10):
                await deliver(session, url, body, delivery=f"i{n}", signature=sign(SECRET, body))
                await asyncio.sleep(0.02)
            early = len(recorder.events)
            await asyncio.sleep(0.15)
            still = len(recorder.events)
            await asyncio.sleep(0.8)
            return early, still, len(recorder.events)

    early, still, late = run(scenario())
    assert (early, still) == (1, 1), "the first pass ran; the rest wait out the interval"
    assert late == 2, "then one follow-up for all of them"
