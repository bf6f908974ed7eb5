"""The master section: parse/render round trips and in-place edits that keep every other byte."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay.protocol import (
    Account,
    Master,
    Node,
    Scope,
    add_node,
    has_section,
    parse_master,
    set_scheduler,
)
from relay.protocol.master import InvalidValue, MasterSectionError, render_master
from relay.protocol.master_text import section_text, set_section

NAMES = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,15}\Z")
CELL = st.text(
    st.characters(blacklist_characters="|`\r\n", blacklist_categories=("Cs", "Zl", "Zp", "Cc")),
    max_size=20,
).map(str.strip)
ACCOUNTS = st.builds(
    Account,
    id=st.integers(1, 10**9),
    login=st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9-]{0,10}(\[bot\])?\Z"),
)
NODES = st.builds(
    Node,
    name=NAMES,
    os=CELL,
    accounts=st.lists(ACCOUNTS, max_size=3).map(tuple),
    scheduler=CELL.filter(bool) | st.just("none (declined)"),
    public_key=CELL,
)
WORDS = st.lists(st.from_regex(r"\A[a-z][a-z0-9 _.-]{0,10}[a-z0-9]\Z"), max_size=4).map(tuple)
PATTERNS = st.lists(
    st.text(
        st.characters(blacklist_characters="`\r\n", blacklist_categories=("Cs", "Zl", "Zp", "Cc")),
        min_size=1,
        max_size=15,
    )
    .map(str.strip)
    .filter(bool),
    max_size=3,
).map(tuple)
SCOPES = st.builds(
    Scope,
    delegable=WORDS,
    allowed=WORDS,
    destructive=st.sampled_from(["authorized-by-human", "forbidden"]),
    redact=PATTERNS,
    redact_allow=PATTERNS,
    destructive_commands=PATTERNS,
)
MASTERS = st.builds(
    Master,
    repository=st.from_regex(r"\A[a-z0-9][a-z0-9_.-]{0,10}/[a-z0-9][a-z0-9_.-]{0,10}\Z"),
    api_url=st.sampled_from(["https://api.github.com", "http://127.0.0.1:8765"]),
    nodes=st.lists(NODES, max_size=4, unique_by=lambda n: n.name).map(tuple),
    scope=SCOPES,
    protocol_text=st.sampled_from(
        ["Read the rules.\n\nThen act.", "x", Master.model_fields["protocol_text"].default]
    ),
)
# Text a person might keep before the section: anything but a '## Relay' heading or an
# unclosed code fence (which would swallow whatever follows it).
AROUND = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).filter(
    lambda t: "## Relay" not in t and "```" not in t and "~~~" not in t
)


def loop_md(before: str, master: Master, after: str) -> str:
    head = f"# Loop\n\n{before}\n\n" if before else ""
    tail = f"\n## Notes\n\n{after}\n" if after else ""
    return head + render_master(master) + tail


@given(MASTERS)
@settings(max_examples=200)
def test_render_then_parse_gives_the_model_back(master: Master) -> None:
    assert parse_master(render_master(master)) == master
    assert render_master(parse_master(render_master(master))) == render_master(master)


@given(
    MASTERS,
    NODES,
    st.text(max_size=80).filter(lambda t: "#" not in t and "`" not in t and "~" not in t),
    st.text(max_size=80),
)
@settings(max_examples=200)
def test_add_node_inserts_one_row_and_keeps_every_other_byte(
    master: Master, node: Node, before: str, after: str
) -> None:
    text = loop_md(before, master, after)
    if master.node(node.name) is not None:
        with pytest.raises(InvalidValue, match="already"):
            add_node(text, node)
        return
    edited = add_node(text, node)
    old, new = text.splitlines(keepends=True), edited.splitlines(keepends=True)
    assert len(new) == len(old) + 1
    inserted = next(i for i, (a, b) in enumerate(zip([*old, ""], new, strict=False)) if a != b)
    assert new[:inserted] + new[inserted + 1 :] == old
    assert parse_master(edited).nodes == (*master.nodes, node)


@given(MASTERS, st.data())
@settings(max_examples=200)
def test_set_scheduler_changes_one_line_only(master: Master, data: st.DataObject) -> None:
    if not master.nodes:
        return
    node = data.draw(st.sampled_from(master.nodes))
    scheduler = data.draw(
        st.sampled_from(["cron", "launchd", "none (declined)", "systemd user timer"])
    )
    text = loop_md("intro", master, "after")
    edited = set_scheduler(text, node=node.name, scheduler=scheduler)
    changed = [
        (a, b) for a, b in zip(text.splitlines(), edited.splitlines(), strict=True) if a != b
    ]
    assert len(changed) <= 1
    assert parse_master(edited).node(node.name) == node.model_copy(update={"scheduler": scheduler})


@given(AROUND, MASTERS)
@settings(max_examples=100)
def test_set_section_appends_once_and_then_replaces_in_place(text: str, master: Master) -> None:
    once = set_section(text, master)
    assert once.startswith(text) and has_section(once)
    assert parse_master(once) == master
    assert set_section(once, master) == once


def test_hand_edits_inside_and_around_the_section_survive_edits() -> None:
    master = Master(
        repository="o/r", nodes=(Node(name="a", accounts=(Account(id=1, login="al"),)),)
    )
    text = (
        "# Loop\r\n\r\nmine\r\n\r\n"
        + render_master(master).replace("### Shared scope", "Our own note.\n\n### Shared scope")
        + "\n## Later\n\n```\n## Relay\n```\n"
    )
    edited = set_scheduler(add_node(text, Node(name="b")), node="a", scheduler="cron")
    assert "Our own note." in edited and edited.startswith("# Loop\r\n\r\nmine\r\n")
    assert edited.endswith("\n## Later\n\n```\n## Relay\n```\n")
    assert [n.name for n in parse_master(edited).nodes] == ["a", "b"]
    assert "| a |  | al (1) | cron |  |" in edited


def test_the_shared_scope_may_list_its_own_destructive_commands() -> None:
    plain = render_master(Master(repository="o/r"))
    assert "Destructive commands" not in plain  # older sections keep their bytes
    text = plain.replace(
        "- Destructive steps: authorized-by-human\n",
        "- Destructive steps: authorized-by-human\n"
        "- Destructive commands: `./deploy.sh`, `make release`\n",
    )
    assert parse_master(text).scope.destructive_commands == ("./deploy.sh", "make release")
    assert render_master(parse_master(text)) == text


def test_a_table_without_the_key_column_still_takes_new_rows() -> None:
    section = (
        render_master(Master(repository="o/r"))
        .replace(" public key |", "")
        .replace(" --- |\n", "\n", 1)
    )
    edited = add_node(section, Node(name="b", os="Linux"))
    assert "| b | Linux |  | none |\n" in edited
    assert parse_master(edited).nodes == (Node(name="b", os="Linux"),)


REPO = "## Relay\n\n### Repository\n\n- Repository: `{}`\n- API base URL: `https://x`\n\n"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("# Loop\n\nNo section.\n", "no '## Relay' section"),
        ("## Relay\n\n### Nodes\n\n| node |\n| --- |\n", "lacks 'repository'"),
        (REPO.format("o/r") + "### Nodes\n\nnone\n\n### Shared scope\n", "node table"),
        (REPO.format("o r") + "### Nodes\n\n| node |\n| --- |\n\n### Shared scope\n", "malformed"),
    ],
)
def test_broken_sections_say_what_to_do(text: str, match: str) -> None:
    with pytest.raises(MasterSectionError, match=match):
        parse_master(text)


def test_edits_refuse_unknown_nodes_and_bad_cells() -> None:
    text = render_master(Master(repository="o/r", nodes=(Node(name="a"),)))
    with pytest.raises(InvalidValue, match="relay join"):
        set_scheduler(text, node="zz", scheduler="cron")
    with pytest.raises(InvalidValue):
        set_scheduler(text, node="a", scheduler="a | b")
    with pytest.raises(MasterSectionError):
        add_node("# Loop\n", Node(name="b"))
    assert section_text(text + "\n## Other\n") == text + "\n"
