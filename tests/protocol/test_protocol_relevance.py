"""Which webhook deliveries call for a pass: the pure rule over the payload (relevance.py)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from protocol_world import ALICE, BOB, CONTROLLER, MALLORY, MASTER, WORKER

from relay.protocol import JobBody, render_body
from relay.protocol.relevance import Delivery, pass_for
from relay.protocol.wire import encode_block

BODY = render_body(JobBody(controller=CONTROLLER, worker=WORKER, objective="Find why."))
OTHERS = render_body(JobBody(controller=CONTROLLER, worker="spare", objective="Not yours."))


def comment(
    *, author: int = ALICE.id, body: str = "a note", labels: tuple[str, ...] = ()
) -> Delivery:
    return Delivery(
        event="issue_comment", action="created", issue=7, body=BODY, labels=labels,
        sender=author, comment_author=author, comment_body=body,
    )  # fmt: skip


def labeled(
    label: str, *, labels: tuple[str, ...] | None = None, sender: int = ALICE.id
) -> Delivery:
    return Delivery(
        event="issues", action="labeled", issue=7, body=BODY, sender=sender, label=label,
        labels=(label,) if labels is None else labels,
    )  # fmt: skip


def message_from(node: str) -> str:
    return "### CLAIM 1\n\n" + encode_block({"kind": "claim", "issue": 7, "task": 1, "node": node})


def decided(delivery: Delivery, node: str, known: tuple[int, ...] = ()) -> int | None:
    return pass_for(delivery, node=node, master=MASTER, known=known).issue


def test_a_job_of_other_nodes_costs_a_node_nothing_whatever_happens_on_it() -> None:
    for delivery in (
        replace(comment(), body=OTHERS),
        replace(labeled("awaiting:worker"), body=OTHERS),
        Delivery(event="issues", action="closed", issue=7, body=OTHERS, sender=MALLORY.id),
        Delivery(event="issue_comment", action="edited", issue=7, body=OTHERS),
        Delivery(event="issues", action="opened", issue=7, body="Not a job at all."),
    ):
        assert decided(delivery, WORKER) is None, delivery
        assert decided(delivery, "spare") == 7 or delivery.body != OTHERS


def test_a_job_the_node_bound_is_passed_whatever_its_body_now_says() -> None:
    """Someone rewrote the body so it names the node no more: that is for the pass to see."""
    rewritten = replace(labeled("awaiting:worker"), body="nothing here")
    assert decided(rewritten, CONTROLLER) is None
    assert decided(rewritten, CONTROLLER, known=(7,)) == 7


def test_a_strangers_comment_is_data_for_both_sides() -> None:
    for node in (CONTROLLER, WORKER):
        assert decided(comment(author=MALLORY.id, labels=("awaiting:worker",)), node) is None
    # the same comment by one of the job's accounts is a turn for the node it waits for
    assert decided(comment(author=BOB.id, labels=("awaiting:controller",)), CONTROLLER) == 7


def test_the_baton_says_whose_turn_a_change_is() -> None:
    assert decided(labeled("awaiting:worker"), WORKER) == 7
    assert decided(labeled("awaiting:worker"), CONTROLLER) is None
    assert decided(labeled("awaiting:controller"), CONTROLLER) == 7
    assert decided(labeled("awaiting:controller"), WORKER) is None
    # a claim: the worker is at it, and nothing in the event is for either side now
    assert decided(labeled("working"), WORKER) is None
    assert decided(labeled("working"), CONTROLLER) is None
    # the added label decides even while the payload still lists the old baton beside it
    both = labeled("awaiting:controller", labels=("working", "awaiting:controller"))
    assert decided(both, CONTROLLER) == 7
    # a comment with no single baton in sight is passed on
    assert decided(comment(labels=()), WORKER) == 7
    assert decided(comment(labels=("working", "awaiting:worker")), CONTROLLER) == 7


def test_a_nodes_own_message_does_not_wake_it() -> None:
    mine = comment(body=message_from(WORKER), labels=("awaiting:worker",))
    assert decided(mine, WORKER) is None
    assert decided(replace(mine, comment_body=message_from(CONTROLLER)), WORKER) == 7


def test_edits_deletions_flags_and_state_changes_are_passed_on() -> None:
    for action in ("edited", "deleted"):
        edit = replace(comment(author=MALLORY.id), action=action)
        assert decided(edit, WORKER) == 7 and decided(edit, CONTROLLER) == 7
    for action in ("closed", "reopened", "locked", "opened"):
        change = Delivery(event="issues", action=action, issue=7, body=BODY, sender=ALICE.id)
        assert decided(change, WORKER) == 7
    flag = replace(labeled("needs:human"), labels=("awaiting:worker", "needs:human"))
    assert decided(flag, CONTROLLER) == 7


def test_an_outsider_moving_the_baton_or_editing_the_body_wakes_both_sides() -> None:
    """Tampering is the pass's to notice: an account outside the job is never filtered."""
    moved = labeled("awaiting:worker", sender=MALLORY.id)
    body = Delivery(event="issues", action="edited", issue=7, body=BODY, sender=MALLORY.id)
    for node in (CONTROLLER, WORKER):
        assert decided(moved, node) == 7
        assert decided(body, node) == 7
    # the job's own account rewriting the body, or taking a baton off, moves no turn
    assert decided(replace(body, sender=ALICE.id), CONTROLLER) is None
    off = replace(labeled("awaiting:worker"), action="unlabeled", labels=("awaiting:controller",))
    assert decided(off, CONTROLLER) is None


def test_pull_requests_and_deliveries_naming_no_issue_are_ignored() -> None:
    assert decided(replace(labeled("awaiting:worker"), is_pull_request=True), WORKER) is None
    assert decided(replace(labeled("awaiting:worker"), issue=None), WORKER) is None


@given(
    event=st.sampled_from(["issues", "issue_comment"]),
    action=st.sampled_from(["created", "edited", "deleted", "labeled", "unlabeled", "closed"]),
    labels=st.lists(
        st.sampled_from(
            ["awaiting:worker", "working", "awaiting:controller", "needs:human", "resolved", "bug"]
        ),
        max_size=3,
    ),
    label=st.none() | st.sampled_from(["awaiting:worker", "working", "needs:human"]),
    comment_body=st.none() | st.sampled_from([message_from(WORKER), "text", "<!-- relay:v1 {"]),
    node=st.sampled_from([CONTROLLER, WORKER, "spare"]),
)
def test_an_outsider_is_never_filtered_and_the_issue_is_the_deliverys(
    event: str,
    action: str,
    labels: list[str],
    label: str | None,
    comment_body: str | None,
    node: str,
) -> None:
    """Whatever the payload holds, the answer is the delivery's own issue or none, and a
    change made by an account outside the job reaches every node the job names (except a
    new comment, which such an account can only add as data)."""
    delivery = Delivery(
        event=event, action=action, issue=7, body=BODY, labels=tuple(labels), sender=MALLORY.id,
        label=label, comment_author=MALLORY.id, comment_body=comment_body,
    )  # fmt: skip
    found = decided(delivery, node)
    assert found in (None, 7)
    if node != "spare" and (event, action) != ("issue_comment", "created"):
        assert found == 7
    if node == "spare":
        assert found is None
