"""Patterns read on rare paths are compiled when first read, not at import: a `relay loop
run` whose maker succeeded compiles none of them."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from relay.loop.patterns import later


def test_a_pattern_is_compiled_at_its_first_use_and_kept() -> None:
    broken = later(r"(unclosed")  # no error until it is read
    with pytest.raises(re.error):
        broken()
    wall = later(r"usage limit", re.IGNORECASE)
    assert wall() is wall() and wall().search("USAGE LIMIT reached")


def test_importing_the_loops_readers_compiles_none_of_their_rare_patterns() -> None:
    script = (
        "import relay.loop.agents, relay.loop.classify, relay.loop.resume\n"
        "from relay.loop.patterns import _compiled\n"
        "print(_compiled.cache_info().currsize)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
