# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# `make run` keeps its data here unless PASTURE_HOME says otherwise.
RUN_HOME ?= $(if $(PASTURE_HOME),$(PASTURE_HOME),$(CURDIR)/.pasture)

.PHONY: run test test-quick lint typecheck pytest bench bench-quick system-deps clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,postgres]'
	touch $@

venv: $(VENV)/.installed

# The server with the example apps on an embedded SQLite, on 127.0.0.1:8000.
run: $(VENV)/.installed
	PASTURE_HOME=$(RUN_HOME) $(PY) -m pasture demo --examples examples

system-deps:
	bash scripts/system-deps.sh

test: $(VENV)/.installed system-deps lint typecheck pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/ruff format --check src tests benchmarks scripts

typecheck: $(VENV)/.installed
	$(VENV)/bin/mypy

# The tests run side by side in this many processes (pytest-xdist). Most of a test's time is
# spent waiting on another process (a server, a worker, a browser), so more than the cores help.
TEST_WORKERS ?= 3

pytest: $(VENV)/.installed
	$(VENV)/bin/pytest -n $(TEST_WORKERS)

# The edit-test loop: every test that runs in the test's own processes — no Chromium, no
# PostgreSQL, no process of pasture's own (tests/README.md). Three workers suit it best here.
test-quick: $(VENV)/.installed
	$(VENV)/bin/pytest -n 3 -m "not postgres and not browser and not processes"

# The servers pasture is measured against come with the `bench` extra.
$(VENV)/.bench: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[bench,dev,postgres]'
	touch $@

BENCHES := mcp peers serving live worker startup fuzz transfer backup history

# The store at three sizes on both databases (a throwaway PostgreSQL), then the rest.
STORE_SIZES := 10000,100000,1000000

bench: $(VENV)/.bench system-deps
	$(PY) benchmarks/store.py --sizes $(STORE_SIZES)
	$(PY) benchmarks/store.py --postgres --sizes $(STORE_SIZES)
	@for b in $(BENCHES); do $(PY) benchmarks/$$b.py || exit 1; done

# Every benchmark made small, for a look while working (a few minutes at most).
bench-quick: $(VENV)/.bench
	$(PY) benchmarks/store.py --quick
	$(PY) benchmarks/mcp.py --quick
	$(PY) benchmarks/peers.py --quick
	$(PY) benchmarks/serving.py --quick
	$(PY) benchmarks/live.py --quick
	$(PY) benchmarks/worker.py --calls 100 --rounds 2
	$(PY) benchmarks/startup.py --runs 5
	$(PY) benchmarks/fuzz.py --quick
	$(PY) benchmarks/transfer.py --quick
	$(PY) benchmarks/backup.py --quick
	$(PY) benchmarks/history.py --quick

clean:
	rm -rf $(VENV) .pasture .pytest_cache .mypy_cache .ruff_cache
