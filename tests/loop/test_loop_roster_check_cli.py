"""`relay loop check`, `relay loop roles` and `relay loop run` on a real clone refuse a
roster the review broke them with: the maker grading under another spelling of its
script, a shipping word inside a tool, an empty backend, a node the node table does not
list (refused before anything is pushed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_project import TEST_GATE, Project, make_project


def _with_roles(project: Project, roles: str) -> None:
    loop = project.read("docs/loop/LOOP.md")
    head, _, rest = loop.partition("## Roles\n")
    body, sep, tail = rest.partition("\n## ")
    project.write(
        "docs/loop/LOOP.md", f"{head}## Roles\n{body.rstrip()}\n\n{roles}\n{sep.lstrip()}{tail}"
    )
    project.git("commit", "-q", "-am", "a roster")


@pytest.mark.parametrize(
    ("roles", "problem"),
    [
        (
            "- maker: command `./tools/maker.sh`\n- code-reviewer: command `sh tools/maker.sh`\n",
            "code-reviewer: it is the maker (program tools/maker.sh)",
        ),
        (
            "- maker: command `{root}/tools/maker.sh`\n- verifier: command `tools//maker.sh`\n",
            "verifier: it is the maker (program tools/maker.sh)",
        ),
        (
            "- maker: command `./tools/maker.sh`\n  - Tools: read, gh pr merge\n",
            "maker: it holds a shipping permission (gh pr merge)",
        ),
        (
            "- maker: command `./tools/maker.sh`\n"
            "- code-reviewer: command `cd tools && timeout 600 ./maker.sh --review`\n",
            "code-reviewer: it is the maker (program tools/maker.sh)",
        ),
        (
            "- maker: command `./tools/maker.sh`\n"
            "- red-team: command `true; nice -n 5 /usr/bin/time -v tools/maker.sh`\n",
            "red-team: it is the maker (program tools/maker.sh)",
        ),
        ("- maker:\n- verifier: command `v`\n", "maker: it has no backend"),
        ("- maker: node ghost\n", "maker: ghost is not in the node table"),
    ],
)
def test_check_roles_and_run_refuse_the_broken_roster(
    tmp_path: Path, roles: str, problem: str
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    (project.root / "tools").mkdir()
    (project.root / "tools/maker.sh").write_text("#!/bin/sh\nexit 0\n")
    (project.root / "tools/maker.sh").chmod(0o755)
    project.git("add", "tools")
    _with_roles(project, roles.format(root=project.root))
    branches = project.git("branch", "-a")
    check = project.loop("check")
    assert check.status != 0 and problem in check.errors[0]["message"], check
    shown = project.loop("roles")
    assert shown.status == 1 and any(p.startswith(problem) for p in shown.data["problems"])
    for args in (("run", "--dry-run"), ("run",)):
        ran = project.loop(*args)
        assert ran.status != 0 and problem in ran.errors[0]["message"], ran
    assert project.git("branch", "-a") == branches  # nothing pushed nor branched
    assert project.clean()


@pytest.mark.parametrize(
    ("flag", "grader"),
    [
        ("--checker", "timeout 60 ./tools/maker.sh"),
        ("--verifier", "cd tools && exec ./maker.sh"),
        ("--red-team", "./tools/maker.sh"),
        ("--red-team", "bash -c 'nohup tools/maker.sh | cat'"),
    ],
)
def test_run_refuses_a_wrapped_maker_in_any_grading_flag(
    tmp_path: Path, flag: str, grader: str
) -> None:
    project = make_project(tmp_path, gates=(TEST_GATE,))
    (project.root / "tools").mkdir()
    (project.root / "tools/maker.sh").write_text("#!/bin/sh\nexit 0\n")
    (project.root / "tools/maker.sh").chmod(0o755)
    project.git("add", "tools")
    project.git("commit", "-q", "-m", "a maker")
    for args in (("run", "--dry-run"), ("run",)):
        ran = project.loop(*args, "--maker", "./tools/maker.sh", flag, grader)
        assert ran.status != 0, ran
        message = ran.errors[0]["message"]
        assert message.startswith(f"the {flag} `{grader}` runs the maker's program"), message
    assert project.clean()
