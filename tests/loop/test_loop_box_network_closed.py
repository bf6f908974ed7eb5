"""A plain command maker the contract lists no host for has no way out of its box at all:
no proxy, none of the person's own proxy variables (a password in one), no host listener,
no abstract socket; its brief says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_GATE, TEST_MUL, make_project
from test_loop_box_network import PROBE, Machine, machine, needs_namespaces, probes

__all__ = ["machine"]  # the fixture, shared


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


@needs_namespaces
def test_a_plain_maker_the_contract_lists_nothing_for_has_no_way_out(
    tmp_path: Path, machine: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No host listed: no proxy, and the person's own proxy variables (a password in
    one) are not handed on either."""
    monkeypatch.setenv("HTTPS_PROXY", "http://person:hunter2@proxy.example.invalid:3128")
    project = make_project(tmp_path, retries=0, gates=(TEST_GATE,))
    scripts = project.scripts
    maker = project.script(
        "maker",
        PROBE
        + probes(machine)
        + "got['variables'] = sorted(k for k in os.environ if 'proxy' in k.lower())\n"
        + "got['told'] = 'no network beyond its own loopback:' in BRIEF\n"
        + f"open({str(scripts / 'maker-saw.json')!r}, 'w').write(json.dumps(got))\n"
        + f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n",
    )
    ran = project.loop("run", "--maker", maker)
    assert [k["goal"] for k in ran.data["kept"]] == ["G1"], ran
    made = json.loads((scripts / "maker-saw.json").read_text())
    assert made == {
        "host_tcp": False,
        "abstract": False,
        "api": "no proxy",
        "host_service": "no proxy",
        "elsewhere": "no proxy",
        "proxy": None,
        "variables": [],
        "told": True,
    }, made
    assert machine.untouched() and machine.asked == []
