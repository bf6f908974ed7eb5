"""What an independent review found, each on a real repository with a scripted maker: a
maker that rewrites what measures it is refused, and one that acts through the clone's git
directory in its throwaway worktree has it put back."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import PY, Project, make_project
from test_loop_resume import crontab

from relay.loop.metric import parse_experiments


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


COST_PY = "import pathlib\n\nprint(pathlib.Path('cost.txt').read_text().strip())\n"


def metric_project(tmp_path: Path, *extra: str) -> Project:
    project = make_project(tmp_path, accept=None, retries=3)
    project.write("bench/cost.py", COST_PY)
    project.write("cost.txt", "100\n")
    project.write("data/weights.txt", "1\n")
    project.git("add", "bench/cost.py", "cost.txt", "data/weights.txt")
    project.git("commit", "-qm", "the metric and what it reads")
    metric = f"{PY} bench/cost.py"
    args = ("--metric", metric, "--direction", "down", "--threshold", "10", *extra)
    added = project.loop("goal", "add", "Cheaper", *args)
    assert added.data == {"goal": "G1"}, added
    return project


def test_a_maker_that_rewrites_the_metric_script_is_refused(tmp_path: Path) -> None:
    project = metric_project(tmp_path, "--metric-files", "data/*")
    assert "- Metric files: `data/*`" in project.read("docs/loop/GOALS.md")
    maker = project.script(
        "maker",
        """
        n = count("maker")
        if n == 1:
            put("bench/cost.py", "print(1)\\n")  # the metric faked: never measured
            print("IDEA: measure less")
        elif n == 2:
            put("data/weights.txt", "0\\n")  # a file the goal declares the metric's
            print("IDEA: lighter weights")
        else:
            put("cost.txt", "60\\n")
            print("IDEA: a real saving")
        """,
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    _, rows = parse_experiments(project.read("docs/loop/EXPERIMENTS.md"))
    assert [(r.idea, r.result, r.outcome) for r in rows] == [
        ("measure less", "-", "refused"),
        ("lighter weights", "-", "refused"),
        ("a real saving", "60", "kept"),
    ]
    assert "metric's own files (bench/cost.py)" in rows[0].why
    assert "metric's own files (data/weights.txt)" in rows[1].why
    assert project.read("bench/cost.py") == COST_PY
    assert project.read("data/weights.txt") == "1\n" and project.read("cost.txt") == "60\n"


def test_metric_files_go_with_a_metric(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    ran = project.loop("goal", "add", "X", "--accept", "true", "--metric-files", "a/*")
    assert ran.status == 2 and "--metric-files go with --metric" in str(ran.errors), ran


def test_an_optimisation_maker_cannot_act_through_the_clones_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no namespace hides the person's clone (env-level only), a maker that finds
    it and acts through its git has it all put back."""
    from relay.ratchet import sandbox

    monkeypatch.setattr(sandbox, "level", lambda: sandbox.ENV_ONLY)
    project = metric_project(tmp_path)
    config = project.read(".git/config")
    maker = project.script(
        "maker",
        f"""
        import subprocess
        n = count("maker")
        CLONE = {str(project.root)!r}
        if n == 1:
            put(CLONE + "/.git/hooks/pre-commit", "#!/bin/sh\\nexit 1\\n")
            subprocess.run(["git", "-C", CLONE, "config", "user.name", "the maker"], check=True)
            subprocess.run(["git", "-C", CLONE, "branch", "maker-was-here"], check=True)
            subprocess.run(["git", "-C", CLONE, "tag", "maker-tag"], check=True)
            put("cost.txt", "50\\n")
            print("IDEA: through git")
        else:
            put("cost.txt", "60\\n")
            print("IDEA: a real saving")
        """,
    )
    ran = project.loop("run", "--maker", maker, "--allow-env-only")
    assert ran.status == 0, ran
    _, rows = parse_experiments(project.read("docs/loop/EXPERIMENTS.md"))
    assert [(r.idea, r.outcome) for r in rows] == [
        ("through git", "reverted"),
        ("a real saving", "kept"),
    ]
    assert "`.git/hooks/pre-commit` is the clone's own machinery" in rows[0].why
    assert "`.git/config`" in rows[0].why and "refs/heads/maker-was-here" in rows[0].why
    assert not (project.root / ".git/hooks/pre-commit").exists()
    assert project.read(".git/config") == config
    assert project.git("branch", "--list", "maker-was-here") == ""
    assert project.git("tag", "--list") == ""
    assert project.read("cost.txt") == "60\n"


@pytest.mark.usefixtures("real_crontab")
def test_a_resume_whose_clone_is_gone_still_removes_its_entry(tmp_path: Path) -> None:
    import io
    import json
    import shutil
    import subprocess
    from contextlib import redirect_stderr, redirect_stdout

    from relay.cli import main
    from relay.schedulers.oneshot import RESUME_PREFIX, timed_label

    project = make_project(tmp_path, accept=None)
    label = timed_label(RESUME_PREFIX, project.root.resolve())
    table = f"# a line of the user's own\n0 3 * * * true # relay:{label}\n"
    subprocess.run(["crontab", "-"], input=table, text=True, check=True)
    shutil.rmtree(project.root)
    out, err = io.StringIO(), io.StringIO()
    args = ["--maker", "true", "--scheduler", "cron", "--resume", "--repo-dir", str(project.root)]
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["loop", "run", *args, "--json"])
    assert status != 0 and json.loads(out.getvalue())["errors"], out.getvalue()
    assert crontab() == ["# a line of the user's own"], err.getvalue()  # the entry went first


def test_the_doctor_of_a_loop_only_clone_checks_the_resume(tmp_path: Path) -> None:
    import io
    import json
    from contextlib import redirect_stderr, redirect_stdout

    from relay.cli import main
    from relay.ratchet.sandbox import NAMESPACES, _as_root, level

    boundary = (
        ("ok", "namespaces: the maker cannot see this clone, its remotes or HOME's credentials")
        if level() == NAMESPACES
        else ("warn", found_env_only())
    )
    project = make_project(tmp_path, accept=None)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["doctor", "--repo-dir", str(project.root), "--json"])
    doc = json.loads(out.getvalue())
    assert status == 0, doc
    found = {c["name"]: (c["status"], c["detail"]) for c in doc["data"]["checks"]}
    shares = {n: found.pop(n) for n in list(found) if n.startswith("loop share ")}
    if _as_root() and level() == NAMESPACES:  # each share the loop tests' conftest names
        bound = ("ok", "bound through an idmapped mount: each box runs as a user of its own")
        assert shares == {f"loop share {tmp_path / n}": bound for n in ("scripts", "bin")}
    else:
        assert shares == {}
    assert found == {
        "relay": ("skip", "not set up here: no `## Relay` section"),
        "loop resume": ("skip", "no resume pending"),
        "loop gates": (
            "skip",
            "nothing scheduled; `relay loop schedule` registers a run, then doctor runs them",
        ),
        "loop maker boundary": boundary,
    }


def found_env_only() -> str:
    return (
        "env-level only: no user namespace here, so a maker that looks can reach this clone"
        " and HOME's files (it still runs in a clone of its own, without credentials)"
    )


def test_triage_retires_a_goal_whose_finding_is_gone(tmp_path: Path) -> None:
    from loop_project import CALC, TEST_GATE

    from relay.loop.goals import GoalState, parse_board

    project = make_project(tmp_path, accept=None, gates=(TEST_GATE,))
    project.write("src/calc.py", CALC + "# TODO: support floats\n")
    project.git("add", "-A")
    project.git("commit", "-qm", "a marker")
    first = project.loop("triage")
    assert [e["goal"] for e in first.data["enqueued"]] == ["G1"], first
    project.write("src/calc.py", CALC)
    project.git("add", "-A")
    project.git("commit", "-qm", "the marker resolved by hand")
    again = project.loop("triage")
    assert again.data["retired"] == [
        {"goal": "G1", "why": "retired by triage: the finding `marker src/calc.py # TODO:"
         " support floats` is gone"}
    ], again  # fmt: skip
    row = parse_board(project.read("docs/loop/BOARD.md")).rows[0]
    assert row.state is GoalState.DONE and row.verdict == "retired"
    assert project.clean() and project.subjects()[-1] == "loop: triage retired G1"
    assert project.loop("triage").data["retired"] == []  # once


def test_an_empty_last_idea_keeps_the_earlier_one() -> None:
    from relay.loop.metric import stated_idea

    assert stated_idea("IDEA: cache the parser\nwork\nIDEA:\n") == "cache the parser"
    assert stated_idea("IDEA:   \n") is None


def test_relay_failing_to_verify_says_what_failed() -> None:
    from relay.loop.jobs import Answer, judged

    why = "the relay could not verify the change: the hub is unreachable"
    passed, what, diagnosis = judged(Answer(0, 0, "failed", why), node="ci")
    assert not passed and "job #0" not in what
    assert what == f"no verification on ci: {why}" and diagnosis == why


@pytest.mark.usefixtures("real_crontab")
def test_removing_a_schedule_that_is_not_there_says_so(tmp_path: Path) -> None:
    project = make_project(tmp_path, accept=None)
    ran = project.loop("schedule", "--remove", "--scheduler", "cron")
    assert ran.status == 0 and ran.data["had"] is False, ran


def test_a_script_the_metrics_script_runs_is_the_metrics_own(tmp_path: Path) -> None:
    """The metric runs `sh bench/run.sh`, which runs bench/cost.py: rewriting cost.py
    fakes the number as surely as rewriting the command's own script."""
    project = make_project(tmp_path, accept=None, retries=1)
    project.write("bench/cost.py", COST_PY)
    project.write("bench/run.sh", f"#!/bin/sh\n{PY} bench/cost.py\n")
    project.write("cost.txt", "100\n")
    project.git("add", "bench", "cost.txt")
    project.git("commit", "-qm", "the metric and what it runs")
    args = ("--metric", "sh bench/run.sh", "--direction", "down", "--threshold", "10")
    assert project.loop("goal", "add", "Cheaper", *args).data == {"goal": "G1"}
    maker = project.script(
        "maker",
        """
        if count("maker") == 1:
            put("bench/cost.py", "print(1)\\n")
            print("IDEA: measure less")
        else:
            put("cost.txt", "60\\n")
            print("IDEA: a real saving")
        """,
    )
    ran = project.loop("run", "--maker", maker)
    assert ran.status == 0, ran
    _, rows = parse_experiments(project.read("docs/loop/EXPERIMENTS.md"))
    assert [(r.idea, r.outcome) for r in rows] == [
        ("measure less", "refused"),
        ("a real saving", "kept"),
    ]
    assert "metric's own files (bench/cost.py)" in rows[0].why
    assert project.read("bench/cost.py") == COST_PY
