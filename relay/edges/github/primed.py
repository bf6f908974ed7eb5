"""Answers already on hand: a GET the idle check made before the full client was loaded.

The idle pass (:mod:`relay.watchers.quiet`) asks for the issue list with the standard
library first; when the answer is not a 304 there is work, and the full client takes over.
Rather than ask again, it is handed the answer it would have got: the wire
(:mod:`relay.edges.github.transport`) takes it instead of sending that request, once, and
counts it as the request it was. What gidgethub does with an answer (the ETag cache, the
rate limit, the next page) is then done as for any other.
"""

from __future__ import annotations

from collections.abc import Mapping

Answer = tuple[int, Mapping[str, str], bytes]

_ANSWERS: dict[str, Answer] = {}


def prime(url: str, answer: Answer) -> None:
    """Keep ``answer`` for the next GET of ``url`` (in this process)."""
    _ANSWERS[url] = answer


def take(method: str, url: str) -> Answer | None:
    """The answer kept for a GET of ``url``, once; None for anything else."""
    if method.upper() != "GET" or not _ANSWERS:
        return None
    return _ANSWERS.pop(url, None)
