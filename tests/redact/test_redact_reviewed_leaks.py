"""Leaks and a false positive a review found: each case is the exact line that was kept (or
redacted) before, with the exact output it must give now."""

from __future__ import annotations

import pytest

from relay.redact import Redactor

REDACTOR = Redactor(max_redacted_share=1.0)
R = "[redacted:secret]"


def redacted(text: str) -> str:
    """The whole text redacted; line count and the rest of each line are kept."""
    out = REDACTOR.redact(text)
    assert out.count("\n") == text.count("\n")
    return out


# A row above a line of dashes that is no table separator is a data row, not a header.
NOT_SEPARATORS = ["---", "-----------------------------", "-----BEGIN PGP MESSAGE-----", " --- "]


@pytest.mark.parametrize("below", NOT_SEPARATORS)
def test_a_row_above_dashes_that_are_no_separator_is_a_value(below: str) -> None:
    text = f"| API_TOKEN | Tbl1SecretValue9xyz |\n{below}\n"
    assert redacted(text) == f"| API_TOKEN | {R} |\n{below}\n"


def test_the_reviewed_table_keeps_no_value() -> None:
    text = (
        "| API_TOKEN | Tbl1SecretValue9xyz |\n---\n"
        "| DB_PASSWORD | Tbl2SecretValue9xyz |\n-----------------------------\n"
    )
    expected = f"| API_TOKEN | {R} |\n---\n| DB_PASSWORD | {R} |\n-----------------------------\n"
    assert redacted(text) == expected


SEPARATORS = ["|---|---|", "|:--|--:|", "--- | ---", "| --- | :---: |", "|-|-|", "---|---"]


@pytest.mark.parametrize("below", SEPARATORS)
def test_a_row_above_a_real_separator_is_a_header(below: str) -> None:
    text = f"| Token | Tbl1SecretValue9xyz |\n{below}\n"
    assert redacted(text) == text


@pytest.mark.parametrize("checksum", ["=Ab3d", "=+/9z"])
def test_a_pgp_key_without_its_begin_line_goes_past_its_checksum_line(checksum: str) -> None:
    """The armor's checksum line (``=`` and four base64 characters) sits between the key's
    body and its END line: the scan back from END reads past it to the body."""
    text = (
        "keep this line\nPGPLEAKaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nPGPLEAKbbbbbbbbbbbbbbbbbbbbbb\n"
        f"{checksum}\n-----END PGP PRIVATE KEY BLOCK-----\nafter\n"
    )
    assert redacted(text) == "keep this line\n[redacted:private-key]\n\n\n\nafter\n"
