#!/bin/sh
# An example maker for `relay loop run --maker`: no AI, deterministic, and useful. It
# modernises the goal's paths with ruff's own fixes -- the pyupgrade rules (UP: `List[int]`
# becomes `list[int]`, `"{}".format(x)` an f-string, ...), import sorting (I) and unused
# imports (F401) -- then formats them with `ruff format`, and writes what changed and why
# to the file the brief names. It never commits (relay does); it exits 0 having edited
# the tree.
#
# The contract every maker follows: the brief's path is the last argument (also in
# RELAY_LOOP_BRIEF); the goal's paths are its "- This goal's paths:" line; the account of
# what changed and why goes to RELAY_LOOP_EXPLAIN (a change without one is not kept).
# Set RUFF to the command that runs ruff (default: `ruff`, else `python3 -m ruff`).
set -eu

brief=${1:-${RELAY_LOOP_BRIEF:?usage: maker.sh BRIEF (relay passes the brief as the last argument)}}
explain=${RELAY_LOOP_EXPLAIN:?relay names the file for what changed and why in RELAY_LOOP_EXPLAIN}
if [ -z "${RUFF:-}" ]; then
    if command -v ruff >/dev/null 2>&1; then RUFF=ruff; else RUFF="python3 -m ruff"; fi
fi

# the goal's paths, e.g. "- This goal's paths: `src/calc.py`, `src/util/`"; else the tree
paths=$(sed -n "s/^- This goal's paths: //p" "$brief" | tr -d '`,')
[ -n "$paths" ] || paths=.

# what ruff finds before fixing: the findings this attempt answers
# shellcheck disable=SC2086  # the paths are words on purpose
found=$($RUFF check --no-cache --select UP,I,F401 --output-format concise --exit-zero $paths |
    sed -n 's/^[^ ]*:[0-9]*:[0-9]*: \([A-Z][A-Z]*[0-9][0-9]*\) .*/\1/p' | sort | uniq -c |
    awk '{printf "%s%s x%s", sep, $2, $1; sep=", "}')

# shellcheck disable=SC2086
$RUFF check --no-cache --select UP,I,F401 --fix --quiet --exit-zero $paths >&2
# shellcheck disable=SC2086
$RUFF format --no-cache --quiet $paths

# shellcheck disable=SC2086
changed=$(git status --porcelain -- $paths | cut -c4- | tr '\n' ' ' | sed 's/ $//')
{
    echo "Ran ruff's pyupgrade (UP), import-sorting (I) and unused-import (F401) fixes and"
    echo "ruff format on: $paths."
    echo "Findings it answered: ${found:-none}. Files changed: ${changed:-none}."
    echo "Why: the goal asks for modern, formatted code there; every fix is ruff's own"
    echo "safe rewrite, so behaviour is unchanged and the gates judge the rest."
} >"$explain"
