"""The pages' pure parts, without I/O: the list's filters, the timeline, markdown."""

from __future__ import annotations

from relay.hub import markdown, views


def test_filters_read_githubs_q_or_state_and_labels() -> None:
    assert views.parse_filter(None, None, None) == views.Filter("open")
    assert views.parse_filter(None, "closed", "a, b,") == views.Filter("closed", ("a", "b"))
    assert views.parse_filter(None, "bogus", None).state == "open"
    got = views.parse_filter('is:issue is:closed label:"needs human" label:x,y flaky', None, None)
    assert got == views.Filter("closed", ("needs human", "x", "y"), ("flaky",))
    assert views.parse_filter("is:issue", "open", None).state == "all"  # q wins; no is: is both
    assert views.parse_filter('label:"unclosed', None, None).labels == ('"unclosed',)
    filt = views.Filter("open", ("needs human",))
    assert filt.query() == 'is:issue is:open label:"needs human"'
    assert filt.query(state="all", labels=()) == "is:issue"


def _event(ident: int, action: str, at: int, actor: str = "octo", name: str = "x") -> views.Event:
    return views.Event(ident, actor, action, at * 1_000_000, views.Label(name, "ededed"))


def _post(ident: int, at: int) -> views.Post:
    return views.Post(ident, "octo", "OWNER", at * 1_000_000, at * 1_000_000, f"comment {ident}")


def test_the_timeline_interleaves_by_time_and_groups_one_actors_label_moves() -> None:
    thread = views.Thread(
        number=1, title="t", state="open", state_reason=None, locked=False, labels=(),
        opened=_post(0, 0), comments=(_post(1, 10), _post(2, 30)),
        events=(
            _event(1, "labeled", 5), _event(2, "labeled", 11, name="b"),
            _event(3, "unlabeled", 12, name="a"), _event(4, "labeled", 13, actor="mona"),
            _event(5, "closed", 14), _event(6, "labeled", 200),
        ),
    )  # fmt: skip
    shape = [
        f"post {item.ident}" if isinstance(item, views.Post) else [e.ident for e in item]
        for item in views.timeline(thread)
    ]
    assert shape == [[1], "post 1", [2, 3], [4], [5], "post 2", [6]]


def test_a_page_refreshes_only_while_its_issue_is_open() -> None:
    chrome = views.Chrome("octo", "/o/r/issues/1", owner="o", repo="r")
    opened = views.Thread(1, "t", "open", None, False, (), _post(0, 0), (), ())
    closed = views.Thread(1, "t", "closed", "completed", False, (), _post(0, 0), (), ())
    assert 'http-equiv="refresh"' in views.thread_page(chrome, opened).body
    assert 'http-equiv="refresh"' not in views.thread_page(chrome, closed).body


def test_the_label_colours_are_the_one_inline_style_the_policy_allows() -> None:
    chrome = views.Chrome(None, "/o/r/issues", owner="o", repo="r")
    labels = (views.Label("working", "1d76db"), views.Label("bad", "red;}body{x:y"))
    page = views.issue_list(
        chrome, [], filt=views.Filter(), counts=(0, 0), repo_labels=labels, page=1, total=0
    )
    assert ".lc-1d76db{background-color:#1d76db;color:#ffffff}" in page.body
    assert "x:y" not in page.body.split("</style>")[0]  # a colour that is not hex is no CSS
    assert "'sha256-" in page.csp and "script-src" not in page.csp


def test_markdown_is_githubs_and_hidden_blocks_stay_hidden() -> None:
    html = markdown.render(
        "| a |\n|:-:|\n| b |\n\n- [x] done\n\n~~no~~\n\n<!-- relay:task\n{}\n-->\n"
        '<input type="text" value="typed"> <p style="color:red">r</p>'
    )
    assert '<td class="align-center">b</td>' in html and "<s>no</s>" in html
    assert 'type="checkbox"' in html and "relay:task" not in html and "<!--" not in html
    assert "typed" not in html and "color:red" not in html
