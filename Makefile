# Every target creates the virtual environment it needs, so a fresh machine with Python 3.11 is enough.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8765

.PHONY: run check test test-fast test-repeat bench clean

$(BIN)/iac-code: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,checkov]'
	touch $@

# The main job: the ACP server (HTTP+SSE and WebSocket at /acp, the web client at /) on 127.0.0.1:8765 (offline demo model when none is configured).
# Another address: make run PORT=9090 (HOST too).
# It says first where the command is: make installs it in .venv, which is not on PATH.
run: $(BIN)/iac-code
	@echo "iac-code is $(CURDIR)/$(BIN)/iac-code: run it by that path, or put it on PATH with"
	@echo "    export PATH=\"$(CURDIR)/$(BIN):\$$PATH\"    (or install it as a tool: pipx install .)"
	$(BIN)/iac-code acp --transport http --host $(HOST) --port $(PORT)

# Lint, format and type checks, then the layers (all configured in pyproject.toml); `make test` runs them first.
check: $(BIN)/iac-code
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# The suite runs on every core (pytest-xdist): each test file on one worker, so a module's shared agent, server
# or browser starts once. WORKERS=1 runs it in one process, in order.
WORKERS ?= auto
PARALLEL := -n $(WORKERS) --dist loadfile

# The whole suite; the 20 slowest tests and the seconds per test group close every run, so that growth is seen
# the day it happens.
test: check
	$(BIN)/python -m pytest -q $(PARALLEL) --durations=20

# A developer's inner loop: the unit tests only (in-process, no browser, no cluster).
test-fast: $(BIN)/iac-code
	$(BIN)/python -m pytest -q $(PARALLEL) tests/unit

# A guard against new flakes: runs the tests T (pytest node ids or paths) N times, stopping at the first failure;
# LOAD=2 keeps two busy loops running meanwhile (a loaded machine, as CI's can be).
# New e2e tests are run 5 times before they land: make test-repeat T=tests/e2e/web/test_token.py N=5 LOAD=2
N ?= 5
LOAD ?= 0
test-repeat: $(BIN)/iac-code
	@test -n "$(T)" || { echo "make test-repeat: name the tests, e.g. T=tests/e2e/web/test_token.py" >&2; exit 2; }
	@busy=""; for j in $$(seq 1 $(LOAD)); do sh -c 'while :; do :; done' & busy="$$busy $$!"; done; \
	trap 'kill $$busy 2>/dev/null' EXIT; \
	for i in $$(seq 1 $(N)); do echo "run $$i of $(N)"; $(BIN)/python -m pytest -q $(T) || exit 1; done

bench: $(BIN)/iac-code
	for f in bench/*.py; do $(BIN)/python $$f; done

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
