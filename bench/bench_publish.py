"""What publishing from relay's own worktree costs: one spine edit (a line appended to a
file) committed and pushed to a real `relay hub`, through relay's tree (fetch, check out
the remote's tip, edit, commit, push) beside the way relay used to publish, in the
person's clone (pull --rebase, edit, commit, push), measured in the same run.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from relay.commands import demo as d
from relay.edges.git import Clone
from relay.edges.relay_tree import RelayTree

RUNS = 15
PATH = Path("docs/loop/bench.md")


def _append(n: int) -> Callable[[str | None], str]:
    return lambda old: (old or "") + f"line {n}\n"


def timed(publish: Callable[[int], None]) -> list[float]:
    """Seconds of each of RUNS publishes."""
    out = []
    for n in range(RUNS):
        started = time.perf_counter()
        publish(n)
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    """Set up a hub and a clone, then publish both ways."""
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        root = Path(tmp)
        with d.running_hub(root / "hub", *d.NO_CONTENT_LIMIT) as hub:
            demo = d.setup(root, hub, lambda _line: None)
            os.environ["RELAY_TOKEN"] = demo.worker.token
            clone = Clone.open(demo.worker.clone)
            tree = RelayTree(clone)

            def via_tree(n: int) -> None:
                tree.publish({PATH: _append(n)}, f"tree {n}", branch="main")

            def in_clone(n: int) -> None:
                clone.pull_rebase()
                full = clone.root / PATH
                full.parent.mkdir(parents=True, exist_ok=True)
                full.write_text(_append(n)(full.read_text() if full.is_file() else None))
                clone.commit_and_push_or_undo([full], f"clone {n}")

            own = timed(via_tree)
            old = timed(in_clone)
    ratio = statistics.median(own) / statistics.median(old)
    print(
        f"publish one edit from relay's tree (median of {RUNS}): {statistics.median(own):.3f} s;"
        f" in the person's clone: {statistics.median(old):.3f} s (tree = {ratio:.2f}x)"
    )


if __name__ == "__main__":
    main()
