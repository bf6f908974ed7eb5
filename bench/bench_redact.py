"""Redaction benchmark: throughput, peak memory, recall and false positives, and the peer.

A 100 MB build-and-test log (compiler output, pytest, npm, stack traces) is generated from a
seed, with secrets of every supported format sprinkled in at known lines. Relay's redactor
streams it (median of several runs, timed in wall-clock and in CPU time, since a shared
machine slows the former; and once in a subprocess for peak memory); then every
output line is checked against its input line: each planted secret must be gone (recall),
every clean line must come out byte for byte (false positives). detect-secrets, the peer,
scans a 10 MB slice of the same log in the same run, and the speed ratio is reported.

Run: ``python -m bench.bench_redact`` (or ``python -m bench`` for every benchmark).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.redact_corpus import FACTS, Corpus, write_corpus

SEED = 20261130
CORPUS_MB = int(os.environ.get("RELAY_BENCH_REDACT_MB", "100"))
PEER_SLICE_MB = 10
RUNS = 3
CHUNK = 1 << 20

# Streams the corpus through the redactor in a fresh process and prints its peak RSS in KiB:
# VmHWM where /proc has it (ru_maxrss would include the parent's size at fork).
_MEMORY_PROBE = """
import resource, sys
from bench.redact_corpus import FACTS
from relay.redact import Redactor
stream = Redactor(FACTS).open()
with open(sys.argv[1], "rb") as src:
    while chunk := src.read(1 << 20):
        stream.feed(chunk)
stream.finish()
try:
    with open("/proc/self/status") as status:
        print(next(l.split()[1] for l in status if l.startswith("VmHWM:")))
except OSError:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def redact_file(source: Path, target: Path | None) -> tuple[float, float]:
    """Stream ``source`` through the redactor into ``target``; return (wall, CPU) seconds."""
    from relay.redact import Redactor

    redactor = Redactor(FACTS, max_redacted_share=1.0)
    wall, cpu = time.perf_counter(), time.process_time()
    stream = redactor.open()
    with open(source, "rb") as src, open(target or os.devnull, "w", encoding="utf-8") as out:
        while chunk := src.read(CHUNK):
            out.write(stream.feed(chunk))
        out.write(stream.finish())
    return time.perf_counter() - wall, time.process_time() - cpu


def peak_memory_mb(source: Path) -> float:
    """Peak resident memory of a fresh process that redacts the whole corpus."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    probe = [sys.executable, "-c", _MEMORY_PROBE, str(source)]
    done = subprocess.run(probe, capture_output=True, text=True, check=True, env=env, cwd=root)
    return int(done.stdout.strip()) / 1024


def check_output(corpus: Corpus, source: Path, target: Path) -> dict[str, int]:
    """Compare input and output line by line: planted secrets gone, clean lines unchanged."""
    found = missed = changed = clean = 0
    with open(source, encoding="utf-8") as src, open(target, encoding="utf-8") as out:
        for number, (before, after) in enumerate(zip(src, out, strict=True)):
            secrets = corpus.secrets.get(number)
            if secrets is None:
                clean += 1
                changed += before != after
                continue
            for secret in secrets:
                if secret in after:
                    missed += 1
                else:
                    found += 1
    return {"found": found, "missed": missed, "clean_lines": clean, "false_positives": changed}


def peer_throughput(source: Path, slice_mb: int) -> dict[str, float]:
    """detect-secrets over the first ``slice_mb`` MB of the corpus (whole lines)."""
    from detect_secrets.core.secrets_collection import SecretsCollection
    from detect_secrets.settings import default_settings

    with tempfile.TemporaryDirectory() as tmp:
        part = Path(tmp) / "slice.log"
        with open(source, "rb") as src:
            data = src.read(slice_mb << 20)
        part.write_bytes(data[: data.rfind(b"\n") + 1])
        collection = SecretsCollection()
        wall, cpu = time.perf_counter(), time.process_time()
        with default_settings():
            collection.scan_file(str(part))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        size = part.stat().st_size / 1e6
    found = sum(len(v) for v in collection.json().values())
    return {"mb": size, "mb_per_s": size / wall, "mb_per_cpu_s": size / cpu, "found": found}


def run(workdir: Path, *, corpus_mb: int = CORPUS_MB) -> dict[str, Any]:
    """Generate, redact, check and compare; return every figure."""
    source, target = workdir / "corpus.log", workdir / "redacted.log"
    corpus = write_corpus(source, size=corpus_mb << 20, seed=SEED)
    size_mb = source.stat().st_size / 1e6
    runs = [redact_file(source, None) for _ in range(RUNS)]
    redact_file(source, target)
    checks = check_output(corpus, source, target)
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    peer = peer_throughput(source, min(PEER_SLICE_MB, corpus_mb))
    return {
        "corpus_mb": round(size_mb, 1),
        "planted_secrets": corpus.count,
        "kinds": sorted(corpus.kinds),
        "relay_mb_per_s": round(size_mb / wall, 1),
        "relay_mb_per_cpu_s": round(size_mb / cpu, 1),
        "relay_runs_wall_s": [round(r[0], 2) for r in runs],
        "peak_rss_mb": round(peak_memory_mb(source), 1),
        "recall": checks["found"] / max(1, checks["found"] + checks["missed"]),
        **checks,
        "peer": "detect-secrets",
        "peer_slice_mb": round(peer["mb"], 1),
        "peer_mb_per_s": round(peer["mb_per_s"], 3),
        "peer_mb_per_cpu_s": round(peer["mb_per_cpu_s"], 3),
        "peer_findings": int(peer["found"]),
        "speed_ratio": round(size_mb / wall / peer["mb_per_s"], 1),
        "speed_ratio_cpu": round(size_mb / cpu / peer["mb_per_cpu_s"], 1),
    }


def main() -> None:
    """Run the redaction benchmark and print its figures and verdicts."""
    with tempfile.TemporaryDirectory(prefix="relay-bench-redact-") as tmp:
        figures = run(Path(tmp))
    print("bench_redact:", json.dumps(figures, indent=2))
    # CPU-time rates too: on a machine shared with other work, wall-clock rates say more
    # about the neighbours than about the code.
    goals = {
        "recall is 100%": figures["recall"] == 1.0,
        "no false positive on clean lines": figures["false_positives"] == 0,
        "at least 50 MB/s (wall)": figures["relay_mb_per_s"] >= 50,
        "at least 50 MB/s (CPU time)": figures["relay_mb_per_cpu_s"] >= 50,
        "at least 100x detect-secrets (wall)": figures["speed_ratio"] >= 100,
        "at least 100x detect-secrets (CPU time)": figures["speed_ratio_cpu"] >= 100,
    }
    for goal, met in goals.items():
        print(f"  {'met' if met else 'MISSED'}: {goal}")


if __name__ == "__main__":
    main()
