"""The redaction API the rest of relay calls: one ``Redactor`` per set of facts and scope.

A ``Redactor`` is built once (compiling every rule) and then redacts any number of texts,
whole or streamed. It is pure: the machine's facts come in as ``MachineFacts`` (see
``facts.gather_facts``), extra patterns and allowed exceptions as plain strings (from the
master section's shared scope).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from relay.redact.disguises import Disguises
from relay.redact.engine import Engine
from relay.redact.literals import MachineFacts
from relay.redact.stream import BLOCK_SIZE, OVERLAP, RedactionReport, StreamRedactor

# Past this share of replaced text a log is more secret than log: summarise it instead.
MAX_REDACTED_SHARE = 0.25


@dataclass(frozen=True)
class Recipe:
    """What a ``Redactor`` is built from, as plain data: another process builds the same
    redactor from it (compiled rules do not cross a process boundary)."""

    facts: MachineFacts = field(default_factory=MachineFacts)
    extra_patterns: tuple[tuple[str, str], ...] = ()
    allowed: tuple[str, ...] = ()
    node_hosts: tuple[str, ...] = ()
    max_redacted_share: float = MAX_REDACTED_SHARE
    block_size: int = BLOCK_SIZE

    def build(self) -> Redactor:
        """The redactor this recipe describes."""
        return Redactor(
            self.facts,
            extra_patterns=dict(self.extra_patterns),
            allowed=self.allowed,
            node_hosts=self.node_hosts,
            max_redacted_share=self.max_redacted_share,
            block_size=self.block_size,
        )


class Redactor:
    """Redact logs for publication: secrets, this node's secrets, personal and machine data."""

    def __init__(
        self,
        facts: MachineFacts | None = None,
        *,
        extra_patterns: Mapping[str, str] | None = None,
        allowed: Iterable[str] = (),
        node_hosts: Iterable[str] = (),
        max_redacted_share: float = MAX_REDACTED_SHARE,
        block_size: int = BLOCK_SIZE,
    ) -> None:
        """``allowed`` adds to ``DEFAULT_ALLOWED``; it never un-masks this node's own secret
        values (``facts.secrets``). ``node_hosts``: the node table's names, whose fully
        qualified forms are redacted as ``<host>``. Raises ``LocalUsageError`` when an extra
        pattern or an allowed exception is not a valid regex."""
        self.recipe = Recipe(
            facts or MachineFacts(),
            tuple((extra_patterns or {}).items()),
            tuple(allowed),
            tuple(node_hosts),
            max_redacted_share,
            block_size,
        )
        self._engine = Engine(
            self.recipe.facts,
            extra_patterns=extra_patterns,
            allowed=self.recipe.allowed,
            node_hosts=self.recipe.node_hosts,
        )
        self._max_share = max_redacted_share
        self._block = block_size

    @property
    def multiline_needles(self) -> tuple[bytes, ...]:
        """This node's secret values that hold a line break (a cut must not split one)."""
        return self._engine.multiline_needles

    @property
    def disguises(self) -> Disguises | None:
        """This node's secrets folded, wrapped, re-encoded (a cut must not split one)."""
        return self._engine.disguises

    def warm(self, sample: bytes = b"") -> None:
        """Compile every rule now (before forking processes that redact; see ``Engine``),
        and build their automata's states on ``sample``, text like what they will read."""
        self._engine.warm(sample)

    def open(
        self, *, overlap: int | None = None, context: bytes = b"", in_key: bool = False
    ) -> StreamRedactor:
        """A fresh stream: ``feed`` chunks, then ``finish``, then read ``report``.
        ``context`` and ``in_key``: where in a longer log it starts (see ``StreamRedactor``)."""
        return StreamRedactor(
            self._engine,
            max_redacted_share=self._max_share,
            block_size=self._block,
            overlap=OVERLAP if overlap is None else overlap,
            context=context,
            in_key=in_key,
        )

    def stream(self, chunks: Iterable[bytes | str]) -> RedactedStream:
        """Redact an iterable of chunks lazily; the report is ready once it is exhausted."""
        return RedactedStream(self.open(), chunks)

    def redact_with_report(self, text: bytes | str) -> tuple[str, RedactionReport]:
        """Redact a whole text at once."""
        stream = self.open()
        out = stream.feed(text) + stream.finish()
        return out, stream.report

    def redact(self, text: bytes | str) -> str:
        """Redact a whole text at once, when the caller needs no report."""
        return self.redact_with_report(text)[0]


class RedactedStream:
    """An iterator of redacted text pieces; ``report`` is final once iteration ends."""

    def __init__(self, stream: StreamRedactor, chunks: Iterable[bytes | str]) -> None:
        self._stream = stream
        self._pieces = self._run(chunks)

    def __iter__(self) -> Iterator[str]:
        return self._pieces

    def __next__(self) -> str:
        return next(self._pieces)

    @property
    def report(self) -> RedactionReport:
        """The counts and verdict so far (final after the last piece)."""
        return self._stream.report

    def _run(self, chunks: Iterable[bytes | str]) -> Iterator[str]:
        for chunk in chunks:
            out = self._stream.feed(chunk)
            if out:
                yield out
        tail = self._stream.finish()
        if tail:
            yield tail
