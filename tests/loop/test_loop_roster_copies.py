"""The roster maker's `copies` caps the makers that run at once: `relay loop run
--parallel 3` on three independent goals with `- Limits: copies 2` never has three makers
running, and still keeps every goal."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import PY, TEST_GATE, make_project
from test_loop_roster_limits import with_roles


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def test_copies_cap_the_makers_that_run_at_once(tmp_path: Path) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,), accept=None)
    for title, name in (("Alpha", "alpha"), ("Beta", "beta"), ("Gamma", "gamma")):
        accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_{name}.py"
        assert project.loop("goal", "add", title, "--accept", accept).status == 0
    maker = project.script(
        "maker",
        """
        import re, time
        names = {"G1": "alpha", "G2": "beta", "G3": "gamma"}
        goal = re.search(r"^# (G[0-9]+):", BRIEF, re.M).group(1)
        with open(SCRIPTS / "spans.log", "a") as f:
            f.write(f"start {time.monotonic():.3f}\\n")
        time.sleep(1)
        name = names[goal]
        put(f"src/{name}.py", f"def {name}():\\n    return {name!r}\\n")
        put(f"tests/test_{name}.py", f"from {name} import {name}\\n\\n\\ndef test_it():\\n    assert {name}() == {name!r}\\n")
        with open(SCRIPTS / "spans.log", "a") as f:
            f.write(f"end {time.monotonic():.3f}\\n")
        """,  # noqa: E501
    )
    with_roles(project, f"- maker: command `{maker}`\n  - Limits: copies 2\n")
    ran = project.loop("run", "--parallel", "3")
    assert ran.status == 0, ran
    assert sorted(k["goal"] for k in ran.data["kept"]) == ["G1", "G2", "G3"], ran
    events = sorted(
        (float(t), 1 if kind == "start" else -1)
        for kind, t in (
            ln.split() for ln in (project.scripts / "spans.log").read_text().splitlines()
        )
    )
    at_once, most = 0, 0
    for _, step in events:
        at_once += step
        most = max(most, at_once)
    assert most == 2, events  # never three, though --parallel 3 asked for three
