"""decide() against a collaborator who is no node (mallory) where a claim's life is judged
by its comment's edit history (GraphQL's ``userContentEdits``): what she can make of a
history read in part, of a claim's own growing window, and of a comment a job's account
posted after the worker died. Each test asserts what relay promises (a dead worker's
claim is taken back about when its text says it lapsed, plus the grace); those that do
not hold are strict xfails."""

from __future__ import annotations

from datetime import datetime, timedelta

from protocol_world import ALICE, CONTROLLER, MALLORY, WORKER, World
from test_protocol_claim_attacks import claim_of, dead_claim
from test_protocol_claim_events import job, task

from relay.protocol import (
    ReclaimTask,
    Snapshot,
    User,
    claim_edits_wanted,
    decide,
    render_message,
)

PAGE = 100  # the versions GitHub lists of one comment's history (userContentEdits(first:100))
PAGES = 10  # how far back the reader goes for a version of the worker's


def as_github_reads(world: World, node: str) -> Snapshot:
    """The snapshot a pass builds against GitHub, as the client reads: each comment's
    versions a hundred a page, newest first, page after page while none of the worker's
    accounts wrote one (ten at most); a comment whose history goes on past what was read
    is marked as read in part."""
    snapshot = world.snapshot(node)
    wanted = claim_edits_wanted(snapshot, node, world.now)
    edits: list[object] = []
    whole: set[int] = set()
    for asked in wanted.values():
        accounts = asked.accounts
        for comment_id in asked.comments:
            history = world.histories.get(comment_id, [])
            for page in range(PAGES):
                part = history[page * PAGE : (page + 1) * PAGE]
                edits += part
                if len(history) <= (page + 1) * PAGE:
                    whole.add(comment_id)
                    break
                if any(e.editor is not None and e.editor.id in accounts for e in part):
                    break
    return snapshot.model_copy(update={"comment_edits": tuple(edits), "edits_read": whole})


def reclaimed(actions: list[object]) -> bool:
    return any(isinstance(a, ReclaimTask) for a in actions)


def test_a_hundred_edits_in_a_row_never_make_her_later_edits_beats_again() -> None:
    """The worker claims a TASK of thirty steps (a lease over five hours) and dies. Before
    its claim's text lapses she edits the claim comment a hundred times in a row (a
    script: a hundred requests, once), putting the same signed text back each time.
    GitHub lists a comment's newest hundred versions: all hers, so the history is read in
    part and holds none of the worker's. Every edit then counts as a beat again, and her
    one edit every four minutes from then on holds the claim one window each, until the
    lease. The baton should be back a few minutes after the claim's text lapsed."""
    world = World()
    number, entry = dead_claim(world, steps=30)
    dead = entry.message.alive_until
    assert entry.message.lease_until - dead > timedelta(hours=4)
    world.now = dead - timedelta(minutes=10)
    for _ in range(PAGE):
        world.edit(number, entry.comment.id, entry.comment.body, by=MALLORY)
    at: datetime | None = None
    while world.now < dead + timedelta(hours=2):
        world.now += timedelta(minutes=4)
        world.edit(number, entry.comment.id, entry.comment.body, by=MALLORY)
        if reclaimed(decide(as_github_reads(world, CONTROLLER), CONTROLLER, world.now)):
            at = world.now
            break
    assert at is not None and at <= dead + timedelta(minutes=5), at


def dead_after_two_hours(world: World) -> tuple[int, int, datetime]:
    """A TASK of thirty steps (a lease over five hours) whose worker beat every five
    minutes for two hours (each beat: alive twenty minutes more), then went off: the issue,
    the claim comment's id, and when its last text says it lapses."""
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    beat = first
    for _ in range(24):  # two hours of beats
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    dead = beat.alive_until
    assert dead is not None and beat.lease_until - dead > timedelta(hours=2)
    return number, comment_id, dead


def test_a_dead_worker_that_ran_for_hours_is_taken_back_when_its_text_lapsed() -> None:
    """The worker claims a TASK of thirty steps (a lease over five hours), beats every five
    minutes for two hours (each beat: alive for twenty minutes more; its `claimed_at`
    stays), then its machine goes off. Nobody edits anything. Its last text says it is
    alive until twenty minutes after the last beat, and the baton is back then (plus the
    grace): not a window of that text's `alive_until - claimed_at` (two hours twenty)
    from the last beat, two hours late."""
    world = World()
    _, _, dead = dead_after_two_hours(world)
    at: datetime | None = None
    while world.now < dead + timedelta(hours=3):
        world.now += timedelta(minutes=1)
        if reclaimed(decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)):
            at = world.now
            break
    assert at is not None and at <= dead + timedelta(minutes=3), at - dead if at else None


def test_a_claim_copied_into_a_notice_of_the_controllers_is_no_beat() -> None:
    """The worker claims a TASK of thirty steps and dies. Every ten minutes a new account
    (anyone can comment) posts a claim-shaped comment; the controller says once per
    author that it does not act on it: a fresh comment of the controller's account. She
    edits that notice into the worker's signed claim (a claim is the one message read
    after an edit, and the controller's account is one of the job's). The notice's
    history holds one version of a job's account, its posting, minutes old: it counts as
    the worker's beat, and the claim lives a window from it, again and again, until the
    lease. The baton should be back a few minutes after the claim's text lapsed."""
    world = World()
    number, entry = dead_claim(world, steps=30)
    dead = entry.message.alive_until
    at: datetime | None = None
    n = 0
    while world.now < dead + timedelta(hours=2):
        world.now += timedelta(minutes=10)
        n += 1
        passer_by = User(id=7000 + n, login=f"passer-by-{n}")
        world.post(number, passer_by, entry.comment.body)  # refused, and said once
        if reclaimed(world.pass_of(CONTROLLER)):
            at = world.now
            break
        said = [c for c in world.issues[number].comments if c.author == ALICE]
        assert passer_by.login in said[-1].body, said[-1].body
        world.edit(number, said[-1].id, entry.comment.body, by=MALLORY)  # the claim, signed
    assert at is not None and at <= dead + timedelta(minutes=12), at - dead if at else None
