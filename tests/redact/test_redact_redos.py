"""Pathological input for every pattern: the redactor gets through it and still redacts.

The time bound is the benchmark's to measure (``bench/bench_redact_redos.py``: 10 MB of each
family against 10 MB of an ordinary log); a timed test on a shared machine would measure
the neighbours. What a test can show is that each family is read to its end, that the
line count is kept, and that a secret after the pathological run is still found — the
redactor neither hangs nor gives up.
"""

from __future__ import annotations

import pytest
from pathological import cpu_times, families, line

from relay.redact import Redactor

FAMILIES = families()
REDACTOR = Redactor(max_redacted_share=1.0)
TOKEN = "ghp_" + "Zq7aB" * 7 + "x"
SIZE = 64 << 10


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_pathological_line_is_read_through_and_a_secret_after_it_still_goes(name: str) -> None:
    data = line(FAMILIES[name], SIZE) + f"\nthen {TOKEN} end\n".encode()
    stream = REDACTOR.open()
    out = "".join(stream.feed(data[i : i + 8192]) for i in range(0, len(data), 8192))
    out += stream.finish()
    assert out.count("\n") == data.count(b"\n")
    assert TOKEN not in out
    # A key block with no END hides the rest of the log, and a here-document fed to a
    # password reader its first line, on purpose.
    if name not in ("begin-key", "heredoc-stdin"):
        assert out.endswith("then [redacted:github-token] end\n")
    assert stream.report.bytes_in == len(data)


def test_every_row_of_the_table_has_a_family() -> None:
    from relay.redact.formats import FORMATS

    assert {f"row:{fmt.name}" for fmt in FORMATS} <= set(FAMILIES)


@pytest.mark.parametrize("name", ["mysql", "password-quoted", "row:azure-storage-key", "dots"])
def test_a_line_past_a_rules_budget_hides_its_rest_and_a_secret_in_it(name: str) -> None:
    from relay.redact.rules import HITS_PER_LINE

    unit = FAMILIES[name]
    data = unit * (4 * HITS_PER_LINE) + f" then {TOKEN} end\nnext line\n".encode()
    stream = REDACTOR.open()
    out = stream.feed(data) + stream.finish()
    assert TOKEN not in out
    assert out.endswith("\nnext line\n")  # the budget is a line's: the next line is read anew
    first = out.split("\n")[0]
    assert " end" not in first and first.endswith(("]", ">"))  # the line's rest went as one span


def test_a_line_within_the_budget_is_redacted_find_by_find() -> None:
    line = " ".join(f"mysql -pS3cretValue{i:03d}" for i in range(8))
    stream = REDACTOR.open()
    out = stream.feed(line + "\n") + stream.finish()
    assert out.count("mysql -p") == 8 and "S3cretValue" not in out


@pytest.mark.parametrize(
    ("head", "then"),
    [
        ("getConnection(a(", '"url"), "root", '),
        ("auth=(f(", '"user"), '),
        ("HTTPBasicAuth(f(", "'user'), "),
        (".login(f(", " user ), "),
    ],
)
def test_a_call_opened_in_a_credential_call_then_blanks_takes_about_an_ordinary_logs_time(
    head: str, then: str
) -> None:
    """An argument that is a call (``getConnection(props.get("url"), …)``) read its blanks
    as two runs around an empty word: ``(`` and 100 KB of blanks split every way, 8 s for
    one line (quadratic). The bench's goal is twice an ordinary log; this holds it to twenty
    times."""
    times = cpu_times(REDACTOR.redact, "smtp" + head + " " * 100_000 + "\n")
    assert times[1] < 20 * max(times[0], 0.01)
    assert "Xq9vLp2mWz" not in REDACTOR.redact(f'smtp{head}{then}"Xq9vLp2mWz")\n')
