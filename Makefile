# Two commands do all set-up on a fresh machine: `make run` and `make test`.
# Both create the virtualenv .venv and install the project with pinned versions first.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
ARGS ?=

.PHONY: screenshots run simulate test lint bench install clean up down

$(BIN)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --constraint constraints.txt --editable '.[dev]'
	touch $@

install: $(BIN)/.installed

run: $(BIN)/.installed
	$(BIN)/patrician serve $(ARGS)

simulate: $(BIN)/.installed
	$(BIN)/patrician simulate --games 200 --seats 4 --edition towers $(ARGS)

test: $(BIN)/.installed
	$(BIN)/pytest -n 2 $(ARGS)

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(BIN)/.installed
	$(BIN)/python bench/playouts.py
	$(BIN)/python bench/store.py
	$(BIN)/python bench/server.py
	$(BIN)/python bench/bots.py
	$(BIN)/python bench/analysis.py
	$(BIN)/python bench/workers.py
	$(BIN)/python bench/push.py
	$(BIN)/python bench/web.py
	$(BIN)/python bench/audit.py
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/load.py --games 50 --drills

# The pictures of the README and docs/web.md, taken again (docs/screenshots/take.py).
screenshots: $(BIN)/.installed
	$(BIN)/python docs/screenshots/take.py

# The whole stack in the background (deploy/Procfile under honcho: Redis, the API processes,
# the followers, the job worker; settings in $(STACK_ENV)); `make down` stops it.
STACK_ENV ?= deploy/stack.env

up: $(BIN)/.installed
	$(BIN)/python deploy/stack.py up --env $(STACK_ENV)

down: $(BIN)/.installed
	$(BIN)/python deploy/stack.py down --env $(STACK_ENV)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
