"""A step's own secret, printed in a way the published text still holds it."""

from __future__ import annotations

import sys
from pathlib import Path

from worlds import World

PY = Path(sys.executable).as_posix()
TOKEN = "ghp_" + "Zq7" * 12


def _recoverable(text: str) -> bool:
    """The token's bytes are in the text as written, or in its UTF-16 code units."""
    wide = text.encode("utf-16-le", "surrogatepass")
    return TOKEN in text or TOKEN.encode() in wide or TOKEN.encode() in wide[1:]


def test_utf16_output_then_a_utf8_line_carries_the_token(world: World, job: int) -> None:
    """A step whose output opens in UTF-16 (wmic, a PowerShell pipe, iconv) and then prints
    a UTF-8 line: the whole output is decoded as UTF-16, the UTF-8 line becomes CJK
    characters no rule reads, the log is judged safe and published, and encoding the
    published line as UTF-16 gives the token back."""
    c, w = world.controller, world.worker
    script = (
        "import os, sys; out = sys.stdout.buffer; "
        "out.write(''.join('Name=svc%d State=Running\\r\\n' % i for i in range(100))"
        ".encode('utf-16-le')); "
        "out.write(('token: ' + os.environ['DEPLOY_API_TOKEN'] + '\\n').encode())"
    )
    c.ok("task", str(job), "--step", f'"{PY}" -c "{script}"')
    done = w.run("watch", "--once", env=w.env(DEPLOY_API_TOKEN=TOKEN))
    assert done.returncode == 0, done.stderr
    log = world.remote_file(f"docs/loop/relay/{job}/logs/result-001.log")
    result = world.comments(job)[-1]["body"]
    leaked = [where for where, text in (("log", log), ("RESULT", result)) if _recoverable(text)]
    assert not leaked, f"the token can be rebuilt from the published {leaked}"
