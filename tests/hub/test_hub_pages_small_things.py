"""The pages' small things: counts agree with their nouns, a path no page serves is the
404 page (API paths keep GitHub's JSON), file icons need no emoji font, and a claim is
shown as ended once its job is closed."""

from __future__ import annotations

import json
import re
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from browser import Browser
from hubcalls import git, git_url

from relay.protocol.messages import ClaimMsg, render_message

EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf]")  # what needs an emoji font


def get(url: str, path: str) -> tuple[int, str, str]:
    """GET without a token: status, content type, text."""
    import http.client

    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Accept": "text/html"})
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read().decode()
    finally:
        conn.close()


def words(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_counts_agree_with_their_nouns(hub: Any, api: Any, unique: str, tmp_path: Path) -> None:
    login = f"p{unique}"
    token = hub.token(login)
    name = "plurals"
    assert api(token, "POST", "/user/repos", {"name": name}).status == 201
    full = f"{login}/{name}"
    made = api(token, "POST", f"/repos/{full}/issues", {"title": "one"})
    assert made.status == 201
    status, _, home = get(hub.url, f"/{login}")
    assert status == 200
    assert "1 open issue" in words(home) and "1 open issues" not in words(home)
    api(token, "POST", f"/repos/{full}/issues", {"title": "two"})
    assert "2 open issues" in words(get(hub.url, f"/{login}")[2])
    clone = tmp_path / "clone"
    git("init", "-q", "-b", "main", str(clone))
    (clone / "one.txt").write_text("a single line\n")
    git("add", ".", cwd=clone)
    git("commit", "-q", "-m", "one line", cwd=clone)
    git("push", "-q", git_url(hub.url, full, token), "HEAD:main", cwd=clone)
    blob = words(get(hub.url, f"/{full}/blob/main/one.txt")[2])
    assert "1 line ·" in blob and "1 lines" not in blob


def test_a_path_no_page_serves_is_the_404_page_and_api_paths_keep_json(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    full = f"alice/nopage-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": full.split("/")[1]}).status == 201
    for path in (f"/{full}/pulls", f"/{full}/settings", f"/{full}/issues/new", "/alice/x/y/z"):
        status, kind, text = get(hub.url, path)
        assert (status, kind.split(";")[0]) == (404, "text/html"), (path, kind, text[:200])
        assert "Page not found" in text and "<!doctype html>" in text.lower()
    for path in (f"/repos/{full}/pulls-nope", "/user/repos/extra", "/repos/a/b/c/d/e"):
        status, kind, text = get(hub.url, path)
        assert (status, kind.split(";")[0]) == (404, "application/json"), (path, kind)
        assert json.loads(text)["message"] == "Not Found"


def test_file_icons_need_no_emoji_font(
    hub: Any, api: Any, alice: str, unique: str, tmp_path: Path, browser: Browser
) -> None:
    name = f"icons-{unique}"
    full = f"alice/{name}"
    assert api(alice, "POST", "/user/repos", {"name": name}).status == 201
    clone = tmp_path / "clone"
    git("init", "-q", "-b", "main", str(clone))
    (clone / "docs").mkdir()
    (clone / "docs" / "a.md").write_text("# a\n")
    (clone / "b.txt").write_text("b\n")
    git("add", ".", cwd=clone)
    git("commit", "-q", "-m", "files", cwd=clone)
    git("push", "-q", git_url(hub.url, full, alice), "HEAD:main", cwd=clone)
    status, _, html = get(hub.url, f"/{full}/tree/main")
    table = html[html.index('<table class="files">') :]
    table = table[: table.index("</table>")]
    assert status == 200 and not EMOJI.search(table), EMOJI.findall(table)
    assert table.count("<svg") == 2
    assert browser.open(f"{hub.url}/{full}/tree/main") == 200
    sizes = browser.evaluate(
        "[...document.querySelectorAll('table.files td.icon svg')]"
        ".map(s => { const r = s.getBoundingClientRect(); return [r.width, r.height]; })"
    )
    assert sizes == [[16, 16], [16, 16]]  # drawn, whatever fonts the machine has


def test_a_claim_is_shown_as_ended_once_its_job_is_closed(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    full = f"alice/claim-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": full.split("/")[1]}).status == 201
    r = f"/repos/{full}"
    n = int(api(alice, "POST", f"{r}/issues", {"title": "A job"}).body["number"])
    now = datetime.now(UTC).replace(microsecond=0)
    claim = ClaimMsg(
        issue=n,
        node="win-desktop",
        task=1,
        claimed_at=now,
        lease_until=now + timedelta(hours=1),
        alive_until=now + timedelta(minutes=5),
    )
    body = render_message(claim)  # the claim exactly as a worker posts it
    assert "Still running;" in body
    assert api(alice, "POST", f"{r}/issues/{n}/comments", {"body": body}).status == 201
    page = words(get(hub.url, f"/{full}/issues/{n}")[2])
    assert "Still running; the next sign of life is due by" in page  # open: it may run
    api(alice, "PATCH", f"{r}/issues/{n}", {"state": "closed"})
    page = words(get(hub.url, f"/{full}/issues/{n}")[2])
    assert "Still running" not in page
    assert "Ended: the job is closed (its last sign of life was due by" in page
    kept = api(alice, "GET", f"{r}/issues/{n}/comments").body[0]["body"]
    assert kept == body  # the comment itself is as it was written; only the page says so
