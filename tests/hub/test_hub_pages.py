"""The hub's web pages, read as people read them: in a real headless Chromium (the browser
tests) and over plain HTTP (status codes and headers), against the session's `relay hub`.
"""

from __future__ import annotations

import http.client
import re
import time
import urllib.parse
from pathlib import Path
from typing import Any

from browser import Browser
from hubcalls import git, git_url

MARKS = "Object.keys(document.documentElement.dataset).filter(k => k.startsWith('pwned'))"
PAYLOAD = """Ordinary words stay.

<script>document.documentElement.dataset.pwnedScript = '1'</script>
<img src="nowhere.png" onerror="document.documentElement.dataset.pwnedOnerror = '1'">
<a href="javascript:void(document.documentElement.dataset.pwnedLink = '1')">a link</a>
<svg><animate onbegin="document.documentElement.dataset.pwnedSvg = '1'" dur="1s"/></svg>
<iframe srcdoc="<script>parent.document.documentElement.dataset.pwnedFrame = '1'</script>">
</iframe>
[a markdown link](javascript:void(document.documentElement.dataset.pwnedMarkdown='1'))
<details open ontoggle="document.documentElement.dataset.pwnedToggle = '1'"><summary>more
</summary>inside</details>
"""


def _request(
    url: str, method: str, path: str, *, headers: dict[str, str] | None = None, body: str = ""
) -> tuple[int, dict[str, str], str]:
    """One request without following redirects: status, lower-cased headers, text."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request(method, path, body=body or None, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
    finally:
        conn.close()


def _thread(api: Any, token: str, full: str, **issue: Any) -> int:
    made = api(token, "POST", f"/repos/{full}/issues", {"title": "A job", **issue})
    assert made.status == 201, made.body
    return int(made.body["number"])


def _click_all_links(browser: Browser, within: str = "body") -> None:
    """Click every link in ``within`` (a javascript: URL runs when clicked)."""
    browser.evaluate(f"document.querySelectorAll({within + ' a'!r}).forEach(a => a.click()); 0")
    time.sleep(0.3)


def test_nothing_in_a_comment_runs_script(
    hub: Any, api: Any, alice: str, unique: str, browser: Browser, tmp_path: Path
) -> None:
    full = f"alice/xss-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": full.split("/")[1]}).status == 201
    n = _thread(api, alice, full, body=PAYLOAD)
    assert api(alice, "POST", f"/repos/{full}/issues/{n}/comments", {"body": PAYLOAD}).status == 201
    url = f"{hub.url}/{full}/issues/{n}"
    status, headers, page = _request(hub.url, "GET", f"/{full}/issues/{n}")
    assert status == 200 and "default-src 'none'" in headers["content-security-policy"]
    assert "script-src" not in headers["content-security-policy"]  # none at all

    # the control: the same payload in a page of its own, unsanitised and without a
    # policy, does run — so the checks below can see it when it does
    control = tmp_path / "control.html"
    control.write_text(f"<!DOCTYPE html><html><body>{PAYLOAD}</body></html>")
    browser.open(control.as_uri())
    _click_all_links(browser)
    ran = set(browser.evaluate(MARKS))
    assert {"pwnedScript", "pwnedOnerror", "pwnedLink"} <= ran, ran

    # the hub's page: nothing runs, the words are there
    assert browser.open(url) == 200
    _click_all_links(browser, ".markdown-body")
    assert browser.evaluate("location.href") == url
    assert browser.evaluate(MARKS) == []
    assert browser.text().count("Ordinary words stay.") == 2
    # and the sanitiser alone holds: the page's HTML served with no policy at all
    bare = tmp_path / "sanitised.html"
    bare.write_text(page)
    browser.open(bare.as_uri())
    _click_all_links(browser, ".markdown-body")
    assert browser.evaluate(MARKS) == []
    attack = r"<script|<iframe|\son\w+=|(href|src)=\"javascript:"
    assert not re.search(attack, page, re.I), re.search(attack, page, re.I)


def test_a_thread_shows_the_conversation_as_github_does(
    hub: Any, api: Any, alice: str, bob: str, unique: str, browser: Browser
) -> None:
    full = f"alice/thread-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": full.split("/")[1]}).status == 201
    r = f"/repos/{full}"
    made = api(alice, "POST", f"{r}/labels", {"name": "working", "color": "1d76db"})
    assert made.status == 201
    body = (
        "The body.\n\n<!-- relay:job\nsecret-of-the-machines\n-->\n| a | b |\n|---|--:|\n| 1 | 2 |"
    )
    n = _thread(api, alice, full, body=body, labels=["working"])
    first = api(alice, "POST", f"{r}/issues/{n}/comments", {"body": "- [x] done\n- [ ] not yet"})
    time.sleep(1.1)  # an edit a second later is an edit, as GitHub shows it
    api(alice, "PATCH", f"{r}/issues/comments/{first.body['id']}", {"body": "~~gone~~ kept"})
    api(alice, "PUT", f"{r}/issues/{n}/labels", {"labels": ["awaiting:controller"]})
    second = api(bob, "POST", f"{r}/issues/{n}/comments", {"body": "bob's **word**"})
    api(alice, "POST", f"{r}/issues/comments/{second.body['id']}/reactions", {"content": "rocket"})
    api(alice, "POST", f"{r}/issues/{n}/reactions", {"content": "+1"})

    assert browser.open(second.body["html_url"]) == 200  # every html_url opens a page
    assert browser.evaluate(f"!!document.getElementById('issuecomment-{second.body['id']}')")
    assert browser.open(api(alice, "GET", f"{r}/issues/{n}").body["html_url"]) == 200
    text = re.sub(r"\s+", " ", browser.text())
    assert "secret-of-the-machines" not in text and "relay:job" not in text
    order = [text.find(s) for s in ("The body.", "kept", "added awaiting:controller", "bob's word")]
    assert -1 not in order and order == sorted(order), order
    assert "removed working" in text
    edited = "!!document.querySelector('#issuecomment-{} .comment-head .edited')"
    assert browser.evaluate(edited.format(first.body["id"])), "the edited comment says so"
    assert not browser.evaluate(edited.format(second.body["id"]))
    body_edited = "!!document.querySelector('#issue-body .comment-head .edited')"
    assert not browser.evaluate(body_edited), "comments and labels do not edit the body"
    api(alice, "PATCH", f"{r}/issues/{n}", {"body": body + "\n\nMore."})
    assert browser.open(f"{hub.url}/{full}/issues/{n}") == 200
    assert browser.evaluate(body_edited), "an edit of the body itself does"
    assert browser.evaluate("document.querySelector('#issue-body td.align-right').innerText") == "2"
    assert browser.evaluate("document.querySelector('.markdown-body s').innerText") == "gone"
    assert "🚀 1" in text and "👍 1" in text
    pill = "getComputedStyle(document.querySelector('.sidebar .label')).backgroundColor"
    assert browser.evaluate(pill) == "rgb(237, 237, 237)"  # the hub's default label colour
    refresh = "document.querySelector('meta[http-equiv=refresh]')"
    assert browser.evaluate(f"{refresh}.content") == "5"  # open: it follows the job
    light = browser.evaluate("getComputedStyle(document.body).backgroundColor")
    browser.call(
        "Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}]
    )
    dark = browser.evaluate("getComputedStyle(document.body).backgroundColor")
    browser.call("Emulation.setEmulatedMedia", features=[])
    assert (light, dark) == ("rgb(255, 255, 255)", "rgb(13, 17, 23)")

    api(alice, "PATCH", f"{r}/issues/{n}", {"state": "closed"})
    assert browser.open(f"{hub.url}/{full}/issues/{n}") == 200
    assert browser.evaluate(refresh) is None  # closed: no more refreshing
    assert "alice closed this" in re.sub(r"\s+", " ", browser.text())


def test_a_browser_signs_in_with_a_token_to_read_a_private_repository(
    hub: Any, api: Any, alice: str, unique: str, browser: Browser, tmp_path: Path
) -> None:
    name = f"private-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": name, "private": True}).status == 201
    n = _thread(api, alice, f"alice/{name}", body="for alice's eyes")
    page = f"/alice/{name}/issues/{n}"
    fresh = Browser(tmp_path / "profile")  # no cookie of the other tests
    try:
        assert fresh.open(f"{hub.url}{page}") == 404
        assert "for alice's eyes" not in fresh.text()
        assert fresh.open(f"{hub.url}/login?return_to={urllib.parse.quote(page)}") == 200
        fresh.evaluate(f"document.getElementById('token').value = {alice!r}; 0")
        fresh.evaluate("document.querySelector('form[action=\"/session\"]').submit(); 0")
        deadline = time.monotonic() + 10
        while fresh.evaluate("location.pathname") != page and time.monotonic() < deadline:
            time.sleep(0.05)
        fresh.open(f"{hub.url}{page}")
        assert "for alice's eyes" in fresh.text() and "Signed in as alice" in fresh.text()
    finally:
        fresh.close()
    form = urllib.parse.urlencode({"token": "ghp_" + "x" * 36, "return_to": page})
    kind = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _, text = _request(hub.url, "POST", "/session", headers=kind, body=form)
    assert status == 401 and "Incorrect token." in text
    form = urllib.parse.urlencode({"token": alice, "return_to": "//elsewhere.example/"})
    status, headers, _ = _request(hub.url, "POST", "/session", headers=kind, body=form)
    assert status == 303 and headers["location"] == "/"  # never off the hub
    assert "httponly" in headers["set-cookie"].lower()
    cookie = headers["set-cookie"].split(";", 1)[0]
    assert _request(hub.url, "GET", page, headers={"Cookie": cookie})[0] == 200
    status, headers, _ = _request(hub.url, "POST", "/logout", headers={"Cookie": cookie})
    assert status == 303 and 'user_session=""' in headers["set-cookie"]


def test_the_list_filters_by_state_label_and_words_newest_activity_first(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    full = f"alice/list-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": full.split("/")[1]}).status == 201
    one = _thread(api, alice, full, title="first job", labels=["working"])
    two = _thread(api, alice, full, title="second job", labels=["needs human"])
    three = _thread(api, alice, full, title="third thing")
    api(alice, "PATCH", f"/repos/{full}/issues/{three}", {"state": "closed"})
    api(alice, "POST", f"/repos/{full}/issues/{one}/comments", {"body": "news"})  # newest now

    def titles(query: str) -> list[str]:
        status, _, page = _request(hub.url, "GET", f"/{full}/issues{query}")
        assert status == 200, query
        return re.findall(r'class="issue-title" href="[^"]+">([^<]+)</a>', page)

    assert titles("") == ["first job", "second job"]  # open, newest activity first
    assert titles("?state=closed") == ["third thing"]
    assert titles("?state=all") == ["first job", "third thing", "second job"]
    assert titles("?labels=working") == ["first job"]
    assert titles("?" + urllib.parse.urlencode({"q": 'is:open label:"needs human"'})) == [
        "second job"
    ]
    assert titles("?q=is:closed") == ["third thing"]
    assert titles("?q=is:issue+job") == ["first job", "second job"]
    assert titles("?q=label:absent") == []
    _, _, page = _request(hub.url, "GET", f"/{full}/issues?labels=working")
    assert "1 Open" in page and "0 Closed" in page
    del two


def test_an_unchanged_page_answers_304_and_pages_cost_no_api_budget(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    full = f"alice/etag-{unique}"
    assert api(alice, "POST", "/user/repos", {"name": full.split("/")[1]}).status == 201
    n = _thread(api, alice, full, body="hello")
    auth = {"Authorization": f"token {alice}"}
    before = api(alice, "GET", "/rate_limit").body["resources"]["core"]["used"]
    status, headers, _ = _request(hub.url, "GET", f"/{full}/issues/{n}", headers=auth)
    etag = headers["etag"]
    again = _request(hub.url, "GET", f"/{full}/issues/{n}", headers={**auth, "If-None-Match": etag})
    assert (status, again[0]) == (200, 304)
    api(alice, "POST", f"/repos/{full}/issues/{n}/comments", {"body": "news"})
    status, headers, _ = _request(
        hub.url, "GET", f"/{full}/issues/{n}", headers={**auth, "If-None-Match": etag}
    )
    assert status == 200 and headers["etag"] != etag
    after = api(alice, "GET", "/rate_limit").body["resources"]["core"]["used"]
    assert after - before == 1  # the comment; the three page views cost nothing
    assert _request(hub.url, "GET", f"/{full}/issues/999")[0] == 404


def test_tree_blob_and_raw_pages_read_the_hosted_git(
    hub: Any, api: Any, alice: str, unique: str, tmp_path: Path
) -> None:
    name = f"files-{unique}"
    full = f"alice/{name}"
    assert api(alice, "POST", "/user/repos", {"name": name}).status == 201
    clone = tmp_path / "clone"
    git("init", "-q", "-b", "main", str(clone))
    (clone / "docs" / "logs").mkdir(parents=True)
    (clone / "docs" / "logs" / "result-001.log").write_text("line one\n<b>two</b>\n")
    (clone / "README.md").write_text("# Title\n\n| x |\n|---|\n| y |\n")
    git("add", ".", cwd=clone)
    git("commit", "-q", "-m", "files", cwd=clone)
    git("push", "-q", git_url(hub.url, full, alice), "HEAD:main", "HEAD:feature/x", cwd=clone)
    sha = git("rev-parse", "HEAD", cwd=clone).stdout.strip()

    status, _, home = _request(hub.url, "GET", f"/{full}")
    assert status == 200 and ">docs</a>" in home and "<h1>Title</h1>" in home  # README
    status, _, folder = _request(hub.url, "GET", f"/{full}/tree/feature/x/docs")
    assert status == 200 and f'href="/{full}/tree/feature/x/docs/logs"' in folder
    status, _, blob = _request(hub.url, "GET", f"/{full}/blob/{sha}/docs/logs/result-001.log")
    assert status == 200 and "&lt;b&gt;two&lt;/b&gt;" in blob and 'id="L2"' in blob
    status, headers, raw = _request(hub.url, "GET", f"/{full}/raw/{sha}/docs/logs/result-001.log")
    assert (status, raw) == (200, "line one\n<b>two</b>\n")
    assert headers["content-type"].startswith("text/plain")
    assert "sandbox" in headers["content-security-policy"]
    status, _, md = _request(hub.url, "GET", f"/{full}/blob/main/README.md")
    assert status == 200 and "<table>" in md  # markdown files are shown rendered
    status, headers, _ = _request(hub.url, "GET", f"/{full}/tree/main/README.md")
    assert status == 302 and headers["location"] == f"/{full}/blob/main/README.md"
    for missing in ("blob/main/absent", "blob/nobranch/README.md", "tree/main/../..",
                    "blob/main/docs/../README.md", "raw/--output=x/README.md"):  # fmt: skip
        assert _request(hub.url, "GET", f"/{full}/{missing}")[0] == 404, missing


def test_user_pages_and_bad_paths_answer_as_pages_never_500(
    hub: Any, api: Any, alice: str, unique: str
) -> None:
    full = f"alice/odd-{unique}"
    assert (
        api(alice, "POST", "/user/repos", {"name": full.split("/")[1], "private": False}).status
        == 201
    )
    n = _thread(api, alice, full, body="x")
    owner = api(alice, "GET", f"/repos/{full}/issues/{n}").body["user"]
    status, headers, text = _request(hub.url, "GET", urllib.parse.urlsplit(owner["html_url"]).path)
    assert status == 200 and "text/html" in headers["content-type"], "a user's html_url is a page"
    assert full in text
    assert _request(hub.url, "GET", "/no-such-user-here")[0] == 404
    for path in (
        f"/{full}/raw/main/README.md%00",
        f"/{full}/blob/main%00/x",
        f"/{full}/issues?page=99999999999999999999999",
        f"/{full}/issues?q=" + "+".join(f"w{i}" for i in range(600)),
        f"/{full}/issues?q=label:" + ",".join(f"l{i}" for i in range(1200)),
    ):
        status = _request(hub.url, "GET", path)[0]
        assert status in (200, 404), (path, status)
