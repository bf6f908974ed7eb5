"""What a real hub refuses as GitHub does: a body nested too deep is 400 "Problems parsing
JSON" (never a 500), and a repository may not be named ``.`` or ``..`` — neither when
created nor by a rename, which is 422 Validation Failed naming the field ``name``."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest


def raw_call(url: str, token: str, method: str, path: str, data: bytes) -> tuple[int, Any]:
    """One request with a body sent as it is (not encoded from Python)."""
    headers = {"Authorization": f"token {token}", "Content-Type": "application/json"}
    req = urllib.request.Request(f"{url}{path}", data, headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


@pytest.mark.parametrize("depth", [100, 10_000, 200_000])
def test_a_deeply_nested_body_is_problems_parsing_json(
    hub: Any, api: Any, alice: str, unique: str, depth: int
) -> None:
    assert api(alice, "POST", "/user/repos", {"name": f"deep-{unique}"}).status == 201
    base = f"/repos/alice/deep-{unique}"
    for path, method in ((f"{base}/issues", "POST"), ("/user/repos", "POST"), (base, "PATCH")):
        body = b'{"title": ' + b"[" * depth + b"]" * depth + b"}"
        status, answer = raw_call(hub.url, alice, method, path, body)
        assert status == 400, (path, status, answer)
        assert answer["message"] == "Problems parsing JSON"
    # brackets inside strings are text, however many
    deep_string = b'{"title": "' + b"[" * 200 + b'", "body": "' + b"{" * 5000 + b'"}'
    status, answer = raw_call(hub.url, alice, "POST", f"{base}/issues", deep_string)
    assert status == 201, answer


@pytest.mark.parametrize("name", [".", ".."])
def test_a_repository_named_dot_or_dot_dot_is_refused(
    api: Any, alice: str, unique: str, name: str
) -> None:
    created = api(alice, "POST", "/user/repos", {"name": name})
    assert created.status == 422, created.body
    assert created.body["message"] == "Validation Failed"
    assert [e["field"] for e in created.body["errors"]] == ["name"]
    assert api(alice, "POST", "/user/repos", {"name": f"ren-{unique}"}).status == 201
    renamed = api(alice, "PATCH", f"/repos/alice/ren-{unique}", {"name": name})
    assert renamed.status == 422, renamed.body
    assert renamed.body["message"] == "Validation Failed"
    assert [e["field"] for e in renamed.body["errors"]] == ["name"]
    assert api(alice, "GET", f"/repos/alice/ren-{unique}").status == 200, "still there"


def test_a_rename_moves_the_name_and_refuses_one_taken(api: Any, alice: str, unique: str) -> None:
    for name in (f"a-{unique}", f"b-{unique}"):
        assert api(alice, "POST", "/user/repos", {"name": name}).status == 201
    taken = api(alice, "PATCH", f"/repos/alice/a-{unique}", {"name": f"b-{unique}"})
    assert taken.status == 422 and taken.body["errors"][0]["field"] == "name"
    moved = api(alice, "PATCH", f"/repos/alice/a-{unique}", {"name": f"c-{unique}"})
    assert moved.status == 200 and moved.body["name"] == f"c-{unique}", moved.body
    assert api(alice, "GET", f"/repos/alice/c-{unique}").status == 200
    followed = api(alice, "GET", f"/repos/alice/a-{unique}")  # GitHub's 301, followed
    assert followed.status == 200 and followed.body["name"] == f"c-{unique}"
