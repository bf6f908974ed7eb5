"""Key ends whose BEGIN line is gone: a run of them is one redaction, the lines kept."""

from __future__ import annotations

from redact_samples import FACTS

from relay.redact import Redactor

END = "-----END PRIVATE KEY-----"


def _redact(text: str) -> str:
    stream = Redactor(FACTS, max_redacted_share=1.0).open()
    return stream.feed(text.encode()) + stream.finish()


def test_a_run_of_end_lines_is_one_placeholder_and_keeps_the_line_count() -> None:
    text = "before\n" + f"{END}\n" * 5 + "after\n"
    out = _redact(text)
    assert out == "before\n[redacted:private-key]\n\n\n\n\nafter\n"
    assert out.count("\n") == text.count("\n")


def test_key_lines_above_a_run_of_end_lines_are_taken_too() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
    out = _redact(f"log\n{body}\n{END}\n{END}\r\n{END}\ntail\n")
    assert body not in out and END not in out
    assert out.startswith("log\n[redacted:private-key]") and out.endswith("tail\n")


def test_end_lines_apart_are_each_redacted() -> None:
    out = _redact(f"{END}\nplain words here\n{END}\n")
    assert out == "[redacted:private-key]\nplain words here\n[redacted:private-key]\n"
