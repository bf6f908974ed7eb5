# Every target creates and reuses .venv, so a fresh clone needs nothing but python3 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint lint-workflows typecheck unit bench soak tools clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The scheduler tests drive the real crontab (Debian's cron package provides it); the page
# tests read the hub's pages in a real headless browser (Debian's chromium). Installed
# when missing, as root on Linux; elsewhere the tests that need them say how and skip.
tools:
	@command -v crontab >/dev/null || [ "$$(uname)" != Linux ] || \
	  { (apt-get update -qq && apt-get install -y -qq cron) >/dev/null 2>&1 || \
	    echo "make: could not install cron; install it (apt-get install cron) and re-run"; }
	@command -v chromium >/dev/null || [ "$$(uname)" != Linux ] || [ "$$(id -u)" != 0 ] || \
	  { (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || \
	    echo "make: could not install chromium; install it (apt-get install chromium) and re-run"; }
	@command -v chromium >/dev/null || [ "$$(uname)" != Linux ] || [ "$$(id -u)" = 0 ] || \
	  echo "make: chromium is missing and this is not root: the page tests will be skipped"

demo: $(STAMP)
	$(BIN)/relay demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

lint-workflows: $(STAMP)
	$(BIN)/actionlint .github/workflows/*.yml
	$(BIN)/zizmor --offline --persona=pedantic .github/workflows/

typecheck: $(STAMP)
	$(BIN)/mypy

# Test files run in parallel (one worker a core by default; a file's tests stay together so
# its module fixtures, such as a hub, start once).
PYTEST_WORKERS ?= auto

unit: $(STAMP) tools
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile

test: lint lint-workflows typecheck unit

bench: $(STAMP)
	$(BIN)/python -m bench

# relay left alone: 20 jobs of 5 TASKs, 3 workers with 2 watchers each, 20% faults, kills
soak: $(STAMP)
	$(BIN)/python -m bench.soak

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
