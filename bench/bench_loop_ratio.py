"""A kept loop iteration against the gates run by hand, paired (issue 29's goal: one kept
iteration costs at most 1.5x the gates by hand plus the maker's own time).

Four real projects, each in a temporary git repository:

- tiny: the calc project of ``bench_loop`` (pytest and ruff as its gates, well under a
  second each), where the loop's fixed costs show most;
- real: inflection 0.5.1 as released, unpacked from its source distribution (the project
  ``tests/loop/test_loop_third_party.py`` works on), with its own test suite and ruff's
  pyflakes rules as its gates;
- suite: Python-Markdown 3.7 as released, from its source distribution, with its own test
  suite (970 tests, run as the project runs them, with unittest: about half a second here)
  and ruff's pyflakes rules beside it;
- long: docutils 0.21.2 as released, whose own suite (about 1,600 tests and subtests, under
  pytest) takes a few seconds, as most projects' gates do: where the gates, not the loop,
  should cost. On the three above the gates take under a second, and the loop's fixed
  cost per iteration (its start, its bookkeeping commits, a box for each command) decides.

Each pair runs, back to back and in alternating order:

- the gates by hand: the same commands, one after the other, in the project's clone;
- one ``relay loop run --max-iterations 1`` as a process, on a goal of its own, worked by a
  trivial maker (it adds one function to the project's module and writes its account)
  that records its own wall time, subtracted from the iteration's.

The ratio of each pair is (iteration - maker) / by hand; printed for each project are both
arms' medians, the ratios' median and spread, the machine's load before and after, the
same ratio in CPU-seconds (every process each arm started, boxes and gates included: on a
loaded machine the steadier figure), and, from one more iteration run apart (not timed),
how many git processes an iteration starts (by command) and how many times it ran the
gate set.

Then the marginal cost of a further kept iteration within one run: one `relay loop run`
that keeps MARGINAL_N goals against one that keeps 1, with the gates by hand beside them
(paired, order alternating); (T_N - T_1) / (N - 1), the makers' own time taken out, over
the gates by hand. A run's start (the process, the box's set-up, the first baseline) is
paid once; this is what each goal after the first costs. Both figures are printed, each
with its own verdict: the goal is met on the single iteration's, not on the marginal alone.

    python -m bench loop_ratio
"""

from __future__ import annotations

import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.bench_loop import GATES, PY, project, relay, sh, share

RUNS = 5
MARGINAL_N = 3  # goals kept by the longer run of a marginal pair
MARGINAL_RUNS = 3  # marginal pairs
GOAL = 1.5  # issue 29: a kept iteration <= 1.5x the gates by hand plus the maker's time
SDIST = "inflection-0.5.1"
SUITE = "markdown-3.7"
LONG = "docutils-0.21.2"
SOURCE = Path(__file__).resolve().parents[1] / "build" / "sdists"
REAL_GATES = (
    f"{PY} -m pytest -q -p no:cacheprovider test_inflection.py",
    f"{PY} -m ruff check --no-cache --isolated --select F inflection",
)
SUITE_GATES = (
    f"{PY} -m unittest discover -q tests",  # as its tox.ini runs them
    f"{PY} -m ruff check --no-cache --isolated --select F markdown",
)
# Its suite under pytest (a few seconds: where a project's gates usually are), less the two
# tests of code highlighting that expect another Pygments than the one installed here; and
# pyflakes' rules less the repeated dictionary key its Georgian directive names carry.
_CODE_TESTS = "test/test_parsers/test_rst/test_directives/test_code"
LONG_GATES = (
    f"{PY} -m pytest -q -p no:cacheprovider test --deselect {_CODE_TESTS}.py"
    f" --deselect {_CODE_TESTS}_long.py",
    f"{PY} -m ruff check --no-cache --isolated --select F --ignore F601 docutils",
)


@dataclass(frozen=True)
class Subject:
    """A project the bench runs the loop on: how to make it, its gates, the module the
    maker adds to and the folder to import it from."""

    name: str
    make: Callable[[Path], Path]  # makes the project under a folder; its root
    gates: tuple[str, ...]
    module: str  # the file the maker adds a function to
    path: str  # the folder the acceptance command imports the module from


def tiny(where: Path) -> Path:
    root = where / "calc"
    root.mkdir()
    project(root)
    return root


def sdist(name: str = SDIST) -> Path:
    """A project's source distribution (``name``: its archive's stem, ``inflection-0.5.1``):
    the checkout's copy (the loop tests download inflection's there), else downloaded from
    the package registry once."""
    archive = SOURCE / f"{name}.tar.gz"
    if not archive.exists():
        SOURCE.mkdir(parents=True, exist_ok=True)
        project, _, version = name.rpartition("-")
        got = subprocess.run(
            [PY, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             "--dest", str(SOURCE), f"{project}=={version}"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        if got.returncode != 0 or not archive.exists():
            raise SystemExit(f"bench: {name} could not be downloaded: {got.stderr[-400:]}")
    return archive


def released(name: str, gates: tuple[str, ...], built: tuple[str, ...]) -> Callable[[Path], Path]:
    """Makes ``name`` as released (its source distribution, less what building it left:
    ``built``), committed, with the loop set up on ``gates``."""

    def make(where: Path) -> Path:
        with tarfile.open(sdist(name)) as tar:
            tar.extractall(where, filter="data")
        root = where / name
        for each in built:
            sh("rm", "-rf", str(root / each), cwd=where)
        (root / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
        for args in (
            ("init", "-q", "-b", "main"),
            ("config", "user.name", "Upstream"),
            ("config", "user.email", "upstream@example.invalid"),
            ("add", "-A"),
            ("commit", "-qm", f"{name} as released"),
        ):
            sh("git", *args, cwd=root)
        init = ["loop", "init", "--yes", *(w for g in gates for w in ("--gate", g))]
        done = relay(*init, cwd=root)
        if done.returncode != 0:
            raise SystemExit(f"bench: relay loop init failed on {name}: {done.stderr}")
        return root

    return make


real = released(SDIST, REAL_GATES, ("inflection.egg-info", "docs/__pycache__"))
suite = released(SUITE, SUITE_GATES, ())  # its egg-info kept: the tests name extensions by it
long_suite = released(LONG, LONG_GATES, ())


SUBJECTS = (
    Subject("tiny (calc)", tiny, GATES, "src/calc.py", "src"),
    Subject(f"real ({SDIST})", real, REAL_GATES, "inflection/__init__.py", "."),
    Subject(f"suite ({SUITE})", suite, SUITE_GATES, "markdown/__init__.py", "."),
    Subject(f"long ({LONG})", long_suite, LONG_GATES, "docutils/__init__.py", "."),
)


def maker(where: Path, times: Path, module: str) -> str:
    """A maker that adds the function its goal names (f<n>) to ``module`` and says why,
    appending its own wall time (seconds, from its first line to its last) to ``times``."""
    script = where / "maker.py"
    script.write_text(
        "import time\n"
        "started = time.time()\n"
        "import os, pathlib, re, sys\n"
        "brief = pathlib.Path(sys.argv[-1]).read_text()\n"
        "n = re.search(r'Add f(\\d+)', brief).group(1)\n"
        f"src = pathlib.Path({module!r})\n"
        "src.write_text(src.read_text() + f'\\n\\ndef f{n}(x):\\n    return x + {n}\\n')\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text(f'added f{n}\\n')\n"
        f"with open({str(times)!r}, 'a') as out:\n"
        "    out.write(f'{time.time() - started}\\n')\n"
    )
    return f"{PY} {script}"


def cpu() -> float:
    """CPU-seconds of every child process ended and waited for so far (their own children
    counted in: a box's, a gate's)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def by_hand(root: Path, gates: tuple[str, ...]) -> float:
    """Seconds to run the gate set by hand once (each must pass: the project is green)."""
    started = time.perf_counter()
    for gate in gates:
        done = subprocess.run(gate, shell=True, cwd=root, capture_output=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"bench: the gate {gate!r} fails by hand: {done.stdout[-400:]!r}")
    return time.perf_counter() - started


def add_goal(root: Path, n: int, subject: Subject) -> None:
    name = Path(subject.module).with_suffix("").as_posix().removesuffix("/__init__")
    name = name.removeprefix(f"{subject.path}/").replace("/", ".")
    code = (
        f"import sys; sys.path.insert(0, {subject.path!r}); import {name};"
        f" sys.exit(not hasattr({name}, 'f{n}'))"
    )
    accept = f"{PY} -c {shlex.quote(code)}"
    added = relay("loop", "goal", "add", f"Add f{n}", "--accept", accept, cwd=root)
    if added.returncode != 0:
        raise SystemExit(f"bench: relay loop goal add failed: {added.stderr}")


def iteration(
    root: Path,
    command: str,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
    *,
    keep: int = 1,
) -> float:
    """Seconds for one `relay loop run --max-iterations KEEP` that keeps a goal in each of
    its iterations (run under ``prefix``, a tracer, when given)."""
    argv = [*prefix, PY, "-m", "relay.cli", "loop", "run", "--maker", command]
    argv += ["--max-iterations", str(keep), "--json", "--repo-dir", str(root)]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - started
    kept = json.loads(done.stdout)["data"].get("kept") if done.stdout else None
    if not kept or len(kept) != keep:
        raise SystemExit(
            f"bench: the run kept {len(kept or [])} of {keep}: {done.stdout[-600:]}{done.stderr}"
        )
    return wall


def gate_logs(root: Path) -> set[Path]:
    logs = root / "docs/loop/state/gates"
    return set(logs.rglob("*.log")) if logs.exists() else set()


# git's options that take the next word as their value (before the command's name)
GIT_VALUED = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def git_command(argv: list[str]) -> str:
    """The git command an argument list runs (``status`` of ``git -c a=b -C x status``)."""
    words = iter(argv[1:])
    for word in words:
        if word in GIT_VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return "?"


def traced_starts(trace: Path) -> tuple[Counter[str], int]:
    """From ``strace -f -e trace=execve`` output: the git processes started (by command;
    git's own helpers, ``git-upload-pack``, by their name) and every process started."""
    starts: Counter[str] = Counter()
    processes = 0
    for line in trace.read_text(errors="replace").splitlines():
        if "execve(" not in line or "= -1 " in line or "resumed>" in line:
            continue  # a PATH lookup that missed, or the second half of an interrupted call
        processes += 1
        program = line.partition('execve("')[2].partition('"')[0]
        argv = re.findall(r'"((?:[^"\\]|\\.)*)"', line.partition("[")[2].partition("]")[0])
        name = Path(program).name
        if name == "git" and argv:
            starts[git_command(argv)] += 1
        elif name.startswith("git-"):
            starts[name.removeprefix("git-")] += 1
    return starts, processes


def anatomy(
    root: Path, command: str, n: int, trace: Path, subject: Subject
) -> tuple[Counter[str], float, int, int | None]:
    """One more iteration, run apart and traced: the git processes it started (by git
    command; with strace, every one of them, the boxes' included, and every process it
    started; without, what git's own trace sees, which misses the boxes' own git), the
    gate sets it ran (its gate logs, the goal's acceptance command aside) and its
    acceptance runs."""
    add_goal(root, n, subject)
    before = gate_logs(root)
    strace = shutil.which("strace")
    processes: int | None = None
    if strace:
        tracer = (strace, "-f", "-qq", "-s", "256", "-e", "trace=execve", "-o", str(trace))
        iteration(root, command, prefix=tracer)
        starts, processes = traced_starts(trace)
    else:
        iteration(root, command, env={**os.environ, "GIT_TRACE2_EVENT": str(trace)})
        starts = Counter()
        for line in trace.read_text().splitlines():
            event = json.loads(line)
            if event.get("event") == "start":
                starts[git_command(event.get("argv", []))] += 1
    new = gate_logs(root) - before
    gates = [p for p in new if "accept" not in p.name]
    return starts, len(gates) / len(subject.gates), len(new) - len(gates), processes


@dataclass(frozen=True)
class Marginal:
    """A further kept iteration within one run, beside the gates by hand (medians)."""

    hand: float  # the gates by hand, seconds
    each: float  # (T_N - T_1) / (N - 1), the makers' time out, seconds
    ratios: list[float]  # each pair's marginal over its gates by hand, sorted
    cpus: list[float]  # the same in CPU-seconds, sorted

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)


def makers_since(times: Path, before: int) -> float:
    """The maker's seconds recorded in ``times`` after its first ``before`` lines."""
    return sum(float(t) for t in times.read_text().split()[before:])


def marginal(
    root: Path, command: str, times: Path, subject: Subject, first: int
) -> tuple[Marginal, int]:
    """MARGINAL_RUNS pairs of one run keeping 1 goal and one keeping MARGINAL_N, the gates
    by hand beside them, order alternating (goals numbered from ``first``); the figures and
    the next goal's number."""
    n = first
    hands, eaches, ratios, cpus = [], [], [], []
    for i in range(MARGINAL_RUNS):
        walls, spent, hand_cpu = {}, {}, 0.0
        h = 0.0
        order = ("hand", 1, MARGINAL_N) if i % 2 == 0 else (MARGINAL_N, 1, "hand")
        for arm in order:
            c = cpu()
            if arm == "hand":
                h = by_hand(root, subject.gates)
                hand_cpu = cpu() - c
                continue
            assert isinstance(arm, int)
            for _ in range(arm):
                add_goal(root, n, subject)
                n += 1
            before = len(times.read_text().split())
            w = iteration(root, command, keep=arm)
            spent[arm] = cpu() - c
            walls[arm] = w - makers_since(times, before)
        each = (walls[MARGINAL_N] - walls[1]) / (MARGINAL_N - 1)
        each_cpu = (spent[MARGINAL_N] - spent[1]) / (MARGINAL_N - 1)
        hands.append(h)
        eaches.append(each)
        ratios.append(each / h)
        cpus.append(each_cpu / hand_cpu)
        print(f"marginal pair {i + 1}: by hand {h:.2f} s, run keeping 1 {walls[1]:.2f} s,"
              f" keeping {MARGINAL_N} {walls[MARGINAL_N]:.2f} s (makers out):"
              f" {each:.2f} s a further iteration, {each / h:.2f}x", flush=True)  # fmt: skip
    figures = Marginal(statistics.median(hands), statistics.median(eaches), sorted(ratios),
                       sorted(cpus))  # fmt: skip
    return figures, n


def measure(subject: Subject) -> tuple[float, Marginal]:
    """The paired runs on ``subject``, printed; the ratios' median, and the marginal
    figures."""
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bench-loop-ratio-") as tmp:
        root = subject.make(Path(tmp))
        shared = Path(tmp) / "maker"  # shared with the maker's box, as a person shares one
        shared.mkdir()
        times = shared / "maker-times"
        command = maker(shared, times, subject.module)
        share(shared)
        by_hand(root, subject.gates)  # warm: the first run compiles the project's bytecode
        hand, loop, makers, ratios, cpus = [], [], [], [], []
        for i in range(RUNS):
            n = i + 1
            add_goal(root, n, subject)
            if i % 2 == 0:
                c = cpu()
                h = by_hand(root, subject.gates)
                ch = cpu() - c
                w = iteration(root, command)
                cw = cpu() - c - ch
            else:
                c = cpu()
                w = iteration(root, command)
                cw = cpu() - c
                h = by_hand(root, subject.gates)
                ch = cpu() - c - cw
            cpus.append((cw, ch))
            m = float(times.read_text().split()[-1])
            hand.append(h)
            loop.append(w)
            makers.append(m)
            ratios.append((w - m) / h)
            print(f"pair {n}: by hand {h:.2f} s, iteration {w:.2f} s (maker {m:.2f} s):"
                  f" {(w - m) / h:.2f}x", flush=True)  # fmt: skip
        trace = Path(tmp) / "trace"
        starts, sets, accepts, processes = anatomy(root, command, RUNS + 1, trace, subject)
        loads.append(os.getloadavg()[0])
        further, _ = marginal(root, command, times, subject, RUNS + 2)
        loads.append(os.getloadavg()[0])
    ratios.sort()
    print(f"machine: {os.cpu_count()} cores, load average {loads[0]:.2f} before,"
          f" {loads[1]:.2f} after; {RUNS} pairs, order alternating")  # fmt: skip
    print(f"gates by hand ({len(subject.gates)} gates): median {statistics.median(hand):.2f} s;"
          f" kept iteration: median {statistics.median(loop):.2f} s, of which the maker"
          f" {statistics.median(makers):.2f} s")  # fmt: skip
    ratio = statistics.median(ratios)
    print(f"kept iteration less the maker, over the gates by hand: median {ratio:.2f}x"
          f" (spread {ratios[0]:.2f}-{ratios[-1]:.2f})")  # fmt: skip
    by_cpu = sorted(w / h for w, h in cpus)
    print(f"in CPU-seconds: gates by hand median {statistics.median(h for _, h in cpus):.2f},"
          f" kept iteration median {statistics.median(w for w, _ in cpus):.2f} (the maker's"
          f" in it): median {statistics.median(by_cpu):.2f}x"
          f" (spread {by_cpu[0]:.2f}-{by_cpu[-1]:.2f})")  # fmt: skip
    own = statistics.median(w - m - h for w, m, h in zip(loop, makers, hand, strict=True))
    print(f"the loop's own time beside one run of the gates and the maker: median {own:.2f} s")
    said = ", ".join(f"{name} {n}" for name, n in starts.most_common())
    every = (
        f" (strace: every process it started, {processes} in all)"
        if processes is not None
        else " (git's own trace: the boxes' own git unseen)"
    )
    print(
        f"one iteration's anatomy{every}: {sum(starts.values())} git processes ({said}),"
        f" the gate set run {sets:g} time(s), the acceptance command {accepts} time(s)"
    )
    print(f"marginal: a further kept iteration within one run (one run keeping {MARGINAL_N}"
          f" goals against one keeping 1, {MARGINAL_RUNS} pairs, load {loads[2]:.2f} after):"
          f" median {further.each:.2f} s beside the gates by hand {further.hand:.2f} s:"
          f" median {further.ratio:.2f}x (spread {further.ratios[0]:.2f}-{further.ratios[-1]:.2f});"
          f" in CPU-seconds median {statistics.median(further.cpus):.2f}x"
          f" (spread {further.cpus[0]:.2f}-{further.cpus[-1]:.2f})")  # fmt: skip
    return ratio, further


def compiled() -> None:
    """relay's modules compiled in this checkout, as an installed relay has them (``make
    bytecode`` does it for ``make bench``): a shell that writes no bytecode would otherwise
    have every relay process of the iterations compile them again, 0.2-0.3 CPU-s each."""
    root = Path(__file__).resolve().parents[1]
    folders = [str(root / name) for name in ("relay", "watchers", "schedulers")]
    subprocess.run([PY, "-m", "compileall", "-q", *folders], capture_output=True, check=True)


def main() -> None:
    only = os.environ.get("BENCH_LOOP_RATIO_ONLY", "")  # tiny, real, suite or long: one project
    compiled()
    ratios, further = {}, {}
    for subject in SUBJECTS:
        if only and not subject.name.startswith(only):
            continue
        print(f"-- {subject.name} --", flush=True)
        ratios[subject.name], further[subject.name] = measure(subject)
    for name, ratio in ratios.items():
        verdict = "met" if ratio <= GOAL else "NOT met"
        print(f"goal on {name}: a kept iteration <= {GOAL}x the gates by hand plus the maker:"
              f" {ratio:.2f}x, {verdict}")  # fmt: skip
        m = further[name]
        verdict = "met" if m.ratio <= GOAL else "NOT met"
        print(f"  marginal on {name}: a further kept iteration within one run <= {GOAL}x"
              f" the gates by hand plus the maker: {m.ratio:.2f}x, {verdict}"
              f" (the goal is the single iteration's, above)")  # fmt: skip
