# Every target creates and reuses .venv, so a fresh clone needs nothing but python3 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint lint-workflows typecheck unit bench soak tools clean bytecode

# `make demo` needs relay alone; the test toolchain (linters, type checker, the clients the
# hub is tested with) comes only with the targets that use it.
$(RUNTIME): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $(RUNTIME)

$(STAMP): $(RUNTIME) pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,agents]'
	touch $(STAMP)

# The scheduler tests drive the real crontab (Debian's cron package provides it); the page
# tests read the hub's pages in a real headless browser (Debian's chromium); actionlint
# checks the workflows' shell with shellcheck; the GitHub CLI (Debian's gh) is driven against
# the hub in GitHub Enterprise Server's shape. Installed when missing, as root on Linux;
# elsewhere the tests that need them say how and skip.
tools:
	@command -v crontab >/dev/null || [ "$$(uname)" != Linux ] || \
	  { (apt-get update -qq && apt-get install -y -qq cron) >/dev/null 2>&1 || \
	    echo "make: could not install cron; install it (apt-get install cron) and re-run"; }
	@command -v chromium >/dev/null || [ "$$(uname)" != Linux ] || [ "$$(id -u)" != 0 ] || \
	  { (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || \
	    echo "make: could not install chromium; install it (apt-get install chromium) and re-run"; }
	@command -v chromium >/dev/null || [ "$$(uname)" != Linux ] || [ "$$(id -u)" = 0 ] || \
	  echo "make: chromium is missing and this is not root: the page tests will be skipped"
	@command -v shellcheck >/dev/null || [ "$$(uname)" != Linux ] || [ "$$(id -u)" != 0 ] || \
	  { (apt-get update -qq && apt-get install -y -qq shellcheck) >/dev/null 2>&1 || \
	    echo "make: could not install shellcheck; install it (apt-get install shellcheck) and re-run"; }
	@command -v gh >/dev/null || [ "$$(uname)" != Linux ] || [ "$$(id -u)" != 0 ] || \
	  { (apt-get update -qq && apt-get install -y -qq gh) >/dev/null 2>&1 || \
	    echo "make: could not install gh; the gh tests will be skipped (apt-get install gh)"; }

# relay's own bytecode, written as an installed relay has it: an editable install compiles
# nothing, and where PYTHONDONTWRITEBYTECODE is set (CI images often set it) every relay
# process the demo and the tests start would compile its modules again (about 0.35 CPU-s
# a process). compileall writes whatever that variable says, and only what changed.
bytecode: $(RUNTIME)
	@$(BIN)/python -m compileall -q relay watchers schedulers >/dev/null

demo: $(RUNTIME) bytecode
	$(BIN)/relay demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# actionlint checks each `run:` script with shellcheck only when it finds one on the PATH,
# and says nothing when it does not: so a missing shellcheck fails here instead.
lint-workflows: $(STAMP) tools
	@command -v shellcheck >/dev/null || \
	  { echo "make: shellcheck is missing (apt-get install shellcheck, brew install shellcheck)"; exit 1; }
	$(BIN)/actionlint .github/workflows/*.yml
	$(BIN)/zizmor --offline --persona=pedantic .github/workflows/

typecheck: $(STAMP)
	$(BIN)/mypy

# Test files run in parallel, a file's tests together so its module fixtures (such as a hub)
# start once. Three workers: most tests wait on processes (hubs, git, watchers), so on two
# cores a third worker fills the time the others wait (measured: 9m38s against 11m06s).
PYTEST_WORKERS ?= 3
# pytest-xdist hands out files with the most tests first unless told not to: the slow
# end-to-end files (few tests each) would start last and run alone at the end; the
# suite's own order (tests/conftest.py's SLOW_FIRST) starts them first.
XDIST := -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

# The tests' own bytecode: pytest compiles every test module (and the modules of the plugins
# it rewrites, hypothesis's above all) with its asserts rewritten, and where
# PYTHONDONTWRITEBYTECODE is set each worker did it again for the whole suite (about 9 CPU-s
# a worker, 30 for a run). One collection writes them where pytest reads them, whatever that
# variable says; again only when a test file changed (pytest checks each file's own).
TEST_SOURCES := $(wildcard tests/*.py tests/*/*.py tests/*/*/*.py)
TEST_BYTECODE := $(VENV)/.tests-bytecode
$(TEST_BYTECODE): $(STAMP) $(TEST_SOURCES)
	@env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest --collect-only -q -p no:cacheprovider \
	  >/dev/null 2>&1 && touch $@ || true

# The third-party project the overnight path's end-to-end test drives (inflection, as released:
# its source distribution from the package registry), fetched by the set-up, not the test.
SDISTS := build/sdists/inflection-0.5.1.tar.gz
build/sdists/%.tar.gz: $(RUNTIME)
	@mkdir -p build/sdists
	$(BIN)/python -m pip download --quiet --disable-pip-version-check --no-deps \
	  --no-binary :all: --dest build/sdists "$$(echo $* | sed 's/-\([0-9][^-]*\)$$/==\1/')"

unit: $(STAMP) tools bytecode $(TEST_BYTECODE) $(SDISTS)
	$(BIN)/pytest $(XDIST)

test: lint lint-workflows typecheck unit

# The edit-test cycle: the pure and unit tests only (the protocol, redaction, the loop's
# decisions, the scheduler backends on stand-ins, the layer rules), no hub, no git server,
# no browser: under a minute on two cores. `make test` (and CI) still runs everything.
FAST_TESTS := tests/protocol tests/redact tests/schedulers \
	tests/loop/test_loop_decisions.py tests/loop/test_loop_guard_rules.py \
	tests/loop/test_loop_unattended_rules.py tests/loop/test_loop_spine_files.py \
	tests/loop/test_loop_roster_rules.py tests/loop/test_loop_roster_programs.py \
	tests/loop/test_loop_managed_rules.py tests/loop/test_loop_tamper_rules.py \
	tests/loop/test_loop_box_mounts.py tests/loop/test_loop_reach_rules.py \
	tests/loop/test_loop_egress_rules.py \
	tests/test_layers.py tests/test_docs_text.py tests/watchers/test_watchers_quiet.py
# within them, what runs whole processes or a long state machine waits for `make test`
SLOW_IN_FAST := tests/protocol/test_protocol_interleavings.py \
	tests/redact/test_redact_parallel.py tests/redact/test_redact_cli.py

test-fast: $(STAMP) bytecode
	$(BIN)/pytest $(XDIST) $(FAST_TESTS) \
	  $(addprefix --ignore=,$(SLOW_IN_FAST))

bench: $(STAMP) bytecode
	$(BIN)/python -m bench

# relay left alone: 20 jobs of 5 TASKs, 3 workers with 2 watchers each, 20% faults, kills
soak: $(STAMP) bytecode
	$(BIN)/python -m bench.soak

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
