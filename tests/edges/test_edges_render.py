"""A scheduled pass on Windows runs under pythonw, where there is no stdout or stderr."""

from __future__ import annotations

import subprocess
import sys


def test_results_render_without_any_standard_stream() -> None:
    code = (
        "import sys\n"
        "sys.stdout = None; sys.stderr = None\n"
        "from relay.commands.output import Output, render\n"
        "render(Output(lines=('a line',), data={'k': 1}), json_output=False)\n"
        "render(Output(lines=('a line',), data={'k': 1}), json_output=True)\n"
        "from relay.watchers.once import print_report\n"
        "from relay.watchers.once import PassReport\n"
        "print_report(PassReport(node='n', lines=['x']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
