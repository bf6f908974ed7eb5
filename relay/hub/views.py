"""The web pages' HTML: pure functions from plain data to a page, no I/O.

Pages are built from Python strings, every value passing through :func:`esc`
(``html.escape``) and every markdown body through :mod:`relay.hub.markdown`; a template
engine would add a dependency for a handful of fixed layouts. Everything a page needs is
served by the hub itself (one stylesheet, ``/-/relay.css``); the only inline style is the
labels' colours, whose hash the page's Content-Security-Policy names.

Times are absolute (UTC), not "3 minutes ago": a page then stays byte-identical until
the thread changes, so its ETag answers a refresh with 304.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import shlex
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from relay.hub import markdown

CSP = (
    "default-src 'none'; style-src 'self'{styles}; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
REFRESH_SECONDS = 5
REACTION_EMOJI = {
    "+1": "👍", "-1": "👎", "laugh": "😄", "hooray": "🎉",
    "confused": "😕", "heart": "❤️", "rocket": "🚀", "eyes": "👀",
}  # fmt: skip
ASSOCIATIONS = {"OWNER": "Owner", "COLLABORATOR": "Collaborator", "MEMBER": "Member"}
_HEX = re.compile(r"^[0-9a-fA-F]{6}$")
PER_PAGE = 25


def esc(value: object) -> str:
    """Text made safe for an HTML element or a quoted attribute."""
    return html.escape(str(value), quote=True)


def plural(n: int, word: str) -> str:
    """``1 open issue``, ``2 open issues``: the count and its noun, agreeing."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# The files' icons are drawn, not typed: an emoji shows as an empty box on a system without
# an emoji font, and these need no font at all.
FOLDER_ICON = (
    '<svg class="octicon folder" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">'
    '<path fill="currentColor" d="M1.75 2h4.3l1.5 1.5h6.7c.41 0 .75.34.75.75v8.5c0 .41-.34.75'
    '-.75.75H1.75a.75.75 0 0 1-.75-.75V2.75c0-.41.34-.75.75-.75Z"/></svg>'
)
FILE_ICON = (
    '<svg class="octicon file" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">'
    '<path fill="none" stroke="currentColor" stroke-width="1.2" stroke-linejoin="round"'
    ' d="M3.6 1.6h5.6l3.2 3.2v9.1c0 .28-.22.5-.5.5H3.6a.5.5 0 0 1-.5-.5V2.1c0-.28.22-.5.5-.5Z'
    'M9.2 1.6v3.2h3.2"/></svg>'
)


def when(us: int | None) -> str:
    """A ``<time>`` element for microseconds since the epoch, in UTC."""
    if us is None:
        return ""
    seconds = us // 1_000_000
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
    shown = time.strftime("%b %-d, %Y, %H:%M UTC", time.gmtime(seconds))
    return f'<time datetime="{iso}" title="{iso}">{esc(shown)}</time>'


@dataclass(frozen=True)
class Label:
    """A label as the pages show it."""

    name: str
    color: str
    description: str | None = None


@dataclass(frozen=True)
class Page:
    """A finished page: its HTML and the headers it needs."""

    body: str
    csp: str
    status: int = 200


@dataclass(frozen=True)
class Chrome:
    """What every page's frame shows: who is signed in, where the page is."""

    viewer: str | None
    path: str  # the page's own path and query, for sign in's return
    owner: str = ""
    repo: str = ""
    private: bool = False
    open_issues: int | None = None
    tab: str = ""  # "code" or "issues"
    default_branch: str = "main"


def _label_css(labels: Iterable[Label]) -> str:
    """One class per label colour: background and a readable text colour."""
    rules = []
    for color in sorted({lab.color.lower() for lab in labels if _HEX.match(lab.color)}):
        r, g, b = (int(color[i : i + 2], 16) for i in (0, 2, 4))
        dark_text = (0.299 * r + 0.587 * g + 0.114 * b) > 150
        fg = "#1f2328" if dark_text else "#ffffff"
        rules.append(f".lc-{color}{{background-color:#{color};color:{fg}}}")
    return "".join(rules)


def label_pill(lab: Label, href: str | None = None) -> str:
    """A label as GitHub shows it: a coloured pill, its description as the tooltip."""
    color = lab.color.lower() if _HEX.match(lab.color) else "ededed"
    title = f' title="{esc(lab.description)}"' if lab.description else ""
    inner = esc(lab.name)
    if href is None:
        return f'<span class="label lc-{color}"{title}>{inner}</span>'
    return f'<a class="label lc-{color}" href="{esc(href)}"{title}>{inner}</a>'


def avatar(login: str) -> str:
    """A letter in a coloured circle (no images to fetch: the hub runs offline)."""
    hue = int(hashlib.md5(login.encode(), usedforsecurity=False).hexdigest()[:2], 16) % 8
    return f'<span class="avatar av{hue}" aria-hidden="true">{esc(login[:1].upper())}</span>'


def layout(
    title: str,
    chrome: Chrome,
    content: str,
    *,
    labels: Iterable[Label] = (),
    refresh: int | None = None,
    status: int = 200,
) -> Page:
    """The frame around every page: header, repository head and tabs, content."""
    css = _label_css(labels)
    styles = ""
    style_tag = ""
    if css:
        digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
        styles = f" 'sha256-{digest}'"
        style_tag = f"<style>{css}</style>"
    meta = f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""
    back = quote(chrome.path, safe="")
    if chrome.viewer:
        who = (
            f'<span class="viewer">Signed in as <strong>{esc(chrome.viewer)}</strong></span>'
            f'<form class="inline" method="post" action="/logout?return_to={back}">'
            f'<button class="btn-link" type="submit">Sign out</button></form>'
        )
    else:
        who = f'<a class="btn" href="/login?return_to={back}">Sign in</a>'
    head = ""
    if chrome.owner:
        o, r = esc(chrome.owner), esc(chrome.repo)
        badge = '<span class="badge">Private</span>' if chrome.private else ""
        count = (
            f' <span class="counter">{chrome.open_issues}</span>'
            if chrome.open_issues is not None
            else ""
        )
        code_cls = ' class="selected"' if chrome.tab == "code" else ""
        iss_cls = ' class="selected"' if chrome.tab == "issues" else ""
        head = (
            f'<div class="repo-head"><div class="container">'
            f'<h1 class="repo-title"><span class="book" aria-hidden="true">▤</span> '
            f'<a href="/">{o}</a> / <a href="/{o}/{r}"><strong>{r}</strong></a>{badge}</h1>'
            f'<nav class="tabs"><a{code_cls} href="/{o}/{r}">Code</a>'
            f'<a{iss_cls} href="/{o}/{r}/issues">Issues{count}</a></nav></div></div>'
        )
    body = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"{meta}<title>{esc(title)}</title>"
        f'<link rel="stylesheet" href="/-/relay.css">{style_tag}</head><body>'
        f'<header class="hub-header"><a class="hub-home" href="/">'
        f'<span class="mark" aria-hidden="true">⇄</span> relay hub</a>'
        f'<div class="spacer"></div>{who}</header>{head}'
        f'<main class="container">{content}</main>'
        '<footer class="container">Served by <code>relay hub</code>, '
        "the embedded GitHub.</footer></body></html>\n"
    )
    return Page(body, CSP.format(styles=styles), status)


# --- the issue list ---------------------------------------------------------------------


@dataclass(frozen=True)
class Filter:
    """What the issue list shows: a state, labels that must all be on, words in titles."""

    state: str = "open"  # open, closed or all
    labels: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    def query(self, **changes: object) -> str:
        """This filter as GitHub's ``q`` search text (with ``changes`` applied)."""
        state = str(changes.get("state", self.state))
        labels = changes.get("labels", self.labels)
        assert isinstance(labels, tuple)
        parts = ["is:issue"] + ([f"is:{state}"] if state != "all" else [])
        for name in labels:
            parts.append(f'label:"{name}"' if re.search(r"\s", name) else f"label:{name}")
        return " ".join([*parts, *self.words])


def parse_filter(q: str | None, state: str | None, labels: str | None) -> Filter:
    """GitHub's list filters: ``?q=is:open label:working words`` or ``?state=&labels=a,b``
    (``q`` wins when both are given). Unknown qualifiers are ignored, as words would be
    surprising."""
    if q is None:
        chosen = state if state in ("open", "closed", "all") else "open"
        names = [n.strip() for n in (labels or "").split(",") if n.strip()]
        return Filter(chosen, tuple(dict.fromkeys(names))[:MAX_TERMS])
    try:
        tokens = shlex.split(q)
    except ValueError:
        tokens = q.split()
    chosen, names, words = "all", list[str](), list[str]()  # GitHub: no is: means both
    for token in tokens:
        key, colon, value = token.partition(":")
        key = key.lower()
        if colon and key in ("is", "state") and value.lower() in ("open", "closed"):
            chosen = value.lower()
        elif colon and key == "label" and value:
            names.extend(v for v in value.split(",") if v)
        elif colon and key in ("is", "sort", "type", "in"):
            continue
        else:
            words.append(token)
    return Filter(chosen, tuple(dict.fromkeys(names))[:MAX_TERMS], tuple(words)[:MAX_TERMS])


MAX_TERMS = 20  # labels and words a list filter keeps (GitHub caps its queries as well)


@dataclass(frozen=True)
class IssueRow:
    """One issue in the list."""

    number: int
    title: str
    state: str
    state_reason: str | None
    author: str
    created_us: int
    updated_us: int
    closed_us: int | None
    comments: int
    labels: tuple[Label, ...]


def _issues_href(owner: str, repo: str, q: str, page: int = 1) -> str:
    query = {"q": q} if page == 1 else {"q": q, "page": str(page)}
    return f"/{quote(owner)}/{quote(repo)}/issues?{urlencode(query)}"


def state_icon(state: str, reason: str | None) -> str:
    """GitHub's open, completed and not-planned marks, in text."""
    if state == "open":
        return '<span class="state-icon open" title="Open">◉</span>'
    if reason == "not_planned":
        return '<span class="state-icon skipped" title="Closed as not planned">⊘</span>'
    return '<span class="state-icon closed" title="Closed">✔</span>'


def issue_list(
    chrome: Chrome,
    rows: Sequence[IssueRow],
    *,
    filt: Filter,
    counts: tuple[int, int],
    repo_labels: Sequence[Label],
    page: int,
    total: int,
) -> Page:
    """``/<owner>/<repo>/issues``: the filter bar, the open/closed tabs and the rows,
    newest activity first."""
    o, r = chrome.owner, chrome.repo
    q = filt.query()
    open_n, closed_n = counts
    open_cls = ' class="selected"' if filt.state == "open" else ""
    closed_cls = ' class="selected"' if filt.state == "closed" else ""
    tabs = (
        f'<a{open_cls} href="{esc(_issues_href(o, r, filt.query(state="open")))}">'
        f'<span class="state-icon open">◉</span> {open_n} Open</a>'
        f'<a{closed_cls} href="{esc(_issues_href(o, r, filt.query(state="closed")))}">'
        f'<span class="state-icon closed">✔</span> {closed_n} Closed</a>'
    )
    chips = "".join(
        label_pill(lab, _issues_href(o, r, filt.query(labels=(lab.name,)))) for lab in repo_labels
    )
    active = ""
    if filt.labels or filt.words or filt.state == "all":
        clear = esc(_issues_href(o, r, "is:issue is:open"))
        active = f'<a class="clear" href="{clear}">✕ Clear filters</a>'
    bar = (
        f'<form class="search" method="get" action="/{esc(o)}/{esc(r)}/issues">'
        f'<input type="search" name="q" value="{esc(q)}" aria-label="Filter issues">'
        f'<button class="btn" type="submit">Filter</button></form>'
        f'<div class="label-filter"><span class="muted">Labels:</span> {chips}</div>{active}'
    )
    items = []
    for row in rows:
        pills = " ".join(
            label_pill(lab, _issues_href(o, r, filt.query(labels=(lab.name,))))
            for lab in row.labels
        )
        if row.state == "open":
            meta = f"#{row.number} opened {when(row.created_us)} by {esc(row.author)}"
        else:
            meta = f"#{row.number} by {esc(row.author)} was closed {when(row.closed_us)}"
        bubble = '<i class="bubble"></i>'
        talk = f'<span class="comments" title="comments">{bubble}{row.comments}</span>'
        items.append(
            f'<li class="issue-row">{state_icon(row.state, row.state_reason)}'
            f'<div class="issue-main"><a class="issue-title" '
            f'href="/{esc(o)}/{esc(r)}/issues/{row.number}">{esc(row.title)}</a> {pills}'
            f'<div class="meta">{meta} · updated {when(row.updated_us)}</div></div>'
            f"{talk if row.comments else ''}</li>"
        )
    listing = "".join(items) or '<li class="blank">No results matched your search.</li>'
    pages = ""
    last = max((total + PER_PAGE - 1) // PER_PAGE, 1)
    if last > 1:
        prev = (
            f'<a href="{esc(_issues_href(o, r, q, page - 1))}">‹ Previous</a>'
            if page > 1
            else '<span class="muted">‹ Previous</span>'
        )
        nxt = (
            f'<a href="{esc(_issues_href(o, r, q, page + 1))}">Next ›</a>'
            if page < last
            else '<span class="muted">Next ›</span>'
        )
        pages = f'<nav class="pagination">{prev} <span>{page} / {last}</span> {nxt}</nav>'
    content = (
        f'<div class="list-bar">{bar}</div>'
        f'<div class="box"><div class="box-head issue-tabs">{tabs}</div>'
        f'<ul class="issues">{listing}</ul></div>{pages}'
    )
    shown = [lab for row in rows for lab in row.labels]
    return layout(f"Issues · {o}/{r}", chrome, content, labels=[*repo_labels, *shown])


# --- the thread ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Post:
    """The issue's body or one comment."""

    ident: int  # 0 for the issue's body
    author: str
    association: str
    created_us: int
    updated_us: int
    body: str | None
    reactions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    """One issue event from the journal (labeled, closed, renamed...)."""

    ident: int
    actor: str
    action: str
    created_us: int
    label: Label | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Thread:
    """An issue with everything its page shows."""

    number: int
    title: str
    state: str
    state_reason: str | None
    locked: bool
    labels: tuple[Label, ...]
    opened: Post
    comments: tuple[Post, ...]
    events: tuple[Event, ...]
    closed_by: str | None = None
    closed_us: int | None = None


def timeline(thread: Thread) -> list[Post | list[Event]]:
    """Comments and events in time order, as GitHub interleaves them; consecutive label
    events by one actor within a minute form one line ("added X and removed Y")."""
    merged: list[tuple[int, int, Post | Event]] = [
        *((c.created_us, 0, c) for c in thread.comments),
        *((e.created_us, 1, e) for e in thread.events),
    ]
    merged.sort(key=lambda item: (item[0], item[1]))
    out: list[Post | list[Event]] = []
    for _, _, item in merged:
        if isinstance(item, Post):
            out.append(item)
            continue
        last = out[-1] if out else None
        if (
            isinstance(last, list)
            and item.action in ("labeled", "unlabeled")
            and all(e.action in ("labeled", "unlabeled") for e in last)
            and last[-1].actor == item.actor
            and item.created_us - last[-1].created_us < 60_000_000
        ):
            last.append(item)
        else:
            out.append([item])
    return out


def _reactions(counts: dict[str, int]) -> str:
    shown = [
        f'<span class="reaction" title="{esc(name)}">{emoji} {counts[name]}</span>'
        for name, emoji in REACTION_EMOJI.items()
        if counts.get(name)
    ]
    return f'<div class="reactions">{"".join(shown)}</div>' if shown else ""


# A relay claim says, while its step runs, "Still running; the next sign of life is due by
# T." (its worker edits the line with each heartbeat). Once the issue is closed its job is
# over and no step of it runs, so the page shows the claim as ended instead of a liveness
# the frozen text can no longer have (the comment itself is left as it was written).
STILL_RUNNING = re.compile(r"^Still running; the next sign of life is due by ([^\n]*?)\.?$", re.M)
ENDED = "Ended: the job is closed (its last sign of life was due by \\1)."


def _post(post: Post, *, anchor: str, verb: str, closed: bool = False) -> str:
    assoc = ASSOCIATIONS.get(post.association)
    role = f'<span class="role">{esc(assoc)}</span>' if assoc else ""
    edited = (
        '<span class="edited" title="edited">· edited</span>'
        if post.updated_us - post.created_us >= 1_000_000
        else ""
    )
    text = post.body or ""
    if closed:
        text = STILL_RUNNING.sub(ENDED, text)
    body = (
        markdown.render(text)
        if text.strip()
        else '<p class="muted"><em>No description provided.</em></p>'
    )
    return (
        f'<div class="timeline-item" id="{anchor}">{avatar(post.author)}'
        f'<div class="comment"><div class="comment-head"><strong class="author">'
        f"{esc(post.author)}</strong> {verb} "
        f'<a class="muted" href="#{anchor}">{when(post.created_us)}</a> {edited}{role}</div>'
        f'<div class="markdown-body">{body}</div>{_reactions(post.reactions)}</div></div>'
    )


def _label_phrase(events: Sequence[Event], href: str) -> str:
    added = [e.label for e in events if e.action == "labeled" and e.label]
    removed = [e.label for e in events if e.action == "unlabeled" and e.label]
    parts = []
    if added:
        parts.append("added " + " ".join(label_pill(lab) for lab in added))
    if removed:
        parts.append("removed " + " ".join(label_pill(lab) for lab in removed))
    noun = "labels" if len(added) + len(removed) > 1 else "label"
    del href
    return " and ".join(parts) + f" {noun}"


def _event(events: list[Event], thread_href: str) -> str:
    first = events[0]
    action = first.action
    icon = "◆"
    if action in ("labeled", "unlabeled"):
        icon, what = "◆", _label_phrase(events, thread_href)
    elif action == "closed":
        icon, what = "✔", "closed this"
    elif action == "reopened":
        icon, what = "↺", "reopened this"
    elif action == "renamed":
        old, new = _rename(first.detail)
        icon, what = "✎", f"changed the title <del>{esc(old)}</del> <strong>{esc(new)}</strong>"
    elif action == "locked":
        reason = f" as {esc(first.detail)}" if first.detail else ""
        icon, what = "⊗", f"locked{reason} and limited conversation to collaborators"
    elif action == "unlocked":
        icon, what = "⊙", "unlocked this conversation"
    else:
        what = esc(action)
    return (
        f'<div class="timeline-event" id="event-{first.ident}">'
        f'<span class="event-icon" aria-hidden="true">{icon}</span>'
        f"<span><strong>{esc(first.actor)}</strong> {what} "
        f'<span class="muted">{when(events[-1].created_us)}</span></span></div>'
    )


def _rename(detail: str | None) -> tuple[str, str]:
    import json

    try:
        data = json.loads(detail or "{}")
        return str(data.get("from", "")), str(data.get("to", ""))
    except ValueError:
        return "", ""


def thread_page(chrome: Chrome, thread: Thread) -> Page:
    """``/<owner>/<repo>/issues/<n>``: title and state, the body and every comment with the
    events between them, the labels in the sidebar; refreshes itself while open."""
    o, r = chrome.owner, chrome.repo
    href = f"/{quote(o)}/{quote(r)}/issues/{thread.number}"
    if thread.state == "open":
        badge = '<span class="state open">◉ Open</span>'
    elif thread.state_reason == "not_planned":
        badge = '<span class="state skipped">⊘ Closed</span>'
    else:
        badge = '<span class="state closed">✔ Closed</span>'
    n = len(thread.comments)
    head = (
        f'<div class="issue-head"><h1 class="issue-title-big">{esc(thread.title)} '
        f'<span class="number">#{thread.number}</span></h1>'
        f'<div class="issue-meta">{badge} <span><strong>{esc(thread.opened.author)}</strong>'
        f" opened this issue {when(thread.opened.created_us)} · {n} comment"
        f"{'s' if n != 1 else ''}</span></div></div>"
    )
    items = [_post(thread.opened, anchor="issue-body", verb="opened")]
    for item in timeline(thread):
        if isinstance(item, Post):
            closed = thread.state == "closed"
            anchor = f"issuecomment-{item.ident}"
            items.append(_post(item, anchor=anchor, verb="commented", closed=closed))
        else:
            items.append(_event(item, href))
    if thread.state == "open":
        foot = (
            f'<p class="live muted">This page refreshes itself every {REFRESH_SECONDS} s'
            " while the issue is open.</p>"
        )
    else:
        foot = ""
    side_labels = (
        " ".join(
            label_pill(lab, _issues_href(o, r, f'is:issue label:"{lab.name}"'))
            for lab in thread.labels
        )
        or '<span class="muted">None yet</span>'
    )
    lock = '<div class="side-block"><h3>Locked</h3><p>⊗ Conversation locked</p></div>'
    sidebar = (
        f'<aside class="sidebar"><div class="side-block"><h3>Labels</h3>'
        f'<div class="labels">{side_labels}</div></div>'
        f"{lock if thread.locked else ''}"
        f'<div class="side-block"><h3>Participants</h3>'
        f"{''.join(avatar(p) for p in _participants(thread))}</div></aside>"
    )
    content = (
        f'{head}<div class="issue-layout"><div class="timeline">{"".join(items)}{foot}</div>'
        f"{sidebar}</div>"
    )
    labels = [*thread.labels, *(e.label for e in thread.events if e.label)]
    refresh = REFRESH_SECONDS if thread.state == "open" else None
    title = f"{thread.title} · Issue #{thread.number} · {o}/{r}"
    return layout(title, chrome, content, labels=labels, refresh=refresh)


def _participants(thread: Thread) -> list[str]:
    seen: dict[str, None] = {thread.opened.author: None}
    for c in thread.comments:
        seen.setdefault(c.author, None)
    return list(seen)


# --- files and folders --------------------------------------------------------------------


def _crumbs(owner: str, repo: str, ref: str, path: str) -> str:
    base = f"/{quote(owner)}/{quote(repo)}"
    out = [f'<a href="{esc(base)}/tree/{esc(quote(ref))}"><strong>{esc(repo)}</strong></a>']
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts):
        sub = "/".join(parts[: i + 1])
        if i == len(parts) - 1:
            out.append(f"<strong>{esc(part)}</strong>")
        else:
            out.append(
                f'<a href="{esc(base)}/tree/{esc(quote(ref))}/{esc(quote(sub))}">{esc(part)}</a>'
            )
    return '<nav class="crumbs">' + " / ".join(out) + "</nav>"


def _ref_chip(ref: str, commit: str) -> str:
    shown = ref[:7] if ref == commit else ref
    return f'<span class="ref" title="{esc(commit)}">⎇ {esc(shown)}</span>'


def tree_page(
    chrome: Chrome,
    *,
    ref: str,
    commit: str,
    path: str,
    entries: Sequence[tuple[str, str, int | None]],
    readme: str | None = None,
) -> Page:
    """``/<owner>/<repo>/tree/<ref>/<path>``: a folder's entries, folders first."""
    base = f"/{quote(chrome.owner)}/{quote(chrome.repo)}"
    rows = []
    if path:
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        up = f"{base}/tree/{quote(ref)}" + (f"/{quote(parent)}" if parent else "")
        rows.append(f'<tr><td class="icon">↰</td><td><a href="{esc(up)}">..</a></td><td></td></tr>')
    for kind, name, size in entries:
        full = f"{path}/{name}" if path else name
        if kind == "tree":
            link, icon, shown = f"{base}/tree/{quote(ref)}/{quote(full)}", FOLDER_ICON, ""
        else:
            link, icon = f"{base}/blob/{quote(ref)}/{quote(full)}", FILE_ICON
            shown = _size(size)
        rows.append(
            f'<tr><td class="icon" aria-hidden="true">{icon}</td>'
            f'<td><a href="{esc(link)}">{esc(name)}</a></td>'
            f'<td class="muted size">{shown}</td></tr>'
        )
    table = (
        f'<table class="files">{"".join(rows)}</table>'
        if rows
        else '<p class="blank">This folder is empty.</p>'
    )
    extra = (
        f'<div class="box readme"><div class="box-head">README.md</div>'
        f'<div class="markdown-body box-body">{markdown.render(readme)}</div></div>'
        if readme is not None
        else ""
    )
    content = (
        f'<div class="file-bar">{_ref_chip(ref, commit)} '
        f"{_crumbs(chrome.owner, chrome.repo, ref, path)}</div>"
        f'<div class="box">{table}</div>{extra}'
    )
    where = f"{path} at {ref}" if path else ref
    return layout(f"{chrome.owner}/{chrome.repo}: {where}", chrome, content)


def _size(size: int | None) -> str:
    if size is None:
        return ""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


MAX_SHOWN = 1024 * 1024


def blob_page(chrome: Chrome, *, ref: str, commit: str, path: str, data: bytes) -> Page:
    """``/<owner>/<repo>/blob/<ref>/<path>``: the file with line numbers (markdown
    rendered), a link to its raw bytes."""
    base = f"/{quote(chrome.owner)}/{quote(chrome.repo)}"
    raw = f"{base}/raw/{quote(ref)}/{quote(path)}"
    binary = b"\0" in data[:8000]
    text = "" if binary else data.decode("utf-8", "replace")
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()  # git's count: a final newline ends the last line
    info = f"{plural(len(lines), 'line')} · {_size(len(data))}" if not binary else _size(len(data))
    if binary:
        view = f'<p class="blank">Binary file not shown. <a href="{esc(raw)}">View raw</a></p>'
    elif len(data) > MAX_SHOWN:
        view = (
            f'<p class="blank">This file is too big to show. <a href="{esc(raw)}">View raw</a></p>'
        )
    elif path.lower().endswith((".md", ".markdown")):
        view = f'<div class="markdown-body box-body">{markdown.render(text)}</div>'
    else:
        rows = "".join(
            f'<tr id="L{i}"><td class="ln"><a href="#L{i}">{i}</a></td>'
            f'<td class="code">{esc(line)}</td></tr>'
            for i, line in enumerate(lines, 1)
        )
        view = f'<table class="blob">{rows}</table>'
    content = (
        f'<div class="file-bar">{_ref_chip(ref, commit)} '
        f"{_crumbs(chrome.owner, chrome.repo, ref, path)}</div>"
        f'<div class="box"><div class="box-head file-head"><span class="muted">{info}</span>'
        f'<a class="btn" href="{esc(raw)}">Raw</a></div>{view}</div>'
    )
    name = path.rsplit("/", 1)[-1]
    return layout(f"{name} at {ref} · {chrome.owner}/{chrome.repo}", chrome, content)


# --- small pages --------------------------------------------------------------------------


def message_page(chrome: Chrome, status: int, title: str, text: str) -> Page:
    """A 404 and its kind: what happened and what to do."""
    hint = ""
    if status == 404 and not chrome.viewer:
        back = quote(chrome.path, safe="")
        hint = (
            f'<p>If this is a private repository, <a href="/login?return_to={back}">sign in</a>'
            " with a token that may read it.</p>"
        )
    content = f'<div class="blankslate"><h1>{esc(title)}</h1><p>{esc(text)}</p>{hint}</div>'
    return layout(title, chrome, content, status=status)


def login_page(chrome: Chrome, return_to: str, error: str = "") -> Page:
    """Sign in with a hub token (``relay hub token LOGIN``): the browser keeps it in a
    cookie for this hub only."""
    wrong = f'<p class="flash-error">{esc(error)}</p>' if error else ""
    content = (
        '<div class="login box"><div class="box-head"><h1>Sign in to relay hub</h1></div>'
        f'<form class="box-body" method="post" action="/session">{wrong}'
        '<label for="token">Token</label>'
        '<input id="token" name="token" type="password" autocomplete="off" required>'
        f'<input type="hidden" name="return_to" value="{esc(return_to)}">'
        '<button class="btn primary" type="submit">Sign in</button>'
        '<p class="muted">Make one with <code>relay hub token LOGIN</code>.</p></form></div>'
    )
    return layout("Sign in · relay hub", chrome, content, status=401 if error else 200)


def home_page(
    chrome: Chrome, repos: Sequence[tuple[str, str, bool, int]], *, title: str = ""
) -> Page:
    """``/`` (or an account's page, ``title`` its login): the repositories the visitor may
    see, with their open issues."""
    items = []
    for o, r, private, n in repos:
        home = f"/{esc(o)}/{esc(r)}"
        badge = ' <span class="badge">Private</span>' if private else ""
        items.append(
            f'<li class="issue-row"><span class="book" aria-hidden="true">▤</span>'
            f'<div class="issue-main"><a class="issue-title" href="{home}">{esc(o)}/{esc(r)}</a>'
            f'{badge}<div class="meta"><a href="{home}/issues">{plural(n, "open issue")}</a>'
            "</div></div></li>"
        )
    none = '<li class="blank">No repositories to show. Sign in to see private ones.</li>'
    listing = "".join(items) or none
    head = f"<h1>{esc(title)}</h1>" if title else ""
    content = (
        f'{head}<div class="box"><div class="box-head">Repositories</div>'
        f'<ul class="issues">{listing}</ul></div>'
    )
    return layout(title or "relay hub", chrome, content)
