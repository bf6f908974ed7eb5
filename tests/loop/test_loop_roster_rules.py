"""The roster in LOOP.md's ``## Roles``: read and written purely (each round-trips exactly,
the prose kept), and checked: a maker that also grades, a role with no backend, a shipping
permission on any role but the coordinator are refused, naming the role."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relay.errors import SpineFileError
from relay.loop.roster import (
    BackendKind,
    Limits,
    RoleSpec,
    Roster,
    check_roster,
    parse_roster,
    render_section,
    with_roster,
)
from relay.loop.spine import extend_loop

ROSTER = """\
## Roles

Who does what; the maker never grades.

- coordinator: command `relay-coordinator`
  - Tools: push, merge
- maker: node win-desktop
  - Model: claude-sonnet-4-5
  - Instructions: `docs/loop/roles/maker.md`
  - Tools: edit, bash
  - Limits: timeout 30m, retries 3, copies 1
- code-reviewer: agent codex:review
  - Limits: turns 20
- security-auditor: managed-agent agent_011CZ
- red-team: command `python3 red.py --hard`
- verifier: managed-agent
"""


def test_a_canonical_roster_round_trips_byte_for_byte() -> None:
    roster = parse_roster(ROSTER)
    assert render_section(roster) == ROSTER
    maker = roster.get("maker")
    assert maker == RoleSpec(
        "maker",
        BackendKind.NODE,
        "win-desktop",
        model="claude-sonnet-4-5",
        instructions="docs/loop/roles/maker.md",
        tools=("edit", "bash"),
        limits=Limits(timeout="30m", retries=3, copies=1),
    )
    assert roster.get("red-team") == RoleSpec(
        "red-team", BackendKind.COMMAND, "python3 red.py --hard"
    )
    assert [r.name for r in roster.grading()] == [
        "code-reviewer", "security-auditor", "red-team", "verifier"
    ]  # fmt: skip
    assert check_roster(roster) == []


def test_the_default_roles_prose_is_an_empty_roster_and_survives_a_roster_being_added() -> None:
    loop = extend_loop(None)
    assert parse_roster(loop) == Roster(intro=parse_roster(loop).intro)
    assert parse_roster(loop).roles == ()
    assert with_roster(loop, parse_roster(loop)) == loop
    added = parse_roster(loop).with_role(RoleSpec("maker", BackendKind.AGENT, "claude"))
    text = with_roster(loop, added)
    assert "- **Maker**: the command given to `relay loop run --maker`" in text
    assert "- maker: agent claude\n\n## Iteration\n" in text
    assert parse_roster(text) == added
    # every other section byte for byte
    assert text.replace("- maker: agent claude\n\n", "", 1) == loop


_names = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
_words = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,10}", fullmatch=True)
_backends = st.one_of(
    st.tuples(
        st.just(BackendKind.COMMAND),
        st.from_regex(r"[a-z./][a-z0-9 ./`-]{0,20}[a-z]", fullmatch=True),
    ),
    st.tuples(
        st.just(BackendKind.AGENT), st.sampled_from(["claude", "codex:review", "aider:make"])
    ),
    st.tuples(st.just(BackendKind.NODE), _words),
    st.tuples(
        st.just(BackendKind.NODE),
        st.lists(_words, min_size=2, max_size=3, unique=True).map(", ".join),
    ),
    st.tuples(st.just(BackendKind.MANAGED), st.one_of(st.just(""), _words)),
    st.tuples(st.just(BackendKind.NONE), st.just("")),
)
_limits = st.builds(
    Limits,
    timeout=st.one_of(st.none(), st.sampled_from(["30m", "2h", "90s"])),
    retries=st.one_of(st.none(), st.integers(0, 9)),
    turns=st.one_of(st.none(), st.integers(0, 99)),
    copies=st.one_of(st.none(), st.integers(1, 20)),
)


@st.composite
def _rosters(draw: st.DrawFn) -> Roster:
    names = draw(st.lists(_names, unique=True, max_size=6))
    roles = []
    for name in names:
        kind, target = draw(_backends)
        roles.append(RoleSpec(
            name, kind, target,
            model=draw(st.one_of(st.none(), _words)),
            instructions=draw(st.one_of(st.none(), st.just(f"docs/loop/roles/{name}.md"))),
            tools=tuple(draw(st.lists(_words, max_size=3))),
            limits=draw(_limits),
        ))  # fmt: skip
    intro = draw(st.sampled_from(["", "Who does what.", "Line one.\n\n- **Maker**: prose"]))
    return Roster(intro=intro, roles=tuple(roles))


@given(_rosters())
def test_any_roster_round_trips(roster: Roster) -> None:
    text = render_section(roster)
    assert parse_roster(text) == roster
    assert render_section(parse_roster(text)) == text
    loop = with_roster(extend_loop(None), roster)
    assert parse_roster(loop) == roster
    assert with_roster(loop, roster) == loop


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("- maker: command python3 make.py", "command `CMD`"),
        ("- maker: agent gpt", "an agent backend names an adapter"),
        ("- maker: robot arm", "a role's backend is"),
        ("- maker: agent claude\n  - Limits: timeout soon", "timeout is a duration"),
        ("- maker: agent claude\n  - Limits: speed 3", "a limit is one of"),
        ("- maker: agent claude\n  - Colour: red", "their fields"),
        ("- maker: agent claude\n- maker: agent codex", "declared twice"),
        ("- maker: agent claude\n  - Instructions: maker.md", "a path in backticks"),
    ],
)
def test_a_hand_edit_relay_cannot_read_names_the_line(line: str, problem: str) -> None:
    with pytest.raises(SpineFileError, match=problem) as err:
        parse_roster(f"# Loop\n\n## Roles\n\nProse.\n\n{line}\n")
    assert err.value.name == "docs/loop/LOOP.md"
    assert err.value.line >= 7


def _problems(text: str) -> list[str]:
    return [str(p) for p in check_roster(parse_roster("## Roles\n\n" + text))]


def test_check_refuses_a_maker_that_also_grades() -> None:
    assert _problems(
        "- maker: command `./make.sh  --fast`\n- verifier: command `./make.sh --fast`\n"
    ) == [
        "verifier: it is the maker (program make.sh) and would grade its own work;"
        " give it another backend"
    ]
    # the same adapter in another mode is the same agent
    assert _problems("- maker: agent claude\n- code-reviewer: agent claude:review\n")[0].startswith(
        "code-reviewer: it is the maker (program claude)"
    )
    assert _problems("- maker: managed-agent agent_1\n- red-team: managed-agent agent_1\n")
    assert _problems("- maker: node win\n- test-engineer: node win\n")
    # a person's own grading role counts as grading
    assert _problems("- maker: node win\n- style-judge: node win\n")
    # different backends, and managed agents not created yet, are different roles
    assert _problems("- maker: agent claude\n- code-reviewer: agent codex\n") == []
    assert _problems("- maker: managed-agent\n- verifier: managed-agent\n") == []
    assert _problems("- maker: node win\n- coordinator: node win\n") == []


def test_check_refuses_a_role_with_no_backend_and_shipping_outside_the_coordinator() -> None:
    assert _problems("- maker: (none)\n") == [
        "maker: it has no backend; name a command, an agent, a node or a managed agent"
    ]
    found = _problems(
        "- coordinator: command `c`\n  - Tools: push, merge, deploy\n"
        "- maker: command `m`\n  - Tools: edit, git-push\n"
        "- verifier: command `v`\n  - Tools: Deploy to prod\n"
    )
    assert found == [
        "maker: it holds a shipping permission (git-push); only the coordinator may, behind a"
        " person's confirmation",
        "verifier: it holds a shipping permission (Deploy to prod); only the coordinator may,"
        " behind a person's confirmation",
    ]


def test_check_names_a_missing_instructions_file() -> None:
    roster = parse_roster("## Roles\n\n- maker: agent claude\n  - Instructions: `docs/m.md`\n")
    assert check_roster(roster, exists={"docs/m.md": True}) == []
    assert [str(p) for p in check_roster(roster, exists={"docs/m.md": False})] == [
        "maker: its instructions file docs/m.md does not exist"
    ]


# --- parallel makers' decisions, the reducer, threads ---

from relay.loop.classify import Review, Verdict  # noqa: E402
from relay.loop.goals import Board, BoardRow, Goal, GoalState  # noqa: E402
from relay.loop.parallel import (  # noqa: E402
    Landing,
    candidate_paths,
    landing,
    landing_order,
    makers_for,
    ready_goals,
    reduce_reviews,
)
from relay.loop.threads import (  # noqa: E402
    Status,
    Thread,
    ThreadState,
    brief_part,
    parse_status,
    parse_thread,
    render_status,
    render_thread,
    to_interrupt,
    with_entry,
)

FIVE = (
    Goal("G1", "one", "true"),
    Goal("G2", "two", "true"),
    Goal("G3", "three", "true"),
    Goal("G4", "four", "true"),
    Goal("G5", "five", "true", depends=("G2", "G4")),
)


def _board(**states: GoalState) -> Board:
    return Board("", tuple(BoardRow(g, g, state=s) for g, s in states.items()))


def test_ready_goals_fill_the_free_makers_and_hold_a_goal_at_its_barrier() -> None:
    ready = ready_goals(FIVE, _board(), running=(), slots=3)
    assert [g.id for g in ready.start] == ["G1", "G2", "G3"]
    assert ready.waiting == ("G5 waits on G2, G4",)
    ready = ready_goals(FIVE, _board(G2=GoalState.DONE), running=("G1", "G3"), slots=1)
    assert [g.id for g in ready.start] == ["G4"]
    ready = ready_goals(FIVE, _board(G2=GoalState.DONE), running=("G4",), slots=3)
    assert "G5" not in [g.id for g in ready.start]  # G4 runs, not yet kept
    both = _board(G2=GoalState.DONE, G4=GoalState.DONE, G1=GoalState.DONE, G3=GoalState.DONE)
    assert [g.id for g in ready_goals(FIVE, both, running=(), slots=3).start] == ["G5"]
    # set aside, blocked, and an optimisation goal that runs alone once nothing else does
    ready = ready_goals(FIVE, _board(G1=GoalState.BLOCKED), running=(), skip=("G2",), slots=9)
    assert [g.id for g in ready.start] == ["G3", "G4"]
    metric = (Goal("G1", "faster", "", metric="echo 1"), Goal("G2", "two", "true"))
    assert ready_goals(metric, _board(), running=(), slots=3).alone == metric[0]
    assert ready_goals(metric, _board(), running=("G2",), slots=3).alone is None
    grouped = (Goal("G1", "a", "true", group="x"), Goal("G2", "b", "true"))
    assert [g.id for g in ready_goals(grouped, _board(), running=(), slots=3, group="x").start] == [
        "G1"
    ]


def test_candidates_land_after_their_dependencies_and_as_the_baseline_allows() -> None:
    assert landing_order(["G5", "G4", "G2"], FIVE) == ["G2", "G4", "G5"]
    assert landing_order(["G3", "G1"], FIVE) == ["G1", "G3"]
    assert landing(base="a", head="a", applies=True) is Landing.JUDGED
    assert landing(base="a", head="b", applies=True) is Landing.REJUDGE
    assert landing(base="a", head="b", applies=False) is Landing.REMAKE
    assert candidate_paths(
        ["src/x.py", "docs/loop/BOARD.md", "docs/loop/state/iteration-log.md", "docs/loop/GOALS.md"]
    ) == ["docs/loop/GOALS.md", "src/x.py"]
    assert (makers_for(None, None), makers_for(None, 4), makers_for(2, 4)) == (1, 4, 2)


def test_the_reducer_blocks_on_any_block_and_ranks_shared_findings_first() -> None:
    reduced = reduce_reviews(
        [
            ("code-reviewer", Review(Verdict.APPROVE, ("naming is odd",))),
            ("security-auditor", Review(Verdict.BLOCK, ("token logged", "Naming is  odd"))),
            ("test-engineer", Review(None, discarded="no verdict")),
        ]
    )
    assert reduced.blocked and reduced.blockers == ("security-auditor", "test-engineer")
    assert [(f.text, f.raised_by, f.blocking) for f in reduced.findings] == [
        ("naming is odd", ("code-reviewer", "security-auditor"), True),
        ("token logged", ("security-auditor",), True),
        ("no verdict", ("test-engineer",), True),
    ]
    clear = reduce_reviews([("a", Review(Verdict.APPROVE)), ("b", Review(Verdict.APPROVE))])
    assert not clear.blocked and clear.findings == ()


def test_a_thread_round_trips_and_its_brief_part_quotes_the_findings_first() -> None:
    thread = Thread("code-reviewer", "G3")
    assert brief_part(thread) == ""
    for kind, text in (
        ("asked", "# Review G3"),
        ("flagged", "```\nsql injection"),
        ("asked", "again"),
    ):
        thread = with_entry(thread, kind, text, when="2026-01-01T00:00:00Z")
    assert parse_thread(render_thread(thread)) == thread
    part = brief_part(thread)
    assert part.index("Flagged at step 2") < part.index("Step 3, asked")
    assert "sql injection" in part and thread.last_line() == "asked: again"
    status = Status("maker", "G3", ThreadState.RUNNING, "2026-01-01T00:00:00Z", pgid=42)
    assert parse_status("maker", "G3", render_status(status)) == status
    assert parse_status("maker", "G3", "half") is None
    idle = Status("maker", "G4", ThreadState.IDLE, "t")
    assert to_interrupt([status, idle], "maker", None) == [status]
    assert to_interrupt([status, idle], "maker", "G4") == []


def test_several_maker_nodes_read_well_round_trip_and_reach_the_run_panel() -> None:
    from relay.loop.roster import run_panel

    text = "## Roles\n\n- maker: node win-desktop, node mac-studio\n- verifier: agent codex\n"
    roster = parse_roster(text)
    maker = roster.get("maker")
    assert maker is not None and maker.nodes() == ("win-desktop", "mac-studio")
    assert render_section(roster) == text
    panel = run_panel(roster)
    assert panel.maker_nodes == ("win-desktop", "mac-studio")
    assert panel.maker_node == "win-desktop" and panel.maker is None
    for bad, problem in [
        ("node a, b", "node A, node B"),
        ("node a, node a", "each node once"),
        ("node a,", "node A, node B"),
    ]:
        with pytest.raises(SpineFileError, match=problem):
            parse_roster(f"## Roles\n\n- maker: {bad}\n")
    # a grading role on one of the maker's nodes would grade the maker's own work
    assert _problems("- maker: node a, node b\n- verifier: node b\n") == [
        "verifier: it is the maker (node b) and would grade its own work; give it another backend"
    ]


def test_goals_go_each_to_one_free_node_in_the_rosters_order() -> None:
    from relay.loop.parallel import assign_nodes, node_makers

    nodes = ("win-desktop", "mac-studio", "pi")
    assert assign_nodes(["G1", "G2"], nodes) == {"G1": "win-desktop", "G2": "mac-studio"}
    assert assign_nodes(["G3", "G4"], nodes, busy={"win-desktop"}) == {
        "G3": "mac-studio",
        "G4": "pi",
    }
    assert assign_nodes(["G5"], nodes, busy=set(nodes)) == {}  # it waits for a free node
    assert assign_nodes(["G1", "G2", "G3", "G4"], nodes[:2]) == {
        "G1": "win-desktop",
        "G2": "mac-studio",
    }
    assert node_makers(5, nodes[:2]) == 2  # a node works one goal at a time
    assert node_makers(1, nodes) == 1
    assert node_makers(3, ()) == 3


def test_the_roles_settings_are_what_the_roster_sets() -> None:
    from relay.loop.roster import RoleSettings, applies_text, duration_seconds, role_settings

    roster = parse_roster(ROSTER)
    got = role_settings(roster)
    assert got["maker"] == RoleSettings(
        model="claude-sonnet-4-5",
        instructions="docs/loop/roles/maker.md",
        timeout=1800.0,
        retries=3,
        copies=1,
    )
    assert "red-team" not in got and "coordinator" not in got  # nothing set for them
    assert applies_text(got["maker"]) == (
        "model claude-sonnet-4-5 (to its agent); docs/loop/roles/maker.md heads its brief;"
        " each run stopped after 1800s; 3 retries per goal; at most 1 at once"
    )
    assert applies_text(got["code-reviewer"]) == (
        "asked at most 20 times on a goal, then the goal is blocked"
    )
    assert duration_seconds("20m") == 1200.0 and duration_seconds("500ms") == 0.5
    with pytest.raises(ValueError):
        duration_seconds("soon")


# --- the roster's limits: turns and copies ---

from relay.loop.managed import State as ManagedState  # noqa: E402
from relay.loop.managed import Thread as ManagedThread  # noqa: E402
from relay.loop.managed import over_copies  # noqa: E402
from relay.loop.roster import makers_allowed, turns_spent  # noqa: E402


def test_check_refuses_limits_that_cannot_hold() -> None:
    assert _problems("- maker: command `m`\n  - Limits: turns 0\n") == [
        "maker: turns 0: it could never run; give it 1 or more"
    ]
    assert _problems("- code-reviewer: agent codex\n  - Limits: copies 2\n") == [
        "code-reviewer: copies 2: only the maker runs in copies (parallel makers)"
    ]
    assert _problems("- maker: node a, node b\n  - Limits: copies 3\n")[0].startswith(
        "maker: copies 3 on 2 node(s): a node makes one goal at a time"
    )
    assert _problems("- maker: node a, node b\n  - Limits: copies 2, turns 4\n") == []
    assert _problems("- maker: managed-agent\n  - Limits: copies 24\n") == []
    assert "at most 24 copies" in _problems("- maker: managed-agent\n  - Limits: copies 25\n")[0]
    # a coordinator's roster holds 20 agents: 19 managed roles and the maker's self is 20
    roles = "- maker: managed-agent\n" + "".join(f"- role-{n}: managed-agent\n" for n in range(18))
    assert _problems(roles) == []
    over = _problems(roles + "- role-18: managed-agent\n")
    assert over == [
        "coordinator: its Managed Agents roster would hold 21 agents (20 roles and the maker"
        " as self); a coordinator's roster holds at most 20: merge roles"
    ]


def test_copies_cap_the_makers_of_the_rosters_maker_only() -> None:
    roster = parse_roster("## Roles\n\n- maker: command `./m.sh`\n  - Limits: copies 2\n")
    assert makers_allowed(roster, 3, maker="./m.sh") == (
        2,
        "2 makers at once, not 3: the roster's maker runs at most 2 copies (Limits: copies 2)",
    )
    assert makers_allowed(roster, 2, maker="./m.sh") == (2, "")
    assert makers_allowed(roster, 4, maker="./other.sh") == (4, "")  # --maker: not the roster's
    nodes = parse_roster("## Roles\n\n- maker: node a, node b\n  - Limits: copies 1\n")
    assert makers_allowed(nodes, 2)[0] == 1
    assert makers_allowed(parse_roster("## Roles\n\n- maker: command `m`\n"), 5) == (5, "")


def test_a_role_out_of_turns_names_itself_the_goal_and_the_limit() -> None:
    roster = parse_roster(
        "## Roles\n\n- maker: command `m`\n  - Limits: turns 3\n"
        "- code-reviewer: agent codex\n  - Limits: turns 1\n"
    )
    running = ["maker", "code-reviewer"]
    assert turns_spent(roster, {"maker": 2}, goal="G1", running=running) is None
    assert turns_spent(roster, {"maker": 3}, goal="G1", running=running) == (
        "maker has used its 3 turns on G1 (3 asked; LOOP.md's roster: Limits: turns 3):"
        " raise the limit or split the goal"
    )
    said = turns_spent(roster, {"maker": 1, "code-reviewer": 1}, goal="G2", running=running)
    assert said is not None and said.startswith("code-reviewer has used its 1 turn on G2")
    # a role this run does not run (a --maker given on the command line) is not held to it
    assert turns_spent(roster, {"maker": 9}, goal="G1", running=["code-reviewer"]) is None


def test_making_threads_past_the_copies_are_the_newest_running_ones() -> None:
    state = ManagedState()
    for tid, role, status in (
        ("t1", "maker", "running"),
        ("t2", "code-reviewer", "running"),
        ("t3", "coordinator", "waiting"),  # a copy of the coordinator makes too
        ("t4", "maker", "idle"),
        ("t5", "maker", "running"),
        ("t6", "maker", "running"),
    ):
        state.threads[tid] = ManagedThread(tid, role, status)
    assert over_copies(state, 2) == ["t5", "t6"]
    assert over_copies(state, 4) == []
    assert over_copies(state, 0) == ["t3", "t5", "t6"]  # at least one always makes
