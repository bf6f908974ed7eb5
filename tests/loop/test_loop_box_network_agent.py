"""An agent CLI's role reaches its own API from its box, and nothing else: `--maker
claude`, with its API at a base URL of the person's (``ANTHROPIC_BASE_URL``, here a
stand-in on this machine), goes out through relay's egress proxy to that host alone; the
machine's listeners and abstract sockets stay out of reach, and what it was refused is in
its transcript, beside the list it was refused against."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project
from test_loop_agents import claude_stream, on_path, stand_in
from test_loop_box_network import PROBE, Machine, machine, needs_namespaces, probes, transcript

__all__ = ["machine"]  # the fixture, shared


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


@needs_namespaces
def test_an_agent_maker_reaches_its_own_api_and_nothing_else(
    tmp_path: Path, machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--maker claude` with its API at a base URL of the person's: the adapter lists the
    API's host, and nothing the contract does not list beside it goes out."""
    bin_dir = tmp_path / "bin"  # shared with the boxes (the loop tests' conftest)
    bin_dir.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", f"{on_path(bin_dir)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"https://127.0.0.1:{machine.api}")
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    stand_in(
        bin_dir,
        "claude",
        PROBE
        + probes(machine)
        + "(HERE / 'claude-saw.json').write_text(json.dumps(got))\n"
        + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
        + "import re\n"
        + "put(re.search(r'write two or three lines to `([^`]+)`', STDIN).group(1), 'mul')\n"
        + f"print({claude_stream('Added mul() with a test.', tools=3)!r})\n",
    )
    ran = project.loop("run", "--maker", "claude")
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    made = json.loads((bin_dir / "claude-saw.json").read_text())
    assert made["host_tcp"] is False and made["abstract"] is False, made
    assert made["api"] == "200 stand-in API /v1/messages", made
    assert "403" in made["host_service"] and "403" in made["elsewhere"], made
    assert machine.untouched()
    said = transcript(project)
    assert "relay egress: refused CONNECT api.example.invalid:443 for the maker" in said
    assert "api.anthropic.com" in said  # the list it was refused against names its own API
