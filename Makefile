# Two commands for a fresh machine:  `make book`  and  `make test`  (see README.md).
PYTHON ?= python3
# The CPU build of torch lies on this project's machines' disk; install it first so that nothing
# below pulls a multi-GB CUDA build. Elsewhere, take the CPU build from PyTorch's index:
#   PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu make book TORCH="torch==2.13.0+cpu"
TORCH ?= torch==2.13.0
PROFILE ?= full
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := constraints.txt
LOCK_VENV := .venv-lock
ASSETS := book/_offline/static/offline/vendor/VERSIONS
# local: the pages load MathJax and the widget manager from the book (reads offline; what make test
# checks); cdn: from public CDNs (Sphinx's and myst-nb's defaults).
BOOK_ASSETS ?= local
export PATH := $(abspath $(BIN)):$(PATH)
export HF_HUB_OFFLINE := 1
# Python writes its bytecode caches (__pycache__) on a module's first import, so every later process
# (a test worker, a notebook's kernel, a subprocess a test starts) loads torch compiled instead of
# compiling it again, about 2.5 s of CPU a process. This project's machines set PYTHONDONTWRITEBYTECODE;
# with it, and with the install's --no-compile below, every process compiled torch anew: a fresh
# clone's unit tests took 786 s against 382 s. Nothing make runs inherits it.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup assets book test unit notebooks book-check browser batch bench compat clean student lock

setup: $(STAMP) $(if $(filter cdn,$(BOOK_ASSETS)),,$(ASSETS))

# MathJax, require.js and the ipywidgets manager, fetched from the npm registry (with npm) so that
# the built book serves them itself and reads offline (book/_offline/offline_assets.py, _config.yml).
# Without npm on PATH, fetch.sh installs Node.js and npm from PyPI into .venv (no root needed).
assets: $(ASSETS)
$(ASSETS): book/_offline/fetch.sh | $(STAMP)
	VENV_PYTHON=$(BIN)/python bash book/_offline/fetch.sh

# Installs from the lock, constraints.txt: the exact versions `make test` passed with (see `lock`).
# --no-compile: pip would byte-compile every module of every package (torch's thousands among them),
# most never imported; Python compiles the ones a run imports, once, on first import (see
# PYTHONDONTWRITEBYTECODE above). Measured one
# after the other on one of this project's 2-core machines, busy with other work: torch 67 s -> 26 s,
# the rest 302 s -> 119 s.
$(STAMP): requirements.txt pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -c "import torch" 2>/dev/null || $(BIN)/python -m pip install -q --no-compile -c $(LOCK) "$(TORCH)"
	$(BIN)/python -m pip install -q --no-compile -c $(LOCK) -r requirements.txt
	touch $(STAMP)

# Refresh the lock: re-resolve requirements.txt in a fresh venv, without the old lock, and write
# what it installed (torch aside: TORCH above installs it) to constraints.txt, keeping its header.
# Then `make test` (which reinstalls .venv from the new lock) and commit constraints.txt.
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install -q "$(TORCH)"
	$(LOCK_VENV)/bin/python -m pip install -q -r requirements.txt
	{ grep '^#' $(LOCK) | sed "1s/(Python [^,]*,/(Python $$($(LOCK_VENV)/bin/python -c \
	    'import platform; print(platform.python_version())'),/"; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable | grep -v -E '^(#|-e |torch==|nvidia-|triton==)'; \
	} > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf $(LOCK_VENV)
	@echo "lock: wrote $(LOCK); now run make test, then commit it"

# The online book: pages draw the committed full-profile results (never retraining full-scale
# models); a chapter without stored full results is computed at the default profile and says so.
book: setup
	BOOK_ASSETS=$(BOOK_ASSETS) MODLIB_PROFILE=full MODLIB_FULL_FROM_STORE=1 TQDM_DISABLE=1 \
	    $(BIN)/jupyter-book build . -W -n --keep-going
	@echo "book: $(abspath _build/html/index.html)"

# Everything: unit tests, every notebook at the smoke profile (chapter 1's in the unit tests), the book build (offline assets), and
# the built pages read in headless Chromium with no network (screenshots in _build/screenshots/).
# The tests and the notebooks run on every core (pytest-xdist, WORKERS processes), each test file and
# each notebook whole on one worker (module fixtures, a notebook's kernel), with one torch thread per
# worker: two threads per worker on two cores make small models many times slower. The browser checks
# of one page run on one worker (tests/test_book.py: by_page), each worker with its own Chromium. Two notebooks
# that need the same result share it: one computes it, the other waits (modlib.results.fetch).
# Whole files are handed out in collection order, longest first (conftest.py: SLOWEST_FIRST);
# --no-loadscope-reorder keeps pytest-xdist from sorting them by their number of tests instead.
WORKERS ?= auto
PARALLEL := -n $(WORKERS) --dist loadfile --no-loadscope-reorder
# The notebooks at smoke. Chapter 1's is left out here: tests/test_outside_repo.py runs its whole
# notebook at smoke (papermill, failing on any cell's error, as --nbval-lax does), outside the
# repository, against the installed package.
NOTEBOOKS_AT_SMOKE := notebooks --ignore=notebooks/student --ignore=notebooks/redundant_input_toy.ipynb
# Each phase prints its wall time ("make test: <phase>: N s"; the aim is 15 minutes in all).
timed = start=$$(date +%s); $(1); status=$$?; echo "make test: $(2): $$(( $$(date +%s) - start )) s"; exit $$status
test: setup browser
	@$(call timed,OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q $(PARALLEL) tests -m "not book",unit tests)
	@$(call timed,OMP_NUM_THREADS=1 MODLIB_PROFILE=smoke $(BIN)/python -m pytest -q $(PARALLEL) --nbval-lax \
	    --nbval-current-env --nbval-cell-timeout=300 $(NOTEBOOKS_AT_SMOKE),notebooks at smoke)
	@$(call timed,$(MAKE) book BOOK_ASSETS=local,book build)
	@$(call timed,$(BIN)/python -m pytest -q -rs -n $(WORKERS) --dist loadgroup tests -m book,browser checks)

# Chromium for the browser checks: installed with apt-get where we are root; elsewhere, if it is
# missing, the browser checks are skipped with a note (set CHROMIUM=/path/to/chrome to use another
# one), except under CI=true, where they are required.
browser:
	@if [ -n "$$CHROMIUM" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	    || command -v google-chrome >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	    && apt-get update -qq && apt-get install -y -qq chromium >/dev/null; then echo "browser: installed chromium"; \
	elif [ "$$CI" = true ]; then echo "browser: Chromium is missing and could not be installed; CI=true requires the browser checks" >&2; exit 1; \
	else echo "browser: Chromium is missing and could not be installed (that needs root and apt-get):"; \
	    echo "         make test runs everything else and SKIPS the browser checks of the built book"; fi

# Run notebooks in batch with papermill (skips current ones, resumes after an interruption).
batch: setup
	$(BIN)/python -m modlib.batch --profile $(PROFILE) $(NOTEBOOKS)

# The student edition of every notebook (solutions replaced by their stubs, outputs cleared) in
# notebooks/student/, which the book links to for Colab; tests/test_student.py checks it is current.
student: setup
	$(BIN)/python -m modlib.student

bench: setup
	$(BIN)/python benchmarks/bench.py

# One corner of the supported versions (README, "Supported versions") in a venv of its own: the unit
# tests and every notebook at the smoke profile. For example
#   make compat PY=python3.12 TORCH="torch==2.11.*" TRANSFORMERS="transformers==5.17.*"
# PyPI's torch for Linux is a CUDA build of several GB; it runs on a CPU too.
PY ?= $(PYTHON)
TRANSFORMERS ?= transformers==5.23.*
COMPAT := .venv-compat
compat:
	rm -rf $(COMPAT)
	$(PY) -m venv $(COMPAT)
	$(COMPAT)/bin/python -m pip install -q "$(TORCH)" "$(TRANSFORMERS)" -r requirements.txt
	$(COMPAT)/bin/python -c "import sys, torch, transformers; print('compat: Python', sys.version.split()[0], \
	    '| torch', torch.__version__, '| transformers', transformers.__version__)"
	$(COMPAT)/bin/python -m pytest -q tests -m "not book"
	MODLIB_PROFILE=smoke MODLIB_RESULTS=$(abspath $(COMPAT))/results $(COMPAT)/bin/python -m pytest -q \
	    --nbval-lax --nbval-current-env --nbval-cell-timeout=300 --ignore=notebooks/student notebooks

clean:
	rm -rf _build notebooks/results/smoke notebooks/results/default
