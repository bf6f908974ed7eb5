"""The real GitHub CLI against the hub in GitHub Enterprise Server's shape.

``gh`` speaks to any host but github.com as to a GitHub Enterprise Server: HTTPS,
``/api/v3`` and ``/api/graphql``, the token from ``GH_ENTERPRISE_TOKEN``. One hub started
with ``--tls`` serves the module; ``relay hub env gh`` gives gh its environment; every
answer gh prints is compared with what the REST API says of the same issue. gh comes from
the OS packages (``make tools`` installs it); where it is missing the module is skipped
with the command that installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from relay.commands.hub_env import SYSTEM_BUNDLES

GH = shutil.which("gh")
pytestmark = pytest.mark.skipif(
    GH is None, reason="gh is missing: install it (apt-get install gh, or `make tools`)"
)


class Shape:
    """The module's hub: its HTTPS origin, its API in the Enterprise shape, gh's env."""

    def __init__(self, hub: Any, env: dict[str, str], ca: Path) -> None:
        self.hub, self.env, self.ca = hub, env, ca
        self.api = hub.url + "/api/v3"
        self.token = env["GH_ENTERPRISE_TOKEN"]
        self.context = ssl.create_default_context(cafile=str(ca))

    def rest(self, method: str, path: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
        """One REST call under ``/api/v3`` with alice's token: status, JSON, headers."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"token {self.token}", "Accept": "application/vnd.github+json"}
        req = urllib.request.Request(self.api + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=10, context=self.context) as resp:
                status, raw, head = resp.status, resp.read(), dict(resp.headers)
        except urllib.error.HTTPError as err:
            status, raw, head = err.code, err.read(), dict(err.headers)
        return status, json.loads(raw) if raw else None, {k.lower(): v for k, v in head.items()}

    def get(self, path: str) -> Any:
        status, body, _ = self.rest("GET", path)
        assert status == 200, (path, status, body)
        return body

    def gh(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        """Run gh with the hub's environment."""
        done = subprocess.run(
            [str(GH), *args], env=self.env, capture_output=True, text=True, timeout=60
        )
        if ok:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def gh_json(self, *args: str) -> Any:
        return json.loads(self.gh(*args).stdout)


@pytest.fixture(scope="module")
def shape(tls_hub: Any, tmp_path_factory: pytest.TempPathFactory) -> Shape:
    """The session's ``relay hub --tls``, a repository of alice's with a first commit, and
    gh's environment from ``relay hub env gh alice``."""
    root, hub = tmp_path_factory.mktemp("gh"), tls_hub
    said = subprocess.run(
        [sys.executable, "-m", "relay.cli", "hub", "env", "gh", "alice", "--data",
         str(hub.data_dir), "--json"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    made = json.loads(said.stdout)["data"]["env"]
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    env = {**keep, **made, "GH_CONFIG_DIR": str(root / "gh"), "NO_COLOR": "1"}
    env["GH_PAGER"] = env["PAGER"] = "cat"
    found = Shape(hub, env, Path(made["SSL_CERT_FILE"]))
    status, _, _ = found.rest("POST", "/user/repos", {"name": "thread", "auto_init": True})
    assert status == 201
    return found


def test_env_names_the_hub_as_an_enterprise_host(shape: Shape) -> None:
    host = shape.hub.url.removeprefix("https://")
    assert shape.env["GH_HOST"] == host
    assert shape.env["SSL_CERT_FILE"] == shape.env["GIT_SSL_CAINFO"] == str(shape.ca)
    # a bundle: the system's CAs (gh and git still reach other hosts), then the hub's own
    assert shape.ca == shape.hub.data_dir / "tls" / "ca-bundle.pem"
    bundle, own = shape.ca.read_text(), (shape.hub.data_dir / "tls" / "ca.pem").read_text()
    assert bundle.endswith(own)
    system = next((p for p in SYSTEM_BUNDLES if p.is_file()), None)
    if system is not None:
        assert bundle.startswith(system.read_text().rstrip("\n"))
        assert bundle.count("BEGIN CERTIFICATE") == system.read_text().count(
            "BEGIN CERTIFICATE"
        ) + own.count("BEGIN CERTIFICATE")
    status, root, headers = shape.rest("GET", "/")
    assert status == 200 and root["repository_url"] == shape.api + "/repos/{owner}/{repo}"
    assert "repo" in headers["x-oauth-scopes"].split(", ")


def test_gh_auth_status_passes(shape: Shape) -> None:
    done = shape.gh("auth", "status")
    said = done.stdout + done.stderr
    host = shape.env["GH_HOST"]
    assert f"Logged in to {host} as alice" in said, said
    me = shape.get("/user")
    assert me["login"] == "alice"
    _, _, headers = shape.rest("GET", "/user")
    for scope in headers["x-oauth-scopes"].split(", "):
        assert scope in said  # gh lists the token's scopes as the hub said them


def test_gh_issue_create_view_and_list_say_what_rest_says(shape: Shape) -> None:
    done = shape.gh("issue", "create", "-R", "alice/thread", "-t", "Build fails", "-b", "Why?")
    url = done.stdout.strip().splitlines()[-1]
    number = int(url.rsplit("/", 1)[1])
    rest = shape.get(f"/repos/alice/thread/issues/{number}")
    assert url == rest["html_url"] == f"{shape.hub.url}/alice/thread/issues/{number}"
    assert (rest["title"], rest["body"], rest["user"]["login"]) == ("Build fails", "Why?", "alice")
    shape.rest("POST", f"/repos/alice/thread/issues/{number}/comments", {"body": "TASK 1"})
    shape.rest("POST", f"/repos/alice/thread/issues/{number}/labels", {"labels": ["bug"]})

    fields = "number,title,body,state,author,labels,comments,url"
    seen = shape.gh_json("issue", "view", str(number), "-R", "alice/thread", "--json", fields)
    comments = shape.get(f"/repos/alice/thread/issues/{number}/comments")
    labels = shape.get(f"/repos/alice/thread/issues/{number}/labels")
    assert seen["number"] == number and seen["url"] == rest["html_url"]
    assert (seen["title"], seen["body"], seen["state"]) == ("Build fails", "Why?", "OPEN")
    assert seen["author"]["login"] == rest["user"]["login"]
    assert [lab["name"] for lab in seen["labels"]] == [lab["name"] for lab in labels]
    assert [(c["author"]["login"], c["body"], c["url"]) for c in seen["comments"]] == [
        (c["user"]["login"], c["body"], c["html_url"]) for c in comments
    ]

    text = shape.gh("issue", "view", str(number), "-R", "alice/thread", "--comments").stdout
    for comment in comments:
        assert f"author:\t{comment['user']['login']}\n" in text and f"\n{comment['body']}\n" in text

    listed = shape.gh_json(
        "issue", "list", "-R", "alice/thread", "--state", "all", "--json", "number,title,state"
    )
    issues = shape.get("/repos/alice/thread/issues?state=all")
    assert [(i["number"], i["title"], i["state"]) for i in listed] == [
        (i["number"], i["title"], i["state"].upper()) for i in issues
    ]


def test_gh_comment_close_and_reopen_write_what_rest_reads(shape: Shape) -> None:
    _, made, _ = shape.rest("POST", "/repos/alice/thread/issues", {"title": "Claim", "body": "b"})
    n = str(made["number"])
    said = shape.gh("issue", "comment", n, "-R", "alice/thread", "-b", "RESULT 1").stdout
    comments = shape.get(f"/repos/alice/thread/issues/{n}/comments")
    assert [(c["body"], c["user"]["login"]) for c in comments] == [("RESULT 1", "alice")]
    assert comments[0]["html_url"] in said

    shape.gh("issue", "close", n, "-R", "alice/thread")
    closed = shape.get(f"/repos/alice/thread/issues/{n}")
    assert closed["state"] == "closed" and closed["closed_by"]["login"] == "alice"
    shape.gh("issue", "reopen", n, "-R", "alice/thread")
    assert shape.get(f"/repos/alice/thread/issues/{n}")["state"] == "open"
    events = shape.get(f"/repos/alice/thread/issues/{n}/events")
    assert [(e["event"], e["actor"]["login"]) for e in events] == [
        ("closed", "alice"),
        ("reopened", "alice"),
    ]


def test_gh_label_list_and_repo_view_match_rest(shape: Shape) -> None:
    shape.rest("POST", "/repos/alice/thread/labels", {"name": "relay:job", "color": "0e8a16"})
    listed = shape.gh_json("label", "list", "-R", "alice/thread", "--json", "name,color")
    labels = shape.get("/repos/alice/thread/labels?per_page=100")
    assert sorted((lab["name"], lab["color"]) for lab in listed) == sorted(
        (lab["name"], lab["color"]) for lab in labels
    )
    assert "relay:job" in {lab["name"] for lab in listed}

    fields = "name,owner,description,url,isPrivate,defaultBranchRef,nameWithOwner"
    seen = shape.gh_json("repo", "view", "alice/thread", "--json", fields)
    rest = shape.get("/repos/alice/thread")
    assert seen["nameWithOwner"] == rest["full_name"] and seen["url"] == rest["html_url"]
    assert seen["owner"]["login"] == rest["owner"]["login"]
    assert seen["isPrivate"] == rest["private"]
    assert seen["defaultBranchRef"]["name"] == rest["default_branch"]
    text = shape.gh("repo", "view", "alice/thread").stdout
    assert "name:\talice/thread" in text


def test_gh_repo_clone_fetches_the_hubs_git(shape: Shape, tmp_path: Path) -> None:
    where = tmp_path / "thread"
    shape.gh("repo", "clone", "alice/thread", str(where))
    assert (where / "README.md").read_text().startswith("# thread")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert shape.get("/repos/alice/thread/branches/main")["commit"]["sha"] == head


def test_gh_api_graphql_answers_what_rest_says(shape: Shape) -> None:
    _, made, _ = shape.rest("POST", "/repos/alice/thread/issues", {"title": "Q", "body": "?"})
    number = made["number"]
    shape.rest("POST", f"/repos/alice/thread/issues/{number}/comments", {"body": "one"})
    shape.rest("POST", f"/repos/alice/thread/issues/{number}/comments", {"body": "two"})
    query = """
      query($owner: String!, $name: String!, $number: Int!) {
        repository(owner: $owner, name: $name) {
          issue(number: $number) {
            id number title body state url author { login }
            comments(first: 10) { totalCount nodes { body fullDatabaseId author { login } } }
          }
        }
      }"""
    answer = shape.gh_json(
        "api", "graphql", "-f", f"query={query}", "-f", "owner=alice", "-f", "name=thread",
        "-F", f"number={number}",
    )  # fmt: skip
    issue = answer["data"]["repository"]["issue"]
    rest = shape.get(f"/repos/alice/thread/issues/{number}")
    comments = shape.get(f"/repos/alice/thread/issues/{number}/comments")
    assert (issue["id"], issue["number"], issue["title"], issue["body"], issue["url"]) == (
        rest["node_id"], rest["number"], rest["title"], rest["body"], rest["html_url"]
    )  # fmt: skip
    assert issue["state"] == rest["state"].upper()
    assert issue["author"]["login"] == rest["user"]["login"]
    assert issue["comments"]["totalCount"] == rest["comments"] == 2
    nodes = issue["comments"]["nodes"]
    assert [(c["body"], c["fullDatabaseId"], c["author"]["login"]) for c in nodes] == [
        (c["body"], str(c["id"]), c["user"]["login"]) for c in comments
    ]
    bad = shape.gh("api", "graphql", "-f", "query={ viewer { nope } }", ok=False)
    assert bad.returncode != 0 and "Field 'nope' doesn't exist on type 'User'" in bad.stderr
