"""Judging one attempt: run the maker on its brief, then the protected paths, the
acceptance command and the gates (run once, in a sandboxed clone of the candidate commit:
the candidate's code never runs in the person's clone), the coverage comparison, the
checker panel, the tests' honesty, with the optional verifier (every role grading in a
sandboxed clone of its own).

Ground rules: the first thing that fails is the attempt's outcome, with its category and
diagnosis; a transient failure of the maker is told apart so that it costs nothing; only
the maker edits the tree (a tree that changed while it was judged fails).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pkgutil
import posixpath
import shutil
import site
import sysconfig
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from relay.edges.worktree import WorkTree
from relay.loop.agents import Signal, maker_failed, parse_role
from relay.loop.briefs import BriefFacts, render_brief, render_evidence, render_review
from relay.loop.checks import (
    SuiteChange,
    baseline_failing,
    rewritten,
    suite_change,
    weakened,
)
from relay.loop.classify import Category, Review, Verdict, diagnosis
from relay.loop.contract import Contract, Gate, split_protected, touched
from relay.loop.goals import Goal
from relay.loop.guard import (
    NEW_TOP_MODULE,
    PYTEST_CONFIGS,
    SOURCE_SUFFIXES,
    baseline_suite,
    branch_moved,
    config_pythonpath,
    gate_definition_touched,
    gate_scripts,
    git_meta_changed,
    importable_dirs,
    is_test_file,
    new_top_modules,
    project_hooks_touched,
    refs_changed,
    runs_the_tree,
    shadow_names,
    spine_touched,
    unreviewed_test_edits,
)
from relay.loop.parallel import reduce_reviews
from relay.loop.ratchet import (
    Declined,
    Failed,
    Outcome,
    Passed,
    Stopped,
    Transient,
    Wall,
    coverage_delta,
)
from relay.loop.reach import (
    COMPILED_SUFFIXES,
    Plain,
    Reach,
    held_reason,
    imported_modules,
    imported_names,
    imported_stdlib,
    is_test_code,
    project_modules,
    reaches_in,
    stubs_beside,
)
from relay.loop.records import Baseline, Failure, handover_entries
from relay.loop.revise import (
    LOOP_FILE,
    Ballot,
    is_security_critical,
    loop_md_touched,
    security_verdict,
)
from relay.loop.risks import area_paths
from relay.loop.threads import ThreadState
from relay.ratchet.files import Spine
from relay.ratchet.measure import (
    BRIEF_ENV,
    MAKER_PID,
    REVIEW_ENV,
    Measure,
    coverage_failure,
    maker_record,
    measure,
    unmeasured_failure,
)
from relay.ratchet.roles import review, run_role
from relay.ratchet.sandbox import (
    ATTEMPT_RECORD,
    EXPLAIN_FILE,
    BoxAhead,
    Sandbox,
    ahead_allowed,
    clone_secrets,
    hidden_for,
    judged,
    judged_ahead,
    maker_branch,
    read_private,
    redact_secrets,
    standalone,
    taken_or_made,
    warm_redaction,
)
from relay.ratchet.threads import ThreadStore

EXPLAIN_NAME = "what-changed.md"
EXPLAIN_CHARS = 4000
MEASURED_FILE = "measured.json"  # green baselines' gate results, by tree and gates
LOOSE_FILE = "loose.count"  # the loose objects the last packing left (unreachable ones)
LOOSE_CAP = 128  # loose objects past those before the clone's are packed
KEPT_ON_DISK = 8
# the files a tree holds from which its boxes are made ahead: a smaller one's checkout
# costs about what moving a box made ahead costs (some ten git processes)
AHEAD_FILES = 100


def maker_branch_of(goal: Goal) -> str:
    """The branch a goal's maker works on in its box."""
    return f"relay-loop/{goal.id}"


def _disk_entries(path: Path) -> list[dict[str, object]]:
    """The green measures kept in ``path`` (none when it is missing or unreadable)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    got = doc.get("measured") if isinstance(doc, dict) else None
    return [e for e in got if isinstance(e, dict)] if isinstance(got, list) else []


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


LINKED_MODULE = (
    "a Python module that is a link: Python runs the file it leads to, which is not read as"
    " this module's code"
)


def reaching(
    tree: WorkTree, changes: Sequence[str], candidate: str, *, coverage: bool = False
) -> list[Reach]:
    """What the lines ``candidate`` added to its Python files (and any compiled module
    it holds) reach into: the test runner, relay's guard, the process
    (``relay/loop/reach.py``); and a stub it puts beside a module, read in its place.
    With ``coverage`` (the contract reads a coverage report): code it added that coverage
    leaves out of its figures though it runs (``relay/loop/excluded.py``)."""
    present = set(tree.files_at(candidate))
    texts: dict[str, tuple[str | None, str | None]] = {}
    for path in changes:
        if path.endswith(COMPILED_SUFFIXES):
            texts[path] = (None, "" if path in present else None)
        elif path.endswith(".py"):
            after = tree.show(candidate, path) if path in present else None
            texts[path] = (tree.show("HEAD", path), after)
    found = reaches_in(changes, texts, plain_of(tree, candidate) if texts else Plain())
    found += _linked_modules(tree, changes, candidate)
    found += stubs_beside(changes, present)
    at_head = tree.files_at("HEAD")
    pythonpath = config_pythonpath(
        {n: tree.show("HEAD", n) for n, _ in PYTEST_CONFIGS if n in at_head}
    )
    imported = imported_names(after for _, after in texts.values() if after)
    tops = new_top_modules(
        changes,
        at_baseline=at_head,
        present=sorted(present),
        pythonpath=pythonpath,
        imported=imported,
    )
    found += [Reach(p, 0, NEW_TOP_MODULE.format(name=n)) for p, n in tops]
    if coverage:
        found += _hidden(tree, texts, candidate, at_head, present)
    return found


def _linked_modules(tree: WorkTree, changes: Sequence[str], candidate: str) -> list[Reach]:
    """The candidate's Python modules that are links, where the link or the file it leads
    to changed: Python runs the file it leads to (``helper.py -> impl.js``), which the
    rule above never reads as Python (one ``ls-tree``; a link's text only for these)."""
    changed = set(changes)
    found = []
    for path, mode in tree.listing(candidate):
        if mode != "120000" or not path.endswith((".py", ".pyw", *COMPILED_SUFFIXES)):
            continue
        target = posixpath.normpath(
            posixpath.join(posixpath.dirname(path), tree.show(candidate, path) or "")
        )
        if path in changed or target in changed:
            found.append(Reach(path, 0, LINKED_MODULE))
    return found


def _hidden(
    tree: WorkTree,
    texts: Mapping[str, tuple[str | None, str | None]],
    candidate: str,
    at_head: Sequence[str],
    present: set[str],
) -> list[Reach]:
    """What the candidate's Python files (not its tests, whose own figures prove nothing
    of the code's) hide from coverage that HEAD's did not, by the exclusion patterns HEAD's
    and the candidate's settings name (read only where the contract reads a coverage
    report: their module is not loaded otherwise)."""
    from relay.loop.excluded import CONFIGS as EXCLUDE_CONFIGS
    from relay.loop.excluded import exclusion_patterns, hidden_added

    patterns: tuple[str, ...] = ()
    for commit, files in (("HEAD", set(at_head)), (candidate, present)):
        names = ("pyproject.toml", *(n for n, _ in EXCLUDE_CONFIGS))
        configs = {n: tree.show(commit, n) or "" for n in names if n in files}
        patterns = (*patterns, *exclusion_patterns(configs))
    patterns = tuple(dict.fromkeys(patterns))
    return [
        Reach(path, h.line, h.what)
        for path, (before, after) in texts.items()
        if after is not None and path.endswith(".py") and not is_test_code(path)
        for h in hidden_added(before, after, patterns)
    ]


def installed_names(root: Path | None = None) -> frozenset[str]:
    """The names a new module of the clone may not take (``guard.shadow_names``), with
    what the site-packages of the interpreter relay runs under hold and, for a clone at
    ``root``, those of the project's own virtualenvs (its top folders with a pyvenv.cfg,
    and the one ``VIRTUAL_ENV`` names): the gates run on the project's interpreter, whose
    packages relay's own may lack (relay installed apart, the project in its .venv)."""
    venvs = [str(p) for p in project_venvs(root)] if root is not None else []
    return _installed(tuple(sorted(venvs)))


def project_venvs(root: Path) -> list[Path]:
    """The virtualenvs the project's gates may run on: the top folders of ``root`` with
    a pyvenv.cfg, and the one ``VIRTUAL_ENV`` names."""
    found: list[Path] = []
    with contextlib.suppress(OSError):
        found = [e for e in sorted(root.iterdir()) if (e / "pyvenv.cfg").is_file()]
    named = os.environ.get("VIRTUAL_ENV", "")
    if named and Path(named, "pyvenv.cfg").is_file() and Path(named) not in found:
        found.append(Path(named))
    return found


@functools.cache
def _installed(venvs: tuple[str, ...]) -> frozenset[str]:
    """``installed_names`` for the virtualenvs given: asked once for each set."""
    places = {sysconfig.get_path(k) for k in ("purelib", "platlib")}
    places |= set(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        places.add(site.getusersitepackages())
    for venv in venvs:
        places |= {str(p) for p in Path(venv).glob("lib*/python*/site-packages")}
        places |= {str(p) for p in Path(venv).glob("Lib/site-packages")}
    folders = site_folders(sorted(p for p in places if p))
    return shadow_names(m.name for m in pkgutil.iter_modules(folders))


def site_folders(places: Sequence[str]) -> list[str]:
    """``places`` and the folders their ``.pth`` files add, as ``site.addsitedir`` reads
    them (a line that names a folder that exists, relative to its place; ``import`` lines
    and comments are not folders): a venv whose .pth points at another environment
    imports that environment's modules too."""
    found: list[str] = []
    for place in places:
        if place in found:
            continue
        found.append(place)
        try:
            names = sorted(n for n in os.listdir(place) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                text = Path(place, name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                line = line.rstrip()
                if not line or line.startswith("#") or line.startswith(("import ", "import\t")):
                    continue
                folder = os.path.normpath(os.path.join(place, line))
                if os.path.isdir(folder) and folder not in found:
                    found.append(folder)
    return found


def plain_of(tree: WorkTree, candidate: str) -> Plain:
    """What added code may import beside the plain modules (``relay/loop/reach.py``):
    the project's own modules, in the baseline or the candidate, where the gates import
    from, and the third-party modules the baseline's non-test code already imports."""
    at_head = set(tree.files_at("HEAD"))
    files = sorted({*at_head, *tree.files_at(candidate)})
    pythonpath = config_pythonpath(
        {n: tree.show("HEAD", n) for n, _ in PYTEST_CONFIGS if n in at_head}
    )  # a configuration HEAD does not hold is not asked of git
    own = project_modules(files, importable_dirs(files, pythonpath))
    lines = tree.import_lines("HEAD")
    return Plain(own, imported_modules(lines, own), imported_stdlib(lines))


def changed(state: str) -> bool:
    """Whether a work tree's state (:meth:`WorkTree.state`) holds any change of its own."""
    return any(line and not line.startswith("#") for line in state.split("\0"))


RED_TEAM_NOTE = (
    "You are the red team for a security-critical change. Try to breach the invariant the\n"
    "goal protects with this change applied. Answer block, with the breach as a finding,\n"
    "when you find one; approve when you find none.\n\n"
)


def swap_failure(
    failed: Failed, edits: list[SuiteChange], swapped: list[str], left_out: Sequence[str] = ()
) -> Failed:
    """A failure of the re-run that judges the candidate's code against the baseline's
    tests and gate configuration: the baseline's copy of ``swapped`` put in, the
    candidate's new ``left_out`` files (its own tests, new gate configuration) taken out,
    saying which and why."""
    files = ", ".join(f"`{p}`" for p in swapped)
    gone = ", ".join(f"`{p}`" for p in left_out[:8]) + (" and more" if len(left_out) > 8 else "")
    edited = [n for e in edits if e.path in swapped for n in e.edited]
    helpers = [f"`{e.path}`" for e in edits if e.path in swapped and e.helper]
    because = (
        f"the goal edited {', '.join(edited[:5])}, which the baseline had"
        if edited
        else f"the goal changed {', '.join(helpers)}, which the baseline's tests use"
        if helpers
        else "the baseline's tests and gate configuration judge the candidate's code"
    )
    how = f"the baseline's copy of {files} swapped in" if swapped else "the baseline's tests"
    if left_out:
        how += f" and the goal's new {gone} left out"
    what = f"in a fresh clone of the candidate, with {how}: {failed.what}"
    note = (
        f"Relay re-ran the gates with {how} ({because}): the baseline's tests must still"
        " run and pass as the baseline wrote them, under the baseline's gate configuration,"
        " whatever the goal's own new tests and files do. Fix the code, not the tests or"
        " their configuration, or declare the goal --may-edit-tests if a test itself is"
        " wrong.\n\n"
    )
    return replace(failed, what=what, diagnosis=note + failed.diagnosis)


@dataclass(frozen=True)
class GitState:
    """The clone's own machinery before a maker ran: hooks, info files, config and refs,
    which a maker could change to act through git after its attempt is gone."""

    meta: dict[str, bytes]
    refs: dict[str, str] | None  # None: not read (nothing puts them back)

    @classmethod
    def of(cls, tree: WorkTree, *, refs: bool = True) -> GitState:
        """The machinery as it is now; its refs only with ``refs`` (one ``git for-each-ref``,
        for a snapshot whose refs are put back)."""
        return cls(tree.git_meta(), tree.refs() if refs else None)

    def put_back(self, tree: WorkTree, *, own: str | None = None, refs: bool = True) -> list[str]:
        """Put back what the maker changed (with ``refs``, its refs too, but ``own``, the
        branch relay resets itself); one line each for what it was. Used by every kind of
        attempt."""
        if refs and self.refs is None:
            raise ValueError("this snapshot of the clone's machinery did not read its refs")
        meta = git_meta_changed(self.meta, tree.git_meta())
        if meta:
            tree.put_git_meta(self.meta)
        moved = (
            refs_changed(self.refs, tree.refs(), own=own) if self.refs is not None and refs else []
        )
        if self.refs is not None:
            tree.put_refs(self.refs, moved)
        return [
            *(f"`.git/{p}` is the clone's own machinery" for p in meta),
            *(f"the ref `{r}` is the clone's own" for r in moved),
        ]


@dataclass
class Held:
    """The goal's work so far: relay's commit of the last attempt the ratchet did not
    rewind (the next attempt starts from it), None when the goal starts from its baseline.
    The person's clone never holds it; a kept one is brought there."""

    commit: str | None = None


@dataclass
class Ahead:
    """The boxes made ahead for the goal's next attempt (:class:`BoxAhead`): the maker's,
    made while the baseline is measured, and the judged one, made while the maker works;
    each taken once, at the commit it is then wanted at."""

    maker: BoxAhead | None = None
    judged: BoxAhead | None = None

    def take_maker(self) -> BoxAhead | None:
        got, self.maker = self.maker, None
        return got

    def take_judged(self) -> BoxAhead | None:
        got, self.judged = self.judged, None
        return got

    def drop(self) -> None:
        """The boxes not taken, removed (the goal's pass is over)."""
        for got in (self.take_maker(), self.take_judged()):
            if got is not None:
                got.close()


@dataclass(frozen=True)
class Options:
    """What `relay loop run` was asked to do."""

    maker: str
    checkers: tuple[str, ...] = ()
    verifier: str | None = None
    goal: str | None = None
    max_iterations: int | None = None
    wall_clock: float | None = None
    red_team: tuple[str, ...] = ()
    resume: bool = False
    checker_names: tuple[str, ...] = ()  # the roster's names of the checkers, in order

    def checker_name(self, number: int) -> str:
        """The ``number``-th checker's role name (its roster name, else checker-N)."""
        names = self.checker_names
        return names[number - 1] if number <= len(names) else f"checker-{number}"


@dataclass(frozen=True)
class Judge:
    """What an attempt is judged with."""

    tree: WorkTree
    spine: Spine
    contract: Contract
    options: Options
    work: Path  # where briefs and review files go (inside .git, outside the work tree)
    maker_timeout: float
    gate_timeout: float
    checker_timeout: float = 600.0
    ballots: list[Ballot] = field(default_factory=list)  # the last security panel's
    edited_tests: list[str] = field(default_factory=list)  # the last verified candidate's
    measured: dict[tuple[str, ...], Measure] = field(default_factory=dict)  # baselines, by tree
    held: Held = field(default_factory=Held)  # the goal's work so far
    shielded: list[tuple[Path, ...]] = field(default_factory=list)  # hidden(), once a run
    ahead: Ahead = field(default_factory=Ahead)  # boxes made ahead for the next attempt

    @property
    def root(self) -> Path:
        return self.tree.root

    def credentialed(self, role: str) -> bool:
        """Whether the contract lets ``role`` keep the credentials roles run without."""
        return f"{role} credentials" in self.contract.authorised

    @property
    def cannot(self) -> Path:
        """Where the maker writes why it cannot do a goal (named in its brief)."""
        return self.work / "cannot.md"

    def gates(self, goal: Goal) -> list[Gate]:
        """The acceptance command, then every contract gate."""
        return [Gate("accept", goal.accept), *self.contract.gates]

    def attempt(
        self,
        goal: Goal,
        attempt: int,
        baseline: Baseline,
        base: Measure,
        last: Failure | None,
        rewind: bool,
        limit: float = float("inf"),
    ) -> tuple[Outcome, Measure | None]:
        """Run the maker once (for at most ``limit`` seconds, what is left of the wall
        clock) and judge what it left."""
        timeout = max(1.0, min(self.maker_timeout, limit))
        explain = self.explain_path(goal, attempt)
        if explain.parent.exists():  # a stopped run's leftovers explain nothing of this one
            shutil.rmtree(explain.parent)
        explain.parent.mkdir(parents=True)
        head = self.tree.head()
        git_state = GitState.of(self.tree, refs=False)  # its refs are never put back
        state = self.tree.state(skip=baseline.untracked)  # the person's clone, as it is
        had = self.tree.changes(baseline.untracked) if changed(state) else []
        # the person's tree: HEAD itself, unless it holds changes of its own
        mine = self.tree.candidate(had, "the tree before the attempt") if had else head
        before = self._start(mine)  # the goal's work so far, on the person's tree
        loop_branch = maker_branch_of(goal)
        theirs: list[str] = []
        moved: str | None = None
        refused: str | None = None
        made: str | None = None
        store = ThreadStore.of(self.root)
        for number in range(1, len(self.options.checkers) + 1):
            store.set(self.options.checker_name(number), goal.id, ThreadState.WAITING)
        # the judged box, made while the maker works, where the candidate's parent is
        self.make_ahead(head)
        with taken_or_made(
            self.ahead.take_maker(), before, lambda: self._maker_box(before, loop_branch)
        ) as box:
            facts = replace(
                self._facts(goal, attempt, last, rewind, base),
                budget=timeout,
                cannot=str(box.cannot),
                explain=str(box.explain),
            )
            box.brief.write_text(render_brief(facts), encoding="utf-8")

            def started(pgid: int) -> None:
                self._started(pgid)
                warm_redaction()  # for what the maker writes for relay, while it works

            ran = run_role(
                self.options.maker,
                box.brief,
                maker=True,
                env_name=BRIEF_ENV,
                cwd=box.tree,
                timeout=timeout,
                work=self.work,
                label=f"{goal.id}-attempt-{attempt}-maker",
                on_start=started,
                cannot=box.cannot,
                credentials=self.credentialed("maker"),
                explain=box.explain,
                sandbox=box,
                thread=("maker", goal.id),
                threads_root=self.root,
            )
            self._ended()
            said = read_private(box.explain, self.secrets()).strip()
            if not said and parse_role(self.options.maker) is not None:
                said = redact_secrets(self._final_message(ran.reading.text), self.secrets())
            explain.write_text(said, encoding="utf-8")
            escaped = self._escaped(head, mine, had, baseline, state)
            broken = box.intact()
            if escaped is None and broken is not None:  # read nothing through a link
                what = f"the maker's box is not as relay made it: {broken}"
                escaped = Failed(Category.PROTECTED, what, what + "; nothing of it was taken")
            if escaped is None:
                moved = branch_moved(f"refs/heads/{loop_branch}", maker_branch(box.tree))
            if escaped is None and moved is None:
                # the candidate is only what the maker's tree holds, hashed with relay's
                # own git directory (the maker's git directory and configuration are never
                # used): its commits are thereby folded. It is a commit of relay's, off
                # every branch: the person's tree and branch get it only when it is kept
                taken = self.tree.take(box.tree, before, skip=box.private)
                theirs = sorted(set(taken.paths) & set(baseline.untracked))
                refused = None if theirs else taken.refused
                if not theirs and refused is None:
                    what = f"{goal.id}: {goal.title} (candidate)"
                    made = self.tree.commit_tree(taken.tree, head, what)
        if escaped is not None:
            git_state.put_back(self.tree, refs=False)
            return escaped, None
        done, reading = ran.done, ran.reading
        if made is None:
            git_state.put_back(self.tree, refs=False)
            if moved is not None:
                what = f"{moved}; relay discarded its worktree"
            elif refused is not None:
                what = f"relay cannot take the candidate into the clone: {refused}"
            else:
                what = f"wrote {', '.join(theirs)}, which the person had left untracked"
            return Failed(Category.PROTECTED, what, what + "; nothing of it was taken"), None
        meta_touched = git_state.put_back(self.tree, refs=False)
        if reading.signal is Signal.WALL and reading.until is not None:
            # the wall leaves nothing behind either (the work so far stays as it was)
            return Wall(reading.until, f"the maker hit a usage limit ({reading.what})"), None
        if reading.signal is Signal.TRANSIENT:  # an interruption leaves nothing behind
            return Transient(reading.what), None
        if reading.signal is Signal.STOPPED:  # a person's stop: nothing kept, no strike
            return Stopped(reading.what), None
        if reading.signal is Signal.CANNOT:
            return Declined(reading.what), None
        changes = self.tree.changed_in(made)
        bad = self._protected(changes, made, goal, head=head)
        if bad or meta_touched:
            # the rest of the change is the goal's work so far; the touched paths are not
            self.held.commit = self.tree.but(made, sorted({p for p, _ in bad}), "put back")
            what = "; ".join([*meta_touched, *(why for _, why in bad)])
            return Failed(Category.PROTECTED, f"touched {what}", "put back by relay: " + what), None
        self.held.commit = made
        if done.timed_out:
            what = f"the maker ran past its {self.maker_timeout:.0f}s timeout"
            if limit < self.maker_timeout:
                what = f"the maker ran past the {limit:.0f}s left of the wall clock"
            return Failed(Category.TIMEOUT, what, diagnosis(done.output)), None
        if reading.signal is not Signal.DONE:
            what = maker_failed(reading)
            return Failed(Category.CRASH, what, diagnosis(done.output)), None
        return self._judge(goal, base, explain, made, changes, state, baseline, head=head)

    def _maker_box(self, commit: str, branch: str) -> contextlib.AbstractContextManager[Sandbox]:
        """The maker's box: a standalone clone of ``commit`` on ``branch``."""
        record = self.work / ATTEMPT_RECORD
        return standalone(self.root, commit, branch, hidden=self.hidden(), record=record)

    def make_ahead(self, commit: str, goal: Goal | None = None) -> None:
        """Start making, on threads, the boxes the next attempt needs (at ``commit``; they
        are moved to the commits they are wanted at when taken): the judged box, and with
        ``goal`` the maker's, where none is made yet. Only where no code run meanwhile, in
        another box, sees a box made ahead, which relay's git then moves, and no other
        account may swap it meanwhile (:func:`ahead_allowed`); and only for a tree of
        :data:`AHEAD_FILES` files or more, whose checkout costs more than a move."""
        if len(self.tree.files_at(commit)) < AHEAD_FILES or not ahead_allowed():
            return  # (the count first: the other asks the file system, once a run)
        hidden = self.hidden()
        if goal is not None and self.ahead.maker is None:
            branch = maker_branch_of(goal)
            self.ahead.maker = BoxAhead(
                self.root, commit, branch, lambda: self._maker_box(commit, branch)
            )
        if self.ahead.judged is None:
            after = self.ahead.maker  # the maker's box is wanted first
            self.ahead.judged = judged_ahead(self.root, commit, hidden=hidden, after=after)

    def _start(self, mine: str) -> str:
        """Where the maker starts: the goal's work so far (a failed attempt's candidate the
        ratchet did not rewind) carried onto ``mine``, the person's tree; else ``mine``."""
        work = self.held.commit
        if work is None:
            return mine
        carried = self.tree.carried(work, mine, "the goal's work so far")
        if carried is None:  # the person's tree moved under it: start again from theirs
            self.held.commit = None
            return mine
        return carried

    def secrets(self) -> list[str]:
        """The secrets relay keeps in this clone's git directory (never in a role's text)."""
        return clone_secrets(self.tree.common_dir())

    def hidden(self) -> tuple[Path, ...]:
        """What the maker's process must not see: this clone, its git directory, the
        remotes that are folders here, and the credential files of HOME (asked of git
        once a run)."""
        if not self.shielded:
            self.shielded.append(hidden_for(self.root))
        return self.shielded[0]

    @contextlib.contextmanager
    def boxed(
        self, commit: str, *, graders: bool = False, ahead: bool = False
    ) -> Iterator[Sandbox]:
        """A standalone clone of ``commit`` behind the maker's boundary, where the gates
        run the candidate's code and the roles grade it (with ``graders``, read-only):
        never the person's clone, whose git directory, remotes and secrets it hides. With
        ``ahead``, the judged box made ahead (:meth:`make_ahead`), where there is one."""
        made = self.ahead.take_judged() if ahead else None
        with judged(self.root, commit, hidden=self.hidden(), graders=graders, ahead=made) as box:
            yield box

    def measure_at(
        self, commit: str, gates: Sequence[Gate], *, coverage_report: str | None
    ) -> Measure:
        """Every gate on ``commit`` (a baseline), each run to its end in a sandboxed clone
        of it. The result is kept by the commit's tree (relay's own bookkeeping aside)
        and the gates, and reused while neither changes: a baseline is measured once, and
        a kept candidate's green run (its gates ran in a fresh clone of that tree) is the
        next baseline's. Green results are kept on disk too, beside the briefs (inside
        the git directory, which no maker sees), so the next run reuses them."""
        key = self._measure_key(commit, gates, coverage_report)
        got = self.measured.get(key) or self._kept_on_disk(key)
        if got is not None:
            return got
        with self.boxed(commit) as box:
            got = measure(
                box.tree,
                gates,
                timeout=self.gate_timeout,
                coverage_report=coverage_report,
                stop_at_failure=False,
                box=box,
                work=self.work,
                files=self.tree.files_at(commit),  # what the box's clone checked out
            )
        self._remember(key, got)
        return got

    def _measure_key(
        self, commit: str, gates: Sequence[Gate], coverage_report: str | None
    ) -> tuple[str, ...]:
        from relay.loop.goals import GOALS_NAME
        from relay.ratchet.engine import is_bookkeeping

        # relay's records and the goals list (a goal added or marked done) are no gate's input
        listing = self.tree.ls_tree(commit).split("\0")
        kept = "\0".join(
            e
            for e in listing
            if e and not is_bookkeeping(path := e.partition("\t")[2]) and path != GOALS_NAME
        )
        return (
            hashlib.sha256(kept.encode("utf-8", "surrogateescape")).hexdigest(),
            coverage_report or "",
            *(f"{g.name}\0{g.command}" for g in gates),
        )

    def _remember(self, key: tuple[str, ...], got: Measure) -> None:
        """Keep a measure for its tree and gates (a green one on disk as well)."""
        if len(self.measured) >= 8:
            self.measured.clear()
        self.measured[key] = got
        if not got.green:
            return
        path = self.work / MEASURED_FILE
        entries = [e for e in _disk_entries(path) if e.get("key") != list(key)]
        entries = [*entries[-(KEPT_ON_DISK - 1) :], {"key": list(key), **got.to_json()}]
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, prefix=path.name, delete=False
            ) as partial:  # a name of its own: parallel judges share the folder
                partial.write(json.dumps({"measured": entries}))
            Path(partial.name).replace(path)

    def _kept_on_disk(self, key: tuple[str, ...]) -> Measure | None:
        for entry in _disk_entries(self.work / MEASURED_FILE):
            if entry.get("key") == list(key):
                got = Measure.from_json(entry)
                if got is not None:
                    self.measured[key] = got
                return got
        return None

    def _kept_candidate(self, goal: Goal, candidate: str, here: Measure) -> None:
        """A passing candidate's run, its gates less the acceptance command, kept as the
        measure of its tree: once kept, the candidate is the next goal's baseline."""
        gates = self.contract.gates
        if len(here.results) != len(gates) + 1 or len(here.checks) != len(gates) + 1:
            return
        rest = Measure(here.results[1:], None, here.coverage, here.checks[1:])
        if rest.green:
            self._remember(self._measure_key(candidate, gates, self.contract.coverage_report), rest)

    def pack_loose(self) -> None:
        """Pack the clone's loose objects when more than LOOSE_CAP have come since the last
        packing: each box's repository is packed from the clone's objects, where a loose
        one costs every box a read of its own, and the loop writes dozens an iteration
        (git's own housekeeping waits for thousands). What a packing leaves loose (objects
        no ref reaches, which git's own housekeeping prunes) is written down, so that it
        alone never asks for another. Only the clone's main tree packs: the goals'
        worktrees of a parallel run share its objects and judge at the same time."""
        if not (self.root / ".git").is_dir():
            return
        path = self.work / LOOSE_FILE
        try:
            left = int(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            left = 0
        if self.tree.loose_objects(left + LOOSE_CAP) <= left + LOOSE_CAP:
            return
        self.tree.pack_loose()
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{self.tree.loose_objects(1 << 30)}\n", encoding="utf-8")

    def baseline(self, goal: Goal) -> Measure:
        """The acceptance command and every gate on HEAD, in sandboxed clones of it (the
        gates' results reused while the baseline's tree and the gates are the same; the
        clone's loose objects packed first when they are many: :meth:`pack_loose`)."""
        self.pack_loose()
        head = self.tree.head()
        accept = self.measure_at(head, self.gates(goal)[:1], coverage_report=None)
        gates = self.contract.gates
        return accept.then(
            self.measure_at(head, gates, coverage_report=self.contract.coverage_report)
        )

    def _escaped(
        self, head: str, before: str, had: list[str], baseline: Baseline, state: str
    ) -> Failed | None:
        """The person's clone must not change while the maker runs (the maker has a tree
        of its own): what changed there fails the attempt, is put back and never taken."""
        if self.tree.state(skip=baseline.untracked) == state:
            return None
        now = self.tree.changes(baseline.untracked)
        paths = sorted(set(now) ^ set(had))
        snapshot = self.tree.candidate(now, "the tree after the attempt")
        if self.tree.tree_of(snapshot) != self.tree.tree_of(before):
            diff = self.tree.git("diff", "--name-only", "--no-renames", "-z", before, snapshot)
            paths = sorted({*paths, *(p for p in diff.split("\0") if p)})
        moved = self.tree.head() != head
        if not paths and not moved:
            return None
        self.tree.undo_commits_since(head)
        self._put_back(before, had, baseline)
        said = ", ".join(paths[:5]) or "its branch"
        what = f"the person's clone changed during the attempt ({said})"
        why = (
            f"{what}; the maker works in a clone of its own and only what changed there is"
            " its candidate. Relay put the person's clone back; nothing of it was taken."
            + (" A commit was made on the person's branch and undone." if moved else "")
        )
        return Failed(Category.PROTECTED, what, why)

    @staticmethod
    def _final_message(text: str) -> str:
        """An agent's final message, as its structured output gives it: the explanation
        when the maker wrote no file (a CLI confined to its workspace may not)."""
        return text.strip()[:EXPLAIN_CHARS]

    def explain_path(self, goal: Goal, attempt: int) -> Path:
        """Where relay keeps what the maker said it changed and why (the maker writes it
        in its own tree, at a path the candidate never holds; relay copies it here)."""
        return self.work / "attempts" / f"{goal.id}-{attempt}" / EXPLAIN_NAME

    def explanation(self, goal: Goal, attempt: int) -> str:
        """What the maker of ``attempt`` wrote it changed and why ("" when nothing)."""
        return _read(self.explain_path(goal, attempt)).strip()[:EXPLAIN_CHARS]

    def critical_paths(self) -> tuple[str, ...]:
        """The security-critical paths: the contract's, and LOOP.md's confirmed areas."""
        areas = area_paths(self.spine.read(LOOP_FILE) or "")
        return tuple(dict.fromkeys([*self.contract.security_critical, *areas]))

    def _started(self, pgid: int) -> None:
        """Write down the maker's process group, so that a run killed meanwhile stops it
        when it resumes."""
        (self.work / MAKER_PID).write_text(maker_record(pgid), encoding="utf-8")

    def _ended(self) -> None:
        (self.work / MAKER_PID).unlink(missing_ok=True)

    def _put_back(self, before: str, had: list[str], baseline: Baseline) -> None:
        """The tree as it was before the attempt (``before`` is its snapshot)."""
        for _ in range(3):  # a restored .gitignore can reveal what it hid
            now = self.tree.changes(baseline.untracked)
            paths = sorted({*had, *now})
            if self.tree.tree_of(self.tree.candidate(now, "now")) == self.tree.tree_of(before):
                return
            self.tree.restore_to(before, paths)

    def _protected(
        self, changes: list[str], candidate: str, goal: Goal | None = None, *, head: str
    ) -> list[tuple[str, str]]:
        """What the changes (``candidate``'s against ``head``, HEAD) touch that no maker
        may: the contract's protected paths, the spine relay keeps, and what defines the
        gates."""
        at_baseline = self.tree.files_at(head)
        held = set(self.tree.files_at(candidate)) if changes else set()
        deleted = [p for p in changes if p not in held]
        show = self._shown(candidate)
        self.tree.show_all(  # what is read below, in one process
            [
                *(
                    (c, p)
                    for p in changes
                    if p.endswith(SOURCE_SUFFIXES)
                    or p == LOOP_FILE
                    or Path(p).name in ("pyproject.toml", "package.json")
                    for c in ("HEAD", candidate)
                ),
                *(("HEAD", n) for n, _ in PYTEST_CONFIGS if n in at_baseline),
            ]
        )
        texts = {
            p: (show("HEAD", p), show(candidate, p))
            for p in changes
            if Path(p).name in ("pyproject.toml", "package.json")
        }
        for p in changes:  # where a file-wide suppression comment could be added
            if p.endswith(SOURCE_SUFFIXES) and p not in deleted and p not in texts:
                texts[p] = (show("HEAD", p), show(candidate, p))
        loop_md = None
        if LOOP_FILE in changes:
            loop_md = loop_md_touched(show("HEAD", LOOP_FILE), show(candidate, LOOP_FILE))
        pythonpath = config_pythonpath(
            {n: show("HEAD", n) for n, _ in PYTEST_CONFIGS if n in at_baseline}
        )  # a configuration HEAD does not hold is not asked of git
        return [
            *([(LOOP_FILE, loop_md)] if loop_md else []),
            *touched(changes, self.contract, texts=self._texts(changes, candidate, show)),
            *spine_touched(changes),
            *gate_definition_touched(
                changes,
                at_baseline=at_baseline,
                deleted=deleted,
                texts=texts,
                may_edit_tests=goal is not None and goal.may_edit_tests,
                pythonpath=pythonpath,
                installed=installed_names(self.root),
                gate_files=(gates := self._gate_files(goal, [*at_baseline, *changes], show)),
                gates_run_tree=runs_the_tree(
                    self._commands(goal), at_baseline, root=str(self.root), scripts=gates
                ),
            ),
            *project_hooks_touched(
                changes,
                declared=goal.paths if goal is not None else (),
                at_baseline=at_baseline,
            ),
        ]

    def _gate_files(
        self, goal: Goal | None, files: Sequence[str], show: Callable[[str, str], str | None]
    ) -> frozenset[str]:
        """The tree's files the gates' and the goal's acceptance commands run (a script, a
        makefile, a program of the tree's), as HEAD has them: each defines a gate."""
        return gate_scripts(
            self._commands(goal), files, lambda p: show("HEAD", p), root=str(self.root)
        )

    def _commands(self, goal: Goal | None) -> list[str]:
        """The gates' and the goal's acceptance commands."""
        return [g.command for g in (self.gates(goal) if goal else self.contract.gates)]

    def _judge(
        self,
        goal: Goal,
        base: Measure,
        explain: Path,
        candidate: str,
        changes: list[str],
        state: str,
        baseline: Baseline,
        *,
        head: str,
    ) -> tuple[Outcome, Measure | None]:
        """Judge ``candidate`` (relay's commit of the maker's work, off every branch):
        ``changes`` are its paths against ``head`` (HEAD), ``state`` the person's clone as
        the attempt found it (which must not change while the candidate is judged)."""
        machinery = GitState.of(self.tree, refs=False)  # its refs are never put back
        at_head = set(self.tree.files_at(head))
        show = self._shown(candidate)
        # a baseline test the change removed is judged (and named) by the verification
        # below, not as a test that did not run
        removed = [
            n
            for p in changes
            if is_test_file(p) and p.endswith(".py") and p in at_head
            for n in suite_change(p, show("HEAD", p) or "", show(candidate, p)).removed
        ]
        # the candidate's code runs once, in a sandboxed clone of the candidate (the
        # verifier's fresh re-run), never in the person's clone
        with self.boxed(candidate, ahead=True) as box:
            here = measure(
                box.tree,
                self.gates(goal),
                timeout=self.gate_timeout,
                coverage_report=self.contract.coverage_report,
                stop_at_failure=True,
                against=base,
                excused_gone=removed,
                box=box,
                work=self.work,
                files=self.tree.files_at(candidate),  # what the box's clone checked out
            )
            reached = self._machinery(machinery, "its gates")  # before relay runs git again
            if reached:
                return reached, here
            now = set(self.tree.files_at(candidate))
            added = [p for p in changes if p not in at_head and p in now and not is_test_code(p)]
            failed = (
                here.failure
                or coverage_failure(base.coverage, here.coverage)
                or unmeasured_failure(added, here.measured, judged=base.coverage is not None)
            )
            if failed:
                return failed, here
            outcome, fresh = self._graded(
                goal, baseline, base, explain, changes, candidate, here,
                state=state, at_head=at_head,
            )  # fmt: skip
            if isinstance(outcome, Passed):
                self._kept_candidate(goal, candidate, here)
            return outcome, fresh

    def _graded(
        self,
        goal: Goal,
        baseline: Baseline,
        base: Measure,
        explain: Path,
        changes: list[str],
        candidate: str,
        here: Measure,
        *,
        state: str,
        at_head: set[str],
    ) -> tuple[Outcome, Measure | None]:
        """What follows the candidate's passing gates (``here``, run in a sandboxed clone
        of ``candidate``): its account, the checker panel, the security panel, the tests'
        honesty and the verifier. A change whose added code reaches into the test runner or
        the process (``relay/loop/reach.py``) is shown to the checkers as such and, when
        all of that passes, held for a person: the gates cannot vouch for such code, and a
        checker's approval is not a person's."""
        if not _read(explain).strip():
            what = "the maker left no account of what it changed and why"
            why = (
                f"the change passed the gates, but the maker wrote nothing to {EXPLAIN_FILE} in"
                " its tree (the file RELAY_LOOP_EXPLAIN names) and no final message; a change"
                " nobody explained is not kept (write two or three lines: what changed, why)"
            )
            return Failed(Category.UNEXPLAINED, what, why), here
        covered = self.contract.coverage_report is not None
        reached = reaching(self.tree, changes, candidate, coverage=covered)
        said = [r.said() for r in reached]
        blocked = self._panel(goal, candidate, here, why=_read(explain), reached=said)
        if blocked:
            return blocked, here
        self.ballots.clear()
        if is_security_critical(goal.security, changes, self.critical_paths()):
            breached = self._security(goal, candidate, here, reached=said)
            if breached:
                return breached, here
        tests = [p for p in changes if is_test_file(p) and p in at_head]
        added = [p for p in changes if is_test_file(p) and p not in at_head]
        outcome, fresh = self._verify(
            goal, candidate, base, tests, added, changes, fresh=here, at_head=at_head
        )
        if isinstance(outcome, Passed):
            if self.tree.state(skip=baseline.untracked) != state:
                what = "the person's work tree changed while the candidate was judged"
                why = (
                    "a checker, the verifier or the candidate's code edited the person's clone;"
                    " only the maker changes anything, and only in its own tree"
                )
                return Failed(Category.CRASH, what, why), fresh
            if reached:  # the gates' verdict cannot vouch for it, nor can the checkers
                return Declined(held_reason(reached, candidate), said="held for a person"), fresh
        return outcome, fresh

    def _machinery(self, state: GitState, during: str) -> Failed | None:
        """The clone's hooks, info files and config as ``state`` had them: what the
        candidate's code changed there while ``during`` ran is put back at once (before
        relay runs git again, which would run it) and fails the attempt."""
        touched = state.put_back(self.tree, refs=False)
        if not touched:
            return None
        what = f"the candidate changed the clone's own git machinery during {during}"
        why = (
            "; ".join(touched) + ". Relay put it back; the candidate's code (its tests"
            " included) may not change the clone's git directory."
        )
        return Failed(Category.PROTECTED, what, why)

    def _texts(
        self, changes: list[str], candidate: str, show: Callable[[str, str], str | None]
    ) -> dict[str, tuple[str | None, str | None]]:
        texts = {}
        for entry in self.contract.protected:
            path, heading = split_protected(entry)
            if heading is not None and path in changes:
                texts[path] = (show("HEAD", path), show(candidate, path))
        return texts

    def _shown(self, candidate: str) -> Callable[[str, str], str | None]:
        """A file's text at HEAD or ``candidate`` as relay's guards read it: a regular
        file's text (a link reads as "", as a link to /dev/zero would), None when there is
        none."""
        links = {path for path, mode in self.tree.listing(candidate) if mode == "120000"}

        def show(commit: str, path: str) -> str | None:
            if commit == candidate and path in links:
                return ""
            text = self.tree.show(commit, path)
            return None if text is None else text.replace("\r\n", "\n").replace("\r", "\n")

        return show

    def _panel(
        self,
        goal: Goal,
        candidate: str,
        here: Measure,
        *,
        why: str = "",
        reached: Sequence[str] = (),
    ) -> Failed | None:
        """Every checker reviews the diff; the reducer (declared before the fan-out) merges
        their findings, and a blocking finding from any of them blocks (with none, nothing
        blocks, and the diff is not asked of git)."""
        if not self.options.checkers:
            return None
        diff = self.tree.diff(candidate)
        answers: list[tuple[str, Review]] = []
        for number, command in enumerate(self.options.checkers, start=1):
            path = self.work / f"review-{number}.md"

            def write(again: bool, path: Path = path) -> Path:
                text = render_review(
                    goal, diff=diff, results=here.results, again=again, why=why, reached=reached
                )
                path.write_text(text, encoding="utf-8")
                return path

            with self.boxed(candidate, graders=True) as box:  # a clone of its own each
                got, _ = review(
                    command, write, cwd=box.tree, timeout=self.checker_timeout,
                    who=f"checker {number}", work=self.work, diff=diff, env_name=REVIEW_ENV,
                    credentials=self.credentialed("checker"),
                    thread=(self.options.checker_name(number), goal.id), sandbox=box,
                    threads_root=self.root,
                )  # fmt: skip
            answers.append((f"checker {number}", got))
        reduced = reduce_reviews(answers)
        if not reduced.blocked:
            return None
        findings = "\n".join(reduced.lines()) or "- (no findings given)"
        return Failed(Category.CHECKER, f"{', '.join(reduced.blockers)} blocked", findings)

    def _security(
        self, goal: Goal, candidate: str, here: Measure, *, reached: Sequence[str] = ()
    ) -> Failed | None:
        """The security panel: every checker again as a ballot, and each red-team command
        asked to breach the invariant (its ``block`` is a breach found)."""
        diff = self.tree.diff(candidate)
        ballots: list[Ballot] = []
        panel = [(f"checker {n}", "checker", c) for n, c in enumerate(self.options.checkers, 1)]
        panel += [(f"red team {n}", "red team", c) for n, c in enumerate(self.options.red_team, 1)]
        for who, role, command in panel:
            path = self.work / f"security-{who.replace(' ', '-')}.md"

            def write(again: bool, path: Path = path, role: str = role) -> Path:
                text = render_review(
                    goal, diff=diff, results=here.results, again=again, reached=reached
                )
                if role == "red team":
                    text = RED_TEAM_NOTE + text
                path.write_text(text, encoding="utf-8")
                return path

            with self.boxed(candidate, graders=True) as box:
                got, _ = review(
                    command, write, cwd=box.tree, timeout=self.checker_timeout, who=who,
                    work=self.work, diff=diff, env_name=REVIEW_ENV,
                    credentials=self.credentialed(role), sandbox=box, threads_root=self.root,
                )  # fmt: skip
            ballots.append(Ballot(who, role, got))
        verdict = security_verdict(ballots)
        self.ballots.extend(ballots)
        if verdict.passed:
            return None
        findings = [f"- {b.who}: {f}" for b in ballots for f in b.review.findings]
        return Failed(
            Category.CHECKER, f"security panel: {verdict.why}", "\n".join(findings) or verdict.why
        )

    def _verify(
        self,
        goal: Goal,
        candidate: str,
        base: Measure,
        tests: list[str],
        added: Sequence[str] = (),
        changes: Sequence[str] = (),
        *,
        fresh: Measure,
        at_head: set[str],
    ) -> tuple[Outcome, Measure | None]:
        """The candidate's gates (``fresh``, run in ``box``, a fresh sandboxed clone of the
        candidate), judged against the baseline.
        Tests may grow, never be weakened: a test function the baseline had must still
        exist with the code the baseline wrote (unless the goal declared
        ``--may-edit-tests``), and when the goal changed any test or gate file, a second
        fresh tree of the candidate gets the baseline's copy of every such file and loses
        the goal's new tests and gate files: there nothing may be worse than at the
        baseline, no baseline test may go unrun, and no check may fail that the
        candidate's own run passed."""
        edits = [suite_change(p, self.tree.show("HEAD", p) or "", self.tree.show(candidate, p))
                 for p in tests]  # fmt: skip
        self.edited_tests[:] = [n for e in edits for n in (*e.removed, *e.edited)]
        unreviewed = unreviewed_test_edits(
            self.edited_tests,
            may_edit_tests=goal.may_edit_tests,
            checkers=len(self.options.checkers),
        )
        if unreviewed:
            return Declined(unreviewed, said="held for a person"), None  # put back
        if not goal.may_edit_tests:
            gone, edited = weakened(edits), rewritten(edits)
            if gone or edited:
                what = (
                    f"{len(gone)} test(s) the baseline had are gone ({gone[0]})"
                    if gone
                    else f"{len(edited)} test(s) the baseline had were edited ({edited[0]})"
                )
                why = "\n".join(f"- {g}" for g in [*gone, *edited]) + (
                    "\nTests may grow, never be weakened: every test function the baseline had"
                    " must still exist with the code the baseline wrote, and a failing test the"
                    " goal targets must pass on the candidate as the baseline wrote it. Fix the"
                    " code and add new tests anywhere; a goal that must change a test declares"
                    " --may-edit-tests (recorded, and shown to the checkers)."
                )
                return Failed(Category.TEST, what, why), None
        # a goal that may edit tests may remove one of the baseline's, too
        excused = [n for e in edits for n in e.removed] if goal.may_edit_tests else []
        machinery = GitState.of(self.tree, refs=False)  # its refs are never put back
        # ``fresh``: the candidate's gates as they ran once, in a fresh sandboxed clone of
        # the candidate commit (the first run is the verifier's re-run)
        texts = {
            p: (self.tree.show("HEAD", p), self.tree.show(candidate, p))
            for p in changes
            if Path(p).name == "pyproject.toml"
        }
        swapped, left_out = baseline_suite(
            changes,
            at_baseline=sorted(at_head),
            may_edit_tests=goal.may_edit_tests,
            texts=texts,
            pythonpath=config_pythonpath(
                {n: self.tree.show("HEAD", n) for n, _ in PYTEST_CONFIGS if n in at_head}
            ),
            installed=installed_names(self.root),
            gate_files=self._gate_files(goal, [*at_head, *changes], self.tree.show),
        )
        if swapped or left_out:
            # the candidate's code judged by the baseline's tests and gate configuration
            # alone, in a sandboxed clone of its own (nothing the first run wrote is there):
            # a new test module, conftest or configuration cannot pass a baseline test for it
            with self.boxed(candidate) as second:
                where = second.tree
                try:
                    self.tree.overlay(where, "HEAD", swapped)
                except ValueError as err:  # the candidate holds a link there
                    what = f"the candidate's tree leads the baseline's tests out of it ({err})"
                    return Failed(Category.PROTECTED, what, what), fresh
                for new in left_out:
                    target = where / new
                    if target.is_dir() and not target.is_symlink():
                        shutil.rmtree(target)
                    else:
                        target.unlink(missing_ok=True)
                again = measure(
                    where,
                    self.contract.gates,
                    timeout=self.gate_timeout,
                    coverage_report=None,
                    stop_at_failure=True,
                    against=base,
                    new_tests=[*added, *(n for e in edits for n in e.added)],
                    also=fresh,
                    excused_gone=excused,
                    box=second,
                    work=self.work,
                )
                reached = self._machinery(machinery, "the re-run with the baseline's tests")
                if reached:
                    return reached, again
                if again.failure:
                    return swap_failure(again.failure, edits, swapped, left_out), again
        if self.options.verifier:
            path = self.work / "evidence.md"
            cover = coverage_delta(base.coverage, fresh.coverage)

            def write(again: bool) -> Path:
                text = render_evidence(goal, results=fresh.results, coverage=cover, again=again)
                path.write_text(text, encoding="utf-8")
                return path

            with self.boxed(candidate, graders=True) as graded:
                got, _ = review(
                    self.options.verifier,
                    write,
                    cwd=graded.tree,
                    timeout=self.checker_timeout,
                    who="the verifier",
                    work=self.work,
                    diff=None,
                    env_name=REVIEW_ENV,
                    credentials=self.credentialed("verifier"),
                    sandbox=graded,
                    threads_root=self.root,
                )
            if got.verdict is Verdict.BLOCK:
                findings = "\n".join(f"- {f}" for f in got.findings) or "- (no findings given)"
                return Failed(Category.CHECKER, "the verifier blocked", findings), fresh
        return Passed(), fresh

    def _facts(
        self,
        goal: Goal,
        attempt: int,
        last: Failure | None,
        rewind: bool,
        base: Measure | None = None,
    ) -> BriefFacts:
        failing = (
            baseline_failing({c.gate: c for c in base.checks if c.gate != "accept"}) if base else []
        )
        return BriefFacts(
            goal=goal,
            attempt=attempt,
            rules=self.spine.rules()[1],
            handover=tuple(handover_entries(self.spine.handover())[-3:]),
            last_failure=last,
            rewind=rewind,
            mutable=self.contract.mutable,
            protected=self.contract.protected,
            gates=tuple(g.command for g in self.contract.gates),
            baseline_failing=tuple(failing),
        )
