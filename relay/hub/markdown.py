"""Markdown for the web pages: GitHub-flavoured rendering, then sanitising, as GitHub does.

markdown-it-py renders CommonMark with GitHub's extensions (tables, strikethrough, task
lists; raw HTML passes through as on GitHub), and nh3 (ammonia) then keeps only a safe
subset of HTML: no script, no style, no event attributes, no ``javascript:`` URLs, and no
HTML comments — which is how relay's hidden blocks stay hidden, exactly as on GitHub.

Rendering is a pure function of the text, so it is cached: a thread page re-renders only
the comments that changed.
"""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from mdit_py_plugins.tasklists import tasklists_plugin

_MD = (
    MarkdownIt("commonmark", {"html": True, "typographer": False})
    .enable(["table", "strikethrough"])
    .use(tasklists_plugin)
)

_TAGS = set(nh3.ALLOWED_TAGS) | {"input"}
_ATTRIBUTES: dict[str, set[str]] = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    "input": {"type", "checked", "disabled"},
    "code": {"class"},
    "li": {"class"},
    "ul": {"class"},
    "ol": {"start", "class"},
    "td": {"style", "align"},
    "th": {"style", "align"},
}
_CLASSES = re.compile(r"^(language-[\w+#.-]{1,40}|task-list-item|contains-task-list)$")
_ALIGN = re.compile(r"^text-align:\s*(left|right|center)$")
_ALIGNED = re.compile(r' style="text-align:(left|right|center)"')
_TYPED = re.compile(r'<input(?![^>]*type="checkbox")[^>]*>')


def _attribute(tag: str, attr: str, value: str) -> str | None:
    """Keep only the classes markdown itself makes, checkboxes that cannot be typed into,
    and table alignment (the only ``style`` a page accepts; the CSP blocks the rest)."""
    if attr == "class":
        kept = [c for c in value.split() if _CLASSES.match(c)]
        return " ".join(kept) or None
    if tag == "input" and attr == "type":
        return "checkbox" if value == "checkbox" else None
    if attr == "style":
        found = _ALIGN.match(value.strip().rstrip(";"))
        return None if found is None else f"text-align:{found.group(1)}"
    return value


def _clean(html: str) -> str:
    """Sanitise, then turn table alignment into classes (the page's CSP allows no inline
    style) and drop any input that is not a task list's checkbox."""
    clean = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        attribute_filter=_attribute,
        strip_comments=True,
        link_rel="noopener noreferrer nofollow",
    )
    return _TYPED.sub("", _ALIGNED.sub(r' class="align-\1"', clean))


@lru_cache(maxsize=4096)
def render(text: str) -> str:
    """Safe HTML for a markdown body (an issue's or a comment's)."""
    return _clean(_MD.render(text))
