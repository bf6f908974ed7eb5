"""A group's whole change is every run's part of it: the group review after a run that
kept only the group's last goal sees the earlier run's goal too, and a block takes both
back; a group whose goals were all kept without --group is still reviewed by
`relay loop run --group`. The change is read from the main line's history (the kept
commits of the group's goals since it was last taken back), not from where a run began."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import board_rows, goals_project
from test_loop_parallel_group import CHECKER, MAKER, _accept

from relay.loop.goals import GoalState


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def _project(tmp_path: Path):  # type: ignore[no-untyped-def]
    return goals_project(
        tmp_path,
        [
            ("Mul", _accept("mul"), (), "a"),
            ("Beta", _accept("beta"), (), "a"),
            ("Delta", _accept("delta"), (), None),
        ],
    )


@pytest.mark.timeout(300)
def test_the_group_review_covers_every_run_s_part_and_takes_all_of_it_back(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    maker, checker = project.script("maker", MAKER), project.script("checker", CHECKER)
    run = ("run", "--maker", maker, "--checker", checker, "--group", "a")
    first = project.loop(*run, "--max-iterations", "1")
    assert first.status == 0, first
    assert [k["goal"] for k in first.data["kept"]] == ["G1"], first.data
    assert project.calls("group") == 0  # G2 still open: no group review yet
    second = project.loop(*run)
    assert second.status == 1, second
    assert "blocks group a's whole change" in second.data["stopped"]
    review = project.seen("group", 1)
    assert "src/mul.py" in review and "src/beta.py" in review  # G1's change too
    rows = board_rows(project)
    assert rows["G1"][0] is GoalState.OPEN and rows["G2"][0] is GoalState.OPEN
    assert not (project.root / "src/mul.py").exists()  # G1's code went back with G2's
    assert not (project.root / "src/beta.py").exists()
    assert project.clean()


@pytest.mark.timeout(300)
def test_a_group_finished_without_group_is_reviewed_by_run_group(tmp_path: Path) -> None:
    project = _project(tmp_path)
    maker, checker = project.script("maker", MAKER), project.script("checker", CHECKER)
    for goal in ("G1", "G3", "G2"):  # another goal kept in between
        ran = project.loop("run", "--maker", maker, "--checker", checker, "--goal", goal)
        assert ran.status == 0, ran
    assert project.calls("group") == 0
    ran = project.loop("run", "--maker", maker, "--checker", checker, "--group", "a")
    assert ran.status == 1, ran  # reviewed, and blocked
    review = project.seen("group", 1)
    assert "src/mul.py" in review and "src/beta.py" in review
    assert "src/delta.py" not in review  # not the group's: neither reviewed nor taken back
    assert (project.root / "src/delta.py").exists()
    assert not (project.root / "src/mul.py").exists()
    assert board_rows(project)["G3"][0] is GoalState.DONE
    assert project.clean()


def test_run_group_refuses_a_group_goals_md_does_not_have(tmp_path: Path) -> None:
    project = _project(tmp_path)
    maker = project.script("maker", MAKER)
    for args in (("--dry-run",), ()):
        ran = project.loop("run", "--maker", maker, "--group", "zz", *args)
        assert ran.status != 0, ran
        message = ran.errors[0]["message"]
        assert message.startswith("there is no group zz in GOALS.md (its groups: a)"), message
    assert project.calls("G1") == 0 and project.clean()
