"""The foreground watch's alive line: silent until the quiet has a duration worth saying."""

from __future__ import annotations

import pytest

from relay.commands.watch import Alive
from relay.watchers.once import PassReport


def test_the_alive_line_waits_for_a_duration_worth_saying(
    capsys: pytest.CaptureFixture[str],
) -> None:
    alive = Alive("mac-studio", 60)
    alive.printer(PassReport("mac-studio"))
    assert "nothing to do" not in capsys.readouterr().err, "no 'nothing to do for 0s'"
    alive.last_said -= 65  # a minute of quiet passes
    alive.printer(PassReport("mac-studio"))
    err = capsys.readouterr().err
    assert "nothing to do for 1m05s" in err and "2 passes" in err, err
