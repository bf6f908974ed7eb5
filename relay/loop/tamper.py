"""Whether a gate's pytest run can be trusted: the verdicts relay's pytest plugin wrote
(``relay/ratchet/pytest_guard.py``), read against the gate's exit.

Ground rules: code under test can switch pytest off from inside (replace how a test runs
or is reported, register a plugin that rewrites reports, end the process at import with a
clean exit). A pytest gate whose run relay's plugin did not sign off as untouched does not
pass, whatever its exit code says: one line says what was seen, for a person to act on.

The key and the canary's token reach the plugin in a one-shot file it removes before any
of the project's code runs (never in an environment, whose start-up copy
``/proc/<pid>/environ`` keeps). What it cannot do: the plugin and its key live in the
process it judges, so code under test can find them in its memory and sign a clean
verdict, or simply behave differently under test; code that runs before pytest (a
``sitecustomize``, a coverage plugin, an earlier command of the same gate) can read the
file before the plugin does. That is read from the change's text instead (``reach.py``:
such a change is held for a person); this check stays as defence in depth against what
that reading misses.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

TAMPERED = "the test run was tampered with"
CANARY_OK = "failed as it must"
NO_RUN = "not needed (no test runs)"
# what relay's plugin says (its import fails) when a second pytest of a gate finds its
# one-shot settings already taken
SETTINGS_TAKEN = "relay's pytest guard settings were already taken"
_SHELL = frozenset(("&&", "||", ";", "|", "&"))
_PYTEST_WORD = re.compile(r"(?:^|[\s/;&|(])(?:py\.test|pytest)(?:\s|$)")


@dataclass(frozen=True)
class GuardKeys:
    """What relay handed one run of a gate's plugin: the key that signs its verdicts and
    the token its canary test must fail with."""

    key: str
    token: str


def names_pytest(command: str) -> bool:
    """Whether a gate's command runs pytest itself (``pytest``, ``py.test``, ``python -m
    pytest``, ``coverage run -m pytest``, a path to one): its run must be signed off."""
    try:
        words = shlex.split(command)
    except ValueError:
        return bool(_PYTEST_WORD.search(command))
    return any(w.rsplit("/", 1)[-1] in ("pytest", "py.test") for w in words)


def simple(command: str) -> bool:
    """Whether ``command`` is one program run, with no shell list or pipe: its exit is
    pytest's own."""
    try:
        return not any(w in _SHELL for w in shlex.split(command))
    except ValueError:
        return False


def signed(text: str, key: str) -> dict[str, object] | None:
    """One verdict file's record when its signature is relay's key's, else None."""
    body, _, rest = text.partition("\n")
    mac = rest.strip()
    want = hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
    if not mac or not hmac.compare_digest(mac, want):
        return None
    try:
        record = json.loads(body)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def tampered(
    files: Sequence[str],
    keys: GuardKeys,
    *,
    command: str,
    exit_code: int | None,
    timed_out: bool,
    wrote_junit: bool,
    output: str = "",
    module: str = "",
    junit: str | None = None,
) -> str:
    """The one line that says why a gate's pytest run cannot be trusted ("" when it can,
    or when the gate ran no pytest): ``files`` are the verdict files relay's plugin (the
    module ``module``) wrote, one per pytest process, xdist's workers included. A run
    that named pytest or wrote a JUnit report must have signed verdicts, each finished,
    untouched, with its canary failing with the token, and one from each xdist worker
    the main process handed the settings to."""
    if module and SETTINGS_TAKEN in output:
        return (
            "relay's pytest plugin stopped a second pytest run: the gate's command runs"
            " pytest more than once, and relay signs off one run a gate; give each pytest"
            " run a gate of its own"
        )
    if module and not files and f'Error importing plugin "{module}"' in output:
        return (
            "relay's pytest plugin could not be imported: the gate's command replaces"
            " PYTHONPATH; add to it instead (PYTHONPATH=src:$PYTHONPATH), or use pytest's"
            " pythonpath setting"
        )
    if timed_out:
        return ""  # it did not run to the end: a gate that did not run, said as such
    if not files:
        why = _unsigned(expected=names_pytest(command) or wrote_junit, wrote_junit=wrote_junit)
    else:
        records = [signed(text, keys.key) for text in files]
        if any(r is None or r.get("token") != keys.token for r in records):
            why = "a verdict file of relay's guard plugin was forged or altered"
        else:
            kept = [r for r in records if r is not None]
            why = _seen(kept, exit_code, simple(command)) or _junit_passes(kept, junit)
    return tamper_line(why) if why else ""


def _unsigned(*, expected: bool, wrote_junit: bool) -> str:
    """What a run that left no verdict at all was ("" when no pytest was expected)."""
    if not expected:
        return ""
    if wrote_junit:
        return "a JUnit report was written, but relay's plugin signed off no pytest run"
    return "pytest ran without relay's guard plugin (no verdict was written)"


def _seen(records: Sequence[dict[str, object]], exit_code: int | None, single: bool) -> str:
    """What the signed verdicts say was done to the run ("" when nothing was): ``single``
    when the gate's command is one program, whose exit is pytest's own."""
    for record in records:
        if record.get("state") != "finished":
            return (
                f"pytest (process {record.get('pid')}) ended before its session finished"
                " (the process was ended at import or crashed)"
            )
    workers = {r.get("worker") for r in records}
    for record in records:
        handed = record.get("handed")
        for worker in handed if isinstance(handed, list) else ():
            if worker not in workers:
                return f"xdist's worker {worker} ran without relay's guard plugin (no verdict)"
    for record in records:
        problems = record.get("problems")
        if isinstance(problems, list) and problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return f"{problems[0]}{more}"
    for record in records:
        canary = record.get("canary")
        if canary not in (CANARY_OK, NO_RUN):
            said = "pytest's verdicts were switched off"
            return f"relay's canary test (which must fail) {canary}: {said}"
    for record in records:  # a report changed between pytest's making it and its readers
        rewritten = record.get("rewritten")
        if isinstance(rewritten, list) and rewritten:
            more = f" (and {len(rewritten) - 1} more)" if len(rewritten) > 1 else ""
            return f"{rewritten[0]}{more}"
    top = [r for r in records if not r.get("worker")]
    if exit_code == 0 and len(top) == 1 and single:
        status = top[0].get("exitstatus")
        if isinstance(status, int) and status != 0:
            return f"pytest's session ended with exit status {status} but the process exited 0"
    return ""


def _junit_passes(records: Sequence[dict[str, object]], junit: str | None) -> str:
    """A test the signed verdicts name as failed that the JUnit report (``junit``) names
    as passed or skipped: the report was rewritten after pytest wrote it ("" when none;
    a test the report does not name is left to its reader)."""
    from relay.loop.checks import junit_tests

    tests = dict(junit_tests(junit) or ()) if junit is not None else {}
    for record in records:
        failed = record.get("failed")
        for node in failed if isinstance(failed, list) else ():
            if tests.get(str(node)) in ("passed", "skipped"):
                return (
                    f"the JUnit report says {node} {tests[str(node)]}, but relay's plugin saw"
                    " it fail (the report was rewritten)"
                )
    return ""


def tamper_line(reason: str) -> str:
    """The one line a person reads: what relay saw, and what it means."""
    return f"{TAMPERED}: {reason}"
