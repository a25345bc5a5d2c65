# attnlab: two commands from a fresh clone.
#   make book   build the website into _build/html (sets up .venv on first use)
#   make test   run every check (sets up .venv on first use)
# Run `make help` for the rest.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
NOTEBOOKS := chapters solutions exercises
NBVAL_FLAGS := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

.PHONY: help venv book test lint format toc exercises notebooks lab bench lock clean

help:
	@echo "make book       build the website into _build/html"
	@echo "make test       run every check (lint, exercise drift, book build, pytest + nbval, browser)"
	@echo "make lab        open JupyterLab on the course"
	@echo "make exercises  regenerate exercises/ (and _toc.yml) from solutions/, then execute them"
	@echo "make notebooks  execute every changed notebook; commit text outputs only"
	@echo "make toc        regenerate _toc.yml from the chapter files"
	@echo "make bench      print the speed/memory tables in bench/"
	@echo "make format     ruff format + autofix"
	@echo "make lock       re-resolve the pins in constraints.txt"
	@echo "make clean      remove _build and caches"

# The virtual environment, rebuilt whenever the dependency list or the pins change.
$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "attnlab needs Python >= 3.10, found " + sys.version.split()[0]'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo
	@echo "The website is built. Open: file://$(CURDIR)/_build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The table of contents follows from the chapter files (tools/make_toc.py).
toc: $(STAMP)
	$(PY) tools/make_toc.py

# Exercises are generated from solutions/ (the single source), then executed so that the
# committed notebooks carry their text outputs.
exercises: toc
	$(PY) tools/make_exercises.py
	$(PY) tools/execute_notebooks.py exercises

# One executor, one cache: a notebook runs only when its code or lib/attnlab changed; the
# executed copy (with figures) stays in the book's cache, the committed file keeps text only.
notebooks: $(STAMP)
	$(PY) tools/execute_notebooks.py $(NOTEBOOKS)

test: $(STAMP)
	$(MAKE) lint
	$(PY) tools/make_toc.py --check
	$(PY) tools/make_exercises.py --check
	$(MAKE) book
	$(PY) -m pytest tests $(NOTEBOOKS) $(NBVAL_FLAGS)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=.

bench: $(STAMP)
	$(PY) bench/run_all.py

# Re-resolve every pin from the ranges in pyproject.toml (torch stays at the pinned minor).
lock:
	rm -rf _build/lockenv && $(PYTHON) -m venv _build/lockenv
	_build/lockenv/bin/pip install --quiet --upgrade pip
	_build/lockenv/bin/pip install --quiet "torch==$$(sed -n 's/^torch==//p' constraints.txt)" -e ".[dev]"
	@{ sed -n '1,/^torch==/p' constraints.txt; \
	   _build/lockenv/bin/pip freeze --exclude-editable | grep -v '^torch=='; } > constraints.new
	mv constraints.new constraints.txt && rm -rf _build/lockenv
	@git diff --stat constraints.txt || true

clean:
	rm -rf _build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
