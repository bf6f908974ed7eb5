"""The relay protocol: pure rules, no I/O.

Ground rules: nothing in this package touches the network, the disk, a subprocess or the
clock; time is passed in. Drivers build a :class:`Snapshot` from what they observed,
call :func:`decide`, and apply the returned actions in order. The verbs that change a job
call the planners, which return a :class:`Plan` or raise a LocalUsageError subclass.

Theory of operation: a job is one issue; its labels are the baton (:mod:`.baton`), its
body the summary (:mod:`.body`), its comments the messages (:mod:`.messages`), each
ending in one hidden versioned block (:mod:`.wire`). :mod:`.thread` decides which
comments count; :mod:`.decide` decides what to do about them.
"""

from relay.protocol.actions import (
    Action,
    CloseJob,
    DeclineTask,
    ExecuteTask,
    Ignore,
    KeepWatcher,
    MoveBaton,
    NotifyResult,
    PostNotice,
    ReclaimTask,
    ReopenJob,
    ReportHalfDone,
    SendResult,
    TearDown,
    Wait,
)
from relay.protocol.baton import Event, IllegalTransition, Role, State, transition
from relay.protocol.body import JobBody, Outcome, parse_body, render_body
from relay.protocol.decide import (
    NotInNodeTable,
    approval_jobs,
    approvals_wanted,
    baton_events_wanted,
    claim_edits_wanted,
    claim_refs_wanted,
    decide,
    scope_refusal,
    wants_ended_check,
)
from relay.protocol.labels import LABEL_SPECS, Label, with_baton
from relay.protocol.master import Account, DestructiveRule, Master, Node, Scope
from relay.protocol.master_text import add_node, has_section, parse_master, set_scheduler
from relay.protocol.messages import (
    Artifact,
    ClaimMsg,
    ClosureMsg,
    EscalationMsg,
    HalfDoneMsg,
    ResultMsg,
    Status,
    TaskMsg,
    parse_message,
    render_message,
)
from relay.protocol.planners import (
    NotController,
    Plan,
    TaskOutstanding,
    UntrustedAccount,
    handover_entry,
    plan_hypothesis,
    plan_open_job,
    plan_resolve,
    plan_strike,
    plan_task,
)
from relay.protocol.snapshot import Comment, Issue, LocalRecords, Snapshot, User, WatcherFacts
from relay.protocol.wire import MessageRejected, neutralise
from relay.protocol.work import LEASE, RunLimits, claim_ref, lease_until, log_path, result_status

__all__ = [
    "LABEL_SPECS",
    "LEASE",
    "Account",
    "Action",
    "Artifact",
    "ClaimMsg",
    "CloseJob",
    "ClosureMsg",
    "Comment",
    "DeclineTask",
    "DestructiveRule",
    "EscalationMsg",
    "Event",
    "ExecuteTask",
    "HalfDoneMsg",
    "Ignore",
    "IllegalTransition",
    "Issue",
    "JobBody",
    "KeepWatcher",
    "Label",
    "LocalRecords",
    "Master",
    "MessageRejected",
    "MoveBaton",
    "Node",
    "NotController",
    "NotInNodeTable",
    "NotifyResult",
    "Outcome",
    "Plan",
    "PostNotice",
    "ReclaimTask",
    "ReopenJob",
    "ReportHalfDone",
    "ResultMsg",
    "Role",
    "RunLimits",
    "Scope",
    "SendResult",
    "Snapshot",
    "State",
    "Status",
    "TaskMsg",
    "TaskOutstanding",
    "TearDown",
    "UntrustedAccount",
    "User",
    "Wait",
    "WatcherFacts",
    "add_node",
    "approval_jobs",
    "approvals_wanted",
    "baton_events_wanted",
    "claim_edits_wanted",
    "claim_ref",
    "claim_refs_wanted",
    "decide",
    "handover_entry",
    "has_section",
    "lease_until",
    "log_path",
    "neutralise",
    "parse_body",
    "parse_master",
    "parse_message",
    "plan_hypothesis",
    "plan_open_job",
    "plan_resolve",
    "plan_strike",
    "plan_task",
    "render_body",
    "render_message",
    "result_status",
    "scope_refusal",
    "set_scheduler",
    "transition",
    "wants_ended_check",
    "with_baton",
]
