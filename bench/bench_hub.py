"""Hub throughput: requests per second for a GET of 20 comments answered 200 and 304, a GET
of an issue answered 200 and 304, a POST of a comment and the web page of a 50-comment
thread (200, and 304 for a refresh of an unchanged one), with 1 and 8 concurrent clients,
beside a bare aiohttp handler that answers the same bytes (and parses a POST's JSON, as the
hub must), measured in the same run; the
ratio is the hub's throughput over the framework's (issue 29's goal: at least 0.5 for the
GET of 20 comments and for the POST). Runs are paired (hub and bare back to back, which goes
first alternating) and each cell reports the median of the pairs' ratios and their spread
(lowest–highest); a 304's cost is set beside a 200's of the same list the same way, and the
machine's load is printed before and after.

Both servers run as subprocesses (the hub exactly as ``relay hub --port 0``); the load comes
from aiohttp clients in this process. Each cell is the median of several timed runs. The hub
runs with ``--rate-limit`` lifted (the budget is per user, as on GitHub, so more tokens
would not help), and every answer's status is checked, so an error can never pass for speed.

Run: ``python -m bench.bench_hub`` (or ``python -m bench`` for every benchmark).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RUNS = 5
SECONDS = 1.0
CLIENTS = (1, 8)
RATE_LIMIT = 10**9  # the bench's one user must never meet the hourly budget
ISSUE = "/repos/bench/bench/issues/1"
THREAD = "/bench/bench/issues/2"  # the web page of a thread of PAGE_COMMENTS comments
PAGE_COMMENTS = 50
COMMENTS = "/repos/bench/bench/issues/3/comments"  # a list of LIST_COMMENTS comments
LIST_COMMENTS = 20
GOAL = 0.5  # issue 29: the hub serves at least half a bare aiohttp server's throughput
POST_BODY = {"body": "bench comment"}  # what each POST sends


@dataclass(frozen=True)
class Scenario:
    """One kind of request and the status it must get."""

    name: str
    method: str
    status: int
    conditional: bool = False
    page: bool = False
    listing: bool = False
    fresh: bool = False  # a query no earlier request had: the hub renders it (none kept)

    @property
    def path(self) -> str:
        if self.page:
            return THREAD
        if self.listing:
            return COMMENTS
        return f"{ISSUE}/comments" if self.method == "POST" else ISSUE

    def etag(self, hub: Hub) -> str:
        """The If-None-Match a conditional request sends."""
        return hub.page_etag if self.page else hub.list_etag if self.listing else hub.etag


LIST_200 = Scenario("20 comments", "GET", 200, listing=True)
LIST_304 = Scenario("20 cmts 304", "GET", 304, conditional=True, listing=True)
LIST_RENDERED = Scenario("20 cmts fresh", "GET", 200, listing=True, fresh=True)
SCENARIOS = (
    LIST_200,
    LIST_304,
    Scenario("GET 200", "GET", 200),
    Scenario("GET 304", "GET", 304, conditional=True),
    Scenario("POST comment", "POST", 201),
    Scenario("thread page", "GET", 200, page=True),
    Scenario("page 304", "GET", 304, conditional=True, page=True),
)


def spawn(argv: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start a server that prints its URL on its first line."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise RuntimeError(f"server did not start: {line!r}")
    return proc, line[line.index("http://") :].split()[0]


def request(url: str, token: str, method: str, path: str, body: Any = None) -> Any:
    """One set-up request; returns the decoded JSON."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"token {token}"}
    req = urllib.request.Request(f"{url}{path}", data, headers, method=method)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read() or b"null"), resp.headers.get("ETag")


def post_answer(url: str, token: str) -> str:
    """The bytes of the hub's answer to the bench's POST (a 201 with the new comment)."""
    data = json.dumps(POST_BODY).encode()
    headers = {"Authorization": f"token {token}"}
    req = urllib.request.Request(f"{url}{ISSUE}/comments", data, headers, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return str(resp.read().decode())


def fetch_page(url: str, token: str, path: str) -> tuple[str, str, str]:
    """A web page's HTML, ETag and Content-Security-Policy."""
    req = urllib.request.Request(f"{url}{path}", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        csp = resp.headers["Content-Security-Policy"]
        return resp.read().decode(), resp.headers["ETag"], csp


def comment_body(i: int) -> str:
    """A comment shaped like relay's: a heading, a step list, an excerpt, a hidden block."""
    return (
        f"### RESULT {i} · done\n\n`win-desktop` ran TASK {i}. **Log:** [result log](/x)\n\n"
        "1. `python -m build`\n2. `git --version`\n\n```text\n"
        + "".join(f"line {n} of the excerpt\n" for n in range(20))
        + f'```\n\n<!-- relay:result {{"task": {i}, "status": "done"}} -->\n'
    )


class Hub:
    """A `relay hub` subprocess (budget lifted) with a repository, an issue and a token."""

    def __init__(self, workdir: Path) -> None:
        from relay.hub.store import Store

        store = Store.open(workdir / "hub")
        self.token = store.create_token("bench")
        store.close()
        argv = [sys.executable, "-m", "relay.cli", "hub", "--port", "0"]
        argv += ["--rate-limit", str(RATE_LIMIT), "--content-limit", "0/0"]
        argv += ["--data", str(workdir / "hub")]
        self.proc, self.url = spawn(argv)
        request(self.url, self.token, "POST", "/user/repos", {"name": "bench"})
        request(self.url, self.token, "POST", "/repos/bench/bench/issues", {"title": "bench"})
        self.posted = post_answer(self.url, self.token)  # what the bare server answers a POST
        self.issue, self.etag = request(self.url, self.token, "GET", ISSUE)
        thread = {"title": "a long thread", "body": comment_body(0), "labels": ["working"]}
        request(self.url, self.token, "POST", "/repos/bench/bench/issues", thread)
        for i in range(1, PAGE_COMMENTS + 1):
            path = "/repos/bench/bench/issues/2/comments"
            request(self.url, self.token, "POST", path, {"body": comment_body(i)})
        request(self.url, self.token, "POST", "/repos/bench/bench/issues", {"title": "a list"})
        for i in range(1, LIST_COMMENTS + 1):
            request(self.url, self.token, "POST", COMMENTS, {"body": comment_body(i)})
        self.listing, self.list_etag = request(self.url, self.token, "GET", COMMENTS)
        self.page, self.page_etag, self.page_csp = fetch_page(self.url, self.token, THREAD)


def bare_app(payload: dict[str, str]) -> Any:
    """The baseline: aiohttp handlers that answer the hub's bytes with no work at all."""
    from aiohttp import web

    body, etag, posted = payload["get"].encode(), payload["etag"], payload["post"].encode()
    page, page_etag = payload["page"].encode(), payload["page_etag"]
    listing, list_etag = payload["list"].encode(), payload["list_etag"]

    async def get(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=body, content_type="application/json", headers={"ETag": etag})

    async def get_page(request: web.Request) -> web.Response:
        headers = {"ETag": page_etag, "Content-Security-Policy": payload["page_csp"]}
        if request.headers.get("If-None-Match") == page_etag:
            return web.Response(status=304, headers=headers)
        return web.Response(body=page, content_type="text/html", headers=headers)

    async def get_list(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == list_etag:
            return web.Response(status=304, headers={"ETag": list_etag})
        headers = {"ETag": list_etag}
        return web.Response(body=listing, content_type="application/json", headers=headers)

    async def post(request: web.Request) -> web.Response:
        json.loads(await request.read())  # the hub's protocol work: read, parse, answer
        return web.Response(status=201, body=posted, content_type="application/json")

    app = web.Application()
    app.router.add_get(ISSUE, get)
    app.router.add_post(f"{ISSUE}/comments", post)
    app.router.add_get(THREAD, get_page)
    app.router.add_get(COMMENTS, get_list)
    return app


def serve_bare(payload_file: str) -> None:
    """Run the baseline server (``python -m bench.bench_hub --bare FILE``)."""
    from aiohttp import web

    async def run() -> None:
        app = bare_app(json.loads(Path(payload_file).read_text()))
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(f"bare http://127.0.0.1:{runner.addresses[0][1]}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


async def load(url: str, scenario: Scenario, *, hub: Hub, clients: int) -> float:
    """Requests per second over SECONDS with ``clients`` concurrent clients, each on a
    connection of its own, all as the one bench user."""
    import aiohttp

    data = json.dumps(POST_BODY).encode() if scenario.method == "POST" else None
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(connector=connector) as session:
        target = f"{url}{scenario.path}"
        fresh = itertools.count()

        async def worker(deadline: float) -> int:
            headers = {"Authorization": f"token {hub.token}"}
            if scenario.conditional:
                headers["If-None-Match"] = scenario.etag(hub)
            done = 0
            while time.perf_counter() < deadline:
                where = f"{target}?per_page=30&n={next(fresh)}" if scenario.fresh else target
                async with session.request(
                    scenario.method, where, data=data, headers=headers
                ) as resp:
                    await resp.read()
                    if resp.status != scenario.status:
                        raise RuntimeError(f"{scenario.name}: got {resp.status} from {url}")
                done += 1
            return done

        await asyncio.gather(*(worker(time.perf_counter() + 0.1) for _ in range(clients)))
        started = time.perf_counter()
        counts = await asyncio.gather(*(worker(started + SECONDS) for _ in range(clients)))
        return sum(counts) / (time.perf_counter() - started)


Arm = tuple[str, Scenario]  # a server's URL and the request it is sent


def paired(hub: Hub, a: Arm, b: Arm, clients: int) -> tuple[list[float], list[float]]:
    """RUNS paired runs of ``a`` and ``b`` back to back, which goes first alternating, so
    that a change in the machine's load meets both arms alike: requests/s of each."""
    a_runs, b_runs = [], []
    for i in range(RUNS):
        first, second = (a, b) if i % 2 == 0 else (b, a)
        one = asyncio.run(load(first[0], first[1], hub=hub, clients=clients))
        two = asyncio.run(load(second[0], second[1], hub=hub, clients=clients))
        a_runs.append(one if i % 2 == 0 else two)
        b_runs.append(two if i % 2 == 0 else one)
    return a_runs, b_runs


def cell(name: str, clients: int, a_runs: list[float], b_runs: list[float]) -> dict[str, Any]:
    """Medians of both arms and of the pairs' ratios (a over b), with the ratios' spread."""
    ratios = sorted(x / y for x, y in zip(a_runs, b_runs, strict=True))
    return {"scenario": name, "clients": clients, "hub": statistics.median(a_runs),
            "bare": statistics.median(b_runs), "ratio": statistics.median(ratios),
            "low": ratios[0], "high": ratios[-1]}  # fmt: skip


def run(workdir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Measure every scenario at every concurrency against the bare server, and a 304's
    cost against a 200's; return both tables' rows."""
    hub = Hub(workdir)
    payload = workdir / "bare.json"
    post = hub.posted  # the same bytes as the hub's answer (before: an issue, a third larger)
    payload.write_text(
        json.dumps(
            {
                "get": json.dumps(hub.issue), "etag": hub.etag, "post": post,
                "page": hub.page, "page_etag": hub.page_etag, "page_csp": hub.page_csp,
                "list": json.dumps(hub.listing), "list_etag": hub.list_etag,
            }
        )
    )  # fmt: skip
    bare, bare_url = spawn([sys.executable, "-m", "bench.bench_hub", "--bare", str(payload)])
    rows, costs = [], []
    try:
        for clients in CLIENTS:
            # per request, a 304's time over a 200's: the inverse of the throughputs' ratio;
            # the 200 answered again as kept, and the 200 rendered (a query not seen before)
            for ok_scenario in (LIST_200, LIST_RENDERED):
                ok_arm, not_modified_arm = (hub.url, ok_scenario), (hub.url, LIST_304)
                ok, not_modified = paired(hub, ok_arm, not_modified_arm, clients)
                costs.append(cell(ok_scenario.name, clients, ok, not_modified))
        for scenario in SCENARIOS:
            for clients in CLIENTS:
                hub_runs, bare_runs = paired(
                    hub, (hub.url, scenario), (bare_url, scenario), clients
                )
                rows.append(cell(scenario.name, clients, hub_runs, bare_runs))
    finally:
        for proc in (hub.proc, bare):
            proc.terminate()
            proc.wait(timeout=10)
    return rows, costs


def report(rows: list[dict[str, Any]], costs: list[dict[str, Any]], loads: list[float]) -> None:
    """Print the tables for people, and the goals met or not."""
    print(f"hub throughput: requests/s, median of {RUNS} paired runs of {SECONDS:.1f} s each "
          f"({os.cpu_count()} CPUs, shared by the servers and the client; load average "
          f"{loads[0]:.2f} before, {loads[1]:.2f} after)")  # fmt: skip
    print(f"{'request':<14}{'clients':>8}{'hub':>8}{'bare':>8}{'hub/bare':>10}"
          f"{'spread':>13}{'ms/req':>8}")  # fmt: skip
    for r in rows:
        per = 1000 * r["clients"] / r["hub"]
        spread = f"{r['low']:.2f}-{r['high']:.2f}"
        print(f"{r['scenario']:<14}{r['clients']:>8}{r['hub']:>8.0f}{r['bare']:>8.0f}"
              f"{r['ratio']:>10.2f}{spread:>13}{per:>8.2f}")  # fmt: skip
    for c in costs:
        what = "rendered" if c["scenario"] == LIST_RENDERED.name else "answered as kept"
        print(f"a 304's cost over a 200's {what} (GET of {LIST_COMMENTS} comments, "
              f"{c['clients']} client(s)): {c['ratio']:.2f} "
              f"(spread {c['low']:.2f}-{c['high']:.2f})")  # fmt: skip
    for name in (LIST_200.name, "POST comment"):
        ratios = [r["ratio"] for r in rows if r["scenario"] == name]
        if not ratios:
            continue
        worst = min(ratios)
        verdict = "met" if worst >= GOAL else "NOT met"
        print(
            f"goal: {name} >= {GOAL} of bare aiohttp at every concurrency: {verdict}"
            f" (lowest median {worst:.2f})"
        )


def main() -> None:
    """Run the benchmark and print the table."""
    with tempfile.TemporaryDirectory(prefix="relay-bench-hub-") as tmp:
        before = os.getloadavg()[0]
        rows, costs = run(Path(tmp))
        report(rows, costs, [before, os.getloadavg()[0]])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--bare"]:
        serve_bare(sys.argv[2])
    else:
        main()
