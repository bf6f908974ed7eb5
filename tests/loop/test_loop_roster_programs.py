"""The roster's checks, however a role is spelt: the maker's program under another
spelling still grades its own work (``sh tools/m.sh``, ``./tools//m.sh``, its absolute
path, ``claude -p`` for ``agent claude``); a shipping permission anywhere in a tool's
words is refused; a role with an empty backend is refused, not prose; a node the table
does not list is refused; a managed role's shell waits for a person; a claim held at the
barrier says so."""

from __future__ import annotations

import pytest

from relay.errors import LocalUsageError, SpineFileError
from relay.loop import managed as m
from relay.loop.agents import parse_role
from relay.loop.goals import Board, BoardRow, Goal, GoalState
from relay.loop.parallel import waits_on
from relay.loop.programs import program_of, programs_of, same_program, shared_program
from relay.loop.ratchet import refuse_bad_panel
from relay.loop.roster import BackendKind, check_roster, parse_roster
from relay.loop.threads import continues, goal_stamp, thread_keys
from relay.loop.tools import runs_commands, ships

ROOT = "/home/me/proj"


@pytest.mark.parametrize(
    "spelling",
    [
        "./tools/maker.sh",
        "tools/maker.sh",
        "sh tools/maker.sh",
        "bash -e ./tools/maker.sh --fast",
        "./tools//maker.sh",
        "tools/../tools/maker.sh",
        f"{ROOT}/tools/maker.sh",
        "env FOO=1 tools/maker.sh",
        "FOO=1 sh -c ./tools/maker.sh",
        "/usr/bin/env -u HOME bash tools/maker.sh",
    ],
)
def test_one_script_under_every_spelling_is_one_program(spelling: str) -> None:
    assert program_of(spelling, root=ROOT) == "tools/maker.sh"
    assert same_program(spelling, "./tools/maker.sh", root=ROOT)


def test_interpreters_and_adapters_resolve_to_their_program() -> None:
    assert program_of("python3 -u tools/review.py", root=ROOT) == "tools/review.py"
    assert program_of("/opt/venv/bin/python -W ignore tools/review.py") == "tools/review.py"
    assert program_of("python -m mypkg.review") == "mypkg/review.py"  # a module is its file
    assert program_of("agent claude:review".removeprefix("agent ")) == "claude"
    assert same_program("claude -p --output-format json", "claude:review")
    assert same_program("codex", "codex exec --json")
    # other programs, other modules, other inline scripts, another tree: not the same
    assert not same_program("tools/maker.sh", "tools/review.sh", root=ROOT)
    assert not same_program("python -m a.make", "python -m a.review")
    assert not same_program("sh -c 'echo made > f'", "sh -c 'echo VERDICT: approve'")
    assert not same_program("/elsewhere/tools/maker.sh", "tools/maker.sh", root=ROOT)
    assert not same_program("claude", "codex")
    assert not same_program("", "")


def _problems(text: str, **kw: object) -> list[str]:
    roster = parse_roster("## Roles\n\n" + text)
    return [str(p) for p in check_roster(roster, root=ROOT, **kw)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("maker", "grader"),
    [
        ("command `./tools/maker.sh`", "command `sh tools/maker.sh`"),
        ("command `./tools/maker.sh`", "command `tools/maker.sh`"),
        ("command `./tools/maker.sh`", f"command `{ROOT}/tools/maker.sh`"),
        ("command `./tools/maker.sh`", "command `./tools//maker.sh`"),
        ("command `claude -p`", "agent claude:review"),
        ("agent claude", "command `claude -p --model x`"),
    ],
)
def test_check_refuses_the_maker_grading_under_another_spelling(maker: str, grader: str) -> None:
    found = _problems(f"- maker: {maker}\n- code-reviewer: {grader}\n")
    assert len(found) == 1 and found[0].startswith("code-reviewer: it is the maker (program ")


def test_the_run_refuses_the_maker_as_checker_under_another_spelling() -> None:
    class Panel:
        maker = "./tools/maker.sh"
        checkers = ("python3 tools/review.py", f"bash {ROOT}/tools/maker.sh")
        verifier: str | None = None
        red_team: tuple[str, ...] = ()

    with pytest.raises(LocalUsageError, match="cannot be a checker"):
        refuse_bad_panel(Panel(), root=ROOT)
    Panel.checkers = ("python3 tools/review.py",)
    refuse_bad_panel(Panel(), root=ROOT)
    # wrapped, or as the verifier or the red team: still the maker
    Panel.verifier = "timeout 60 ./tools/maker.sh"
    with pytest.raises(LocalUsageError, match=r"--verifier .* \(tools/maker.sh\)"):
        refuse_bad_panel(Panel(), root=ROOT)
    Panel.verifier = None
    Panel.red_team = ("cd tools; nice -n 19 ./maker.sh --attack",)
    with pytest.raises(LocalUsageError, match="--red-team"):
        refuse_bad_panel(Panel(), root=ROOT)
    Panel.red_team = ("./tools/attack.sh",)
    refuse_bad_panel(Panel(), root=ROOT)


@pytest.mark.parametrize(
    "tool",
    [
        "push", "git push", "git-push", "Push", "gh pr merge", "merge-to-main", "deploy:prod",
        "force-push", "gh release create", "merge_pr", "bash (push)", "mergePR", "automerge",
        "publish to pypi", "npm publish", "ship it", "Deploy to prod",
    ],
)  # fmt: skip
def test_a_shipping_word_anywhere_ships(tool: str) -> None:
    assert ships(tool)
    assert m.shipping_tools([tool]) == [tool]  # the managed path's rule is the same one
    found = _problems(f"- maker: command `m`\n  - Tools: read, {tool}\n")
    assert found == [
        f"maker: it holds a shipping permission ({tool}); only the coordinator may, behind a"
        " person's confirmation"
    ]
    assert _problems(f"- coordinator: command `c`\n  - Tools: {tool}\n") == []


@pytest.mark.parametrize(
    "tool",
    ["read", "edit", "write", "bash", "test", "grep", "glob", "web_search", "emergency-stop",
     "pytest -q", "git diff", "git log"],
)  # fmt: skip
def test_reading_editing_and_testing_do_not_ship(tool: str) -> None:
    assert not ships(tool)
    assert _problems(f"- maker: command `m`\n  - Tools: {tool}\n") == []


def test_a_shell_is_a_tool_that_runs_commands() -> None:
    assert runs_commands("bash") and runs_commands("shell (ask)") and runs_commands("sh")
    assert not runs_commands("read") and not runs_commands("edit")
    for shell in ("fish", "pwsh", "PowerShell", "cmd", "python", "code_execution", "tcsh"):
        assert runs_commands(shell), shell


# a CLI that reaches what is shipped to, whole or changing it: it ships
@pytest.mark.parametrize(
    "tool",
    ["kubectl apply", "terraform apply", "twine upload", "helm upgrade", "helm install x",
     "gh", "git", "shipping", "Shipped", "kubectl delete pod", "pulumi up", "aws s3 cp",
     "docker", "scp", "rsync -a out/ host:", "ansible-playbook site.yml", "fly", "tofu"],
)  # fmt: skip
def test_a_cli_that_reaches_what_is_shipped_ships(tool: str) -> None:
    assert ships(tool)
    found = _problems(f"- code-reviewer: command `r`\n  - Tools: read, {tool}\n")
    assert len(found) == 1 and "shipping permission" in found[0], found


@pytest.mark.parametrize(
    "tool",
    ["git diff", "gh pr view", "kubectl get pods", "terraform plan", "helm list",
     "twine check dist/*", "docker build .", "cargo test", "npm test", "aws sts whoami"],
)  # fmt: skip
def test_the_same_cli_narrowed_to_reading_does_not_ship(tool: str) -> None:
    assert not ships(tool)


@pytest.mark.parametrize("line", ["- maker:", "- maker: ", "- maker: (none)"])
def test_a_role_with_an_empty_backend_is_refused(line: str) -> None:
    roster = parse_roster(f"## Roles\n\n{line}\n- verifier: command `v`\n")
    assert roster.get("maker") is not None
    assert roster.get("maker").backend is BackendKind.NONE  # type: ignore[union-attr]
    assert _problems(f"{line}\n") == [
        "maker: it has no backend; name a command, an agent, a node or a managed agent"
    ]


@pytest.mark.parametrize(
    "line",
    ["- Maker: agent claude", "* maker: agent claude", "+ verifier: command `v`",
     "1. maker: command `x`", "2) code-reviewer: agent codex", "  - maker: command `x`",
     "- perf-Reviewer: command `p`", "3. perf-reviewer: node win-desktop",
     "- maker : command `x`"],
)  # fmt: skip
def test_a_role_in_another_shape_is_named_not_taken_as_prose(line: str) -> None:
    with pytest.raises(SpineFileError, match="a role reads `- "):
        parse_roster(f"# Loop\n\n## Roles\n\nProse.\n\n{line}\n")
    # prose bullets that name no role stay prose
    assert parse_roster("## Roles\n\n- Note: the maker never grades.\n").roles == ()
    assert parse_roster("## Roles\n\n1. First: the spine, then the roles.\n").roles == ()


def test_check_refuses_a_node_the_table_does_not_list() -> None:
    text = "- maker: node win, node ghost\n- verifier: node mac\n"
    assert _problems(text, nodes={"win", "ghost", "mac"}) == []
    assert _problems(text, nodes={"win", "mac"}) == [
        "maker: ghost is not in the node table; run `relay join` on that machine, or name a"
        " node `relay nodes` lists"
    ]
    assert _problems(text, nodes=set())[1].startswith("verifier: mac is not in the node table")
    assert _problems(text) == []  # no table given: not checked


def test_a_managed_role_with_a_shell_asks_a_person_for_it() -> None:
    spec = parse_roster("## Roles\n\n- code-reviewer: managed-agent\n  - Tools: read, bash\n")
    roles, _ = m.from_specs(spec.roles, {})
    assert roles[0].ask == ("bash",)
    configs = m.toolset(roles[0])["configs"]
    assert {c["name"]: c["permission_policy"]["type"] for c in configs} == {
        "read": "always_allow",
        "bash": "always_ask",
    }
    # even a role built without asking gets its shell under always_ask
    plain = m.ManagedRole("red-team", tools=("read", "bash"))
    assert [c["permission_policy"]["type"] for c in m.toolset(plain)["configs"]] == [
        "always_allow",
        "always_ask",
    ]
    with pytest.raises(m.RosterError, match="ships"):
        m.from_specs(
            parse_roster("## Roles\n\n- maker: managed-agent\n  - Tools: gh pr merge\n").roles, {}
        )


def test_a_claim_held_at_the_barrier_says_so() -> None:
    goals = (Goal("G1", "one", "true"), Goal("G2", "two", "true", depends=("G1",)))
    board = Board("", (BoardRow("G1", "one"),))
    assert waits_on(goals[1], goals, board) == ["G1"]
    assert waits_on(goals[0], goals, board) == []
    found = m.Claim("G2", "diff --git a/x b/x\n", "made")
    why = m.not_judged(found, only=None, judged=0, budget=None, pending=["G1"])
    assert why == "G2 waits on G1: a goal is judged only when every goal it depends on is done"
    assert "no goal G2" in m.not_judged(found, only=None, judged=0, budget=None, known=False)
    done = Board("", (BoardRow("G1", "one", state=GoalState.DONE),))
    assert waits_on(goals[1], goals, done) == []


def test_a_thread_belongs_to_one_goal_and_one_history() -> None:
    one = goal_stamp("G1", "Multiply", "pytest tests/test_mul.py")
    assert one == goal_stamp("G1", "Multiply", "pytest tests/test_mul.py")
    assert one != goal_stamp("G1", "Negate", "pytest tests/test_mul.py")
    assert one != goal_stamp("G1", "Multiply", "pytest tests/test_neg.py")
    assert thread_keys([("G1", "a"), ("G2", None), ("G3", "a")]) == {
        "G1", "G2", "G3", "group-a"
    }  # fmt: skip
    assert continues("# maker on G1\n", "# maker on G1\n\n### 1. asked (t)\n")
    assert not continues("# maker on G1\n\n### 1. asked (t)\n", "# maker on G1\n")


def test_the_copies_limit_and_settings_follow_the_makers_program_not_its_spelling() -> None:
    """A --maker spelt otherwise than the roster's maker skipped its copies and its
    settings: the same program is the same maker."""
    from relay.loop.roster import MAKER, makers_allowed, parse_roster, settings_for

    roster = parse_roster(
        "## Roles\n\n- maker: command `./tools/maker.sh`\n  - Limits: copies 2, turns 3\n"
    )
    assert makers_allowed(roster, 3, maker="sh tools/maker.sh")[0] == 2
    assert makers_allowed(roster, 3, maker="./tools/other.sh")[0] == 3
    assert settings_for(roster, MAKER, "bash ./tools//maker.sh") is not None
    assert settings_for(roster, MAKER, "./tools/other.sh") is None


# the maker's line and lines that run it in one of their simple commands, behind wrappers
# (the roles run under /bin/sh -c, so each of these runs the maker's program)
@pytest.mark.parametrize(
    ("maker", "grader"),
    [
        ("./tools/maker.sh", "timeout 600 ./tools/maker.sh"),
        ("./tools/maker.sh", "timeout --kill-after=5s -s TERM 10m tools/maker.sh --review"),
        ("./tools/maker.sh", "nice ./tools/maker.sh"),
        ("./tools/maker.sh", "nice -n 19 ionice -c 3 tools/maker.sh"),
        ("./tools/maker.sh", "cd tools && ./maker.sh"),
        ("./tools/maker.sh", "cd tools/sub && ../maker.sh"),
        ("./tools/maker.sh", f"cd {ROOT} && exec tools/maker.sh"),
        ("./tools/maker.sh", "true && ./tools/maker.sh"),
        ("./tools/maker.sh", "./tools/lint.sh || ./tools/maker.sh"),
        ("./tools/maker.sh", "git diff HEAD~1 | ./tools/maker.sh"),
        ("./tools/maker.sh", "./tools/review.sh\n./tools/maker.sh"),
        ("./tools/maker.sh", "/usr/bin/time -v -o t.txt ./tools/maker.sh"),
        ("./tools/maker.sh", "time -p ./tools/maker.sh"),
        ("./tools/maker.sh", "bash --rcfile x tools/maker.sh"),
        ("./tools/maker.sh", "bash -o pipefail -ec 'cd tools; ./maker.sh | cat'"),
        ("./tools/maker.sh", "A=1 B=2 nohup stdbuf -oL ./tools/maker.sh > log 2>&1"),
        ("./tools/maker.sh", "echo G1 | xargs -n 1 -P 2 ./tools/maker.sh"),
        ("./tools/maker.sh", "verdict=$(./tools/maker.sh) && echo $verdict"),
        ("./tools/maker.sh", "echo `tools/maker.sh`"),
        ("./tools/maker.sh", "(cd tools; sudo -u ci ./maker.sh)"),
        ("timeout 60 ./tools/maker.sh", "tools/maker.sh"),
        ("python3 tools/m.py", "uv run --with x python tools/m.py"),
        ("python3 tools/m.py", "poetry run python -u tools/m.py"),
        ("python3 -m tools.maker", "python3 tools/maker.py"),
        ("python3 -m tools.maker", "python -m tools.maker.__main__"),
        ("python3 tools/maker/__main__.py", "uv run python -m tools.maker"),
        ("agent claude", "/usr/local/bin/claude -p"),
        ("agent claude", "npx claude"),
        ("agent claude:make", "npx -y claude --print"),
        ("agent codex", "uvx --from openai-codex codex exec"),
        ("agent gemini", "env -u HOME gemini -p review"),
        ("command `claude -p`", "pipx run claude"),
    ],
)
def test_a_wrapped_maker_still_grades_its_own_work(maker: str, grader: str) -> None:
    maker, grader = (w.removeprefix("agent ").removeprefix("command `").rstrip("`")
                     for w in (maker, grader))  # fmt: skip
    assert shared_program(maker, grader, root=ROOT) is not None, (maker, grader)
    assert shared_program(grader, maker, root=ROOT) is not None  # either way round
    if "\n" in grader or "`" in grader:
        return  # no roster line holds it: a --checker can
    line = f"- maker: command `{maker}`\n- code-reviewer: command `{grader}`\n"
    if parse_role(maker) is not None:
        line = f"- maker: agent {maker}\n- code-reviewer: command `{grader}`\n"
    found = _problems(line)
    assert len(found) == 1 and found[0].startswith("code-reviewer: it is the maker"), found


@pytest.mark.parametrize(
    ("maker", "grader"),
    [
        ("./tools/maker.sh", "timeout 600 ./tools/review.sh"),
        ("./tools/maker.sh", "cd tools && ./review.sh"),
        ("./tools/maker.sh && git add -A", "git diff | ./tools/review.sh"),  # git is neutral
        ("./tools/maker.sh", "echo maker.sh; true"),
        ("./tools/maker.sh", "cd elsewhere && ./maker.sh"),  # elsewhere/maker.sh
        ("python3 -m tools.maker", "python3 -m tools.review"),
        ("python3 -c 'import make'", "python3 -c 'import review'"),
        ("agent claude", "npx codex"),
        ("agent claude", "/opt/bin/claude-review"),
        ("/elsewhere/tools/maker.sh", f"{ROOT}/tools/maker.sh"),
    ],
)
def test_other_programs_behind_the_same_wrappers_are_not_the_maker(maker: str, grader: str) -> None:
    assert shared_program(maker, grader, root=ROOT) is None, programs_of(grader, root=ROOT)


def test_a_line_s_programs_are_read_in_order_once() -> None:
    line = "cd tools && FOO=1 ./a.sh | timeout 5 ./b.sh; ./a.sh && bash -c 'python -m c.d'"
    assert programs_of(line, root=ROOT) == ["tools/a.sh", "tools/b.sh", "tools/c/d.py"]
    assert program_of("true && timeout 9 ./tools/maker.sh", root=ROOT) == "tools/maker.sh"


def test_a_group_s_whole_change_spans_runs_back_to_its_last_take_back() -> None:
    from relay.loop.parallel import group_change, taken_back_subject

    goals = (Goal("G1", "Mul", "true", group="a"), Goal("G2", "Beta", "true", group="a"))
    history = [  # newest first: sha, first parent, subject
        ("h6", "h5", "loop: run report (done)"),
        ("h5", "h4", "G2: Beta"),
        ("h4", "h3", "G3: Delta"),
        ("h3", "h2", "G1: Mul"),
        ("h2", "h1", taken_back_subject("a")),
        ("h1", "h0", "G1: Mul"),  # before the take-back: not part of it any more
    ]
    change = group_change(history, goals, "a")
    assert change is not None and (change.base, change.kept) == ("h2", ("h3", "h5"))
    # a reused id with another title, another group's take-back, nothing kept
    assert group_change([("x2", "x1", "G1: Other")], goals, "a") is None
    other = [("y3", "y2", "G2: Beta"), ("y2", "y1", taken_back_subject("b"))]
    assert group_change([*other, ("y1", "y0", "G1: Mul")], goals, "a") == (
        type(change)(base="y0", kept=("y1", "y3"))
    )
    assert group_change([], goals, "a") is None


def test_a_group_no_goal_has_is_named_as_missing() -> None:
    from relay.loop.parallel import unknown_group

    goals = (Goal("G1", "Mul", "true", group="a"), Goal("G2", "Beta", "true", group="b"))
    assert unknown_group(goals, "a") == "" and unknown_group(goals, None) == ""
    assert unknown_group(goals, "zz") == (
        "there is no group zz in GOALS.md (its groups: a, b); add `- Group: zz` to a goal"
    )
    assert "it has no groups" in unknown_group((Goal("G1", "Mul", "true"),), "zz")


def test_a_new_loop_md_describes_the_roster_and_parallel_makers_and_holds_no_role() -> None:
    from relay.loop.spine import extend_loop

    text = extend_loop(None)
    assert "One goal at a time" not in text and "--parallel N" in text
    assert "`Limits:`" in text and "`node NAME`" in text
    assert parse_roster(text).roles == ()  # the prose describes roles, declares none
    assert check_roster(parse_roster(text)) == []
