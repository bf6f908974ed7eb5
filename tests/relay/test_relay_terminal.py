"""Text from outside reaches a person's terminal shown, never obeyed: a job title with
escape sequences, a step's output with a right-to-left override. Every verb prints
through one door (relay.commands.output); --json stays JSON, which escapes them itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from worlds import WORKER, World

from relay.commands.output import for_people
from relay.protocol.wire import show_controls

PY = Path(sys.executable).as_posix()
TITLE = "Build \x1b]0;owned\x07fails\x1b[2J\x9b31m"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def test_status_shows_a_title_s_escape_sequences_instead_of_sending_them(
    world: World, job: int
) -> None:
    world.api(f"/issues/{job}", "PATCH", {"title": TITLE})
    c = world.controller
    out = c.ok("status")
    assert not any(ch in out for ch in RAW), repr(out)
    assert f"#{job} Build \\x1b]0;owned\\x07fails\\x1b[2J\\x9b31m:" in out
    shown = c.run("status", "--json").stdout
    assert not any(ch in shown for ch in RAW), "JSON escapes controls itself"
    assert json.loads(shown)["data"]["jobs"][0]["title"] == TITLE


def test_result_shows_a_step_s_bidi_override_and_escapes(world: World, job: int) -> None:
    c = world.controller
    said = "print('ok \\u202eexe.txt \\x1b[2J\\x07 done')"
    c.call("task", str(job), "--step", f'"{PY}" -c "{said}"')
    world.worker.ok("watch", "--once", "--node", WORKER)
    out = c.ok("result", str(job))
    assert not any(ch in out for ch in RAW), repr(out)
    assert "ok [U+202E]exe.txt" in out
    assert "\n" in out.strip(), "the CLI's own line breaks stay"


# relay's own layout and punctuation, controls, invisible and lone-surrogate characters,
# and ordinary text around them
TRICKY = "\n\t\r\x1b\x07\x7f\x9b\u00ad\u00d7\u115f\u200b\u2014\u2028\u202e\u2192\ufe0f\udc80"


@given(st.text(alphabet=st.sampled_from(TRICKY) | st.characters(), max_size=40))
def test_a_line_for_people_is_shown_as_the_protocol_shows_controls(text: str) -> None:
    """The quick path for relay's own lines (no protocol loaded) changes nothing: every
    line comes out as the protocol's rule shows it, newlines and tabs kept."""
    assert for_people(text) == show_controls(text, keep="\n\t")
