# minigrad: `make lab` to learn, `make test` to check everything. See README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
INSTRUCTOR := $(VENV)/.instructor

# jupyter refuses to start as root unless told to.
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
# Notebooks nbval checks: the stored lessons only, not the generated lessons/exercises/.
NOTEBOOKS  := $(wildcard lessons/*.ipynb)
NBVAL_ARGS := $(if $(NOTEBOOKS),$(NOTEBOOKS) --nbval --nbval-current-env \
              $(if $(wildcard lessons/sanitize.cfg),--nbval-sanitize-with lessons/sanitize.cfg))
# Student versions run too, in lax mode: outputs are not compared, and only the exercise
# and check cells (tagged raises-exception) may raise.
EXERCISES  := $(wildcard lessons/exercises/*.ipynb)
PYTEST_ARGS ?=

# Extra JupyterLab options: make lab LAB_ARGS="--port 8890 --no-browser"
LAB_ARGS ?=

# The instructor's course folder (make course makes it private: it holds the solutions and
# hidden tests), and nbgrader's exchange folder, outside it (students fetch and submit there;
# on a JupyterHub, the hub's).
COURSE   ?= course
EXCHANGE ?= $(COURSE)-exchange

.PHONY: help setup instructor site site-test graphviz browser lab test bench bench-gpu test-gpu gpu-site bench-grading fuzz-torch \
        figures exercises stubs course grade sandbox lesson-times clean

help:
	@echo "make lab        set up (.venv, dependencies, Graphviz) and open JupyterLab on lessons/"
	@echo "                (options for JupyterLab: make lab LAB_ARGS=\"--port 8890 --no-browser\")"
	@echo "make test       set up, then ruff + pytest (unit, property, kernels in the CUDA simulator) + nbval on lessons"
	@echo "make setup      only the set-up (idempotent; re-installs when pyproject.toml changes)"
	@echo "make course     an nbgrader course folder (COURSE=course) with every lesson as an assignment"
	@echo "make grade      autograde one lesson's submissions in parallel sandboxes (LESSON=03 JOBS=4)"
	@echo "make site       the course website in site/_build/html (LAB_URL=... or HUB_URL=... REPO_URL=... for open links)"
	@echo "make site-test  the website opened in headless Chromium: pages, links, images, drawings, search"
	@echo "make fuzz-torch random calls on minigrad and PyTorch side by side (new seed each run; SEED=N CALLS=N)"
	@echo "make bench | bench-gpu | test-gpu | bench-grading | figures | exercises | stubs | lesson-times | clean"

setup: $(STAMP) graphviz

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
	  { echo "error: minigrad needs Python >= 3.10; $(PYTHON) is $$($(PYTHON) -V 2>&1). Run: make PYTHON=python3.12 ..." >&2; exit 1; }
	@echo "[1/3] Creating the virtual environment .venv with $$($(PYTHON) -V 2>&1)..."
	@$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: '$(PYTHON) -m venv' failed. On Debian/Ubuntu: sudo apt-get install python3-venv" >&2; exit 1; }

# pip install -e ".[$(1)]", one line per package; on failure, say what ($(2)) failed.
COMMA := ,
define pip_install
@$(BIN)/python -m pip install --progress-bar off -e ".[$(1)]" | grep --line-buffered -E '^(Collecting|Processing|Successfully installed|ERROR)' \
  | sed -u -e 's/ (from .*//' -e 's/^Processing .*\//Collecting /' -e 's/^Collecting /      getting /' \
    -e 's/^Successfully installed .*/      done./'; \
  status=$${PIPESTATUS[0]}; [ "$$status" = 0 ] || { echo "error: pip could not install $(2) (exit $$status); the lines above say which package failed." >&2; exit 1; }
endef

# Re-install only when the package metadata changed.
$(STAMP): pyproject.toml setup.py | $(BIN)/python
	@echo "[2/3] Installing minigrad and its dependencies into .venv (NumPy, Numba, JupyterLab, ...;"
	@echo "      a few minutes the first time, one line per package)..."
	$(call pip_install,dev,the dependencies)
	@touch $@

# nbgrader and what it needs (the `instructor` extra): for make course and the grading tests.
instructor: $(INSTRUCTOR)

$(INSTRUCTOR): pyproject.toml setup.py | $(STAMP)
	@echo "[+] Installing nbgrader (the instructor extra, for grading a class)..."
	$(call pip_install,dev$(COMMA)instructor,nbgrader)
	@$(MAKE) --no-print-directory sandbox
	@touch $@

# The course as a website (issue 37): Sphinx with MyST-NB renders the stored lessons (no
# execution, no network) and the pages in site/ into site/_build/html; the source folder is
# the repository, the settings site/conf.py. The `site` extra holds the generator.
# "Open in JupyterLab" links appear only when an address is given: LAB_URL, a template with
# {path} (e.g. http://localhost:8888/lab/tree/{path}), or HUB_URL and REPO_URL (and
# REPO_BRANCH, default main) for nbgitpuller links that clone the course on a JupyterHub.
SITE_OUT := site/_build/html
SITE_STAMP := $(VENV)/.site
site: $(SITE_STAMP)
	MINIGRAD_LAB_URL='$(LAB_URL)' MINIGRAD_HUB_URL='$(HUB_URL)' MINIGRAD_REPO_URL='$(REPO_URL)' \
	  MINIGRAD_REPO_BRANCH='$(or $(REPO_BRANCH),main)' \
	  $(BIN)/sphinx-build -q -W --keep-going -b html -d site/_build/doctrees -c site . $(SITE_OUT)
	@echo "The site is in $(SITE_OUT): open index.html, or serve it with"
	@echo "  python3 -m http.server --directory $(SITE_OUT) 8000   (then http://localhost:8000)"

# The built site opened in headless Chromium (site/browser_check.py): every page, its links,
# images, drawings and console, a search, and screenshots in site/_build/screenshots.
site-test: site browser
	$(BIN)/python site/browser_check.py $(SITE_OUT) --screenshots site/_build/screenshots

$(SITE_STAMP): pyproject.toml setup.py | $(STAMP)
	@echo "[+] Installing Sphinx, MyST-NB and sphinx-book-theme (the site extra)..."
	$(call pip_install,dev$(COMMA)site,the site generator)
	@touch $@

# bubblewrap (`bwrap`), the sandbox each graded submission runs in (grading/sandbox.py).
sandbox:
	@command -v bwrap >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "[+] Installing bubblewrap with apt-get (the sandbox for grading)..."; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null 2>&1 || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null; }; } \
	    || { echo "error: apt-get could not install bubblewrap" >&2; exit 1; }; \
	else \
	  echo "note: bubblewrap (bwrap) is missing: autograding will refuse to run until it is installed" >&2; \
	  echo "  (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap)." >&2; \
	fi

# Chromium, for tests/test_feedback_browser.py (feedback and formgrader pages opened in a
# headless browser): installed with apt-get as root; elsewhere that test skips. Not in
# apt.txt, the list learners get.
browser:
	@{ command -v chromium || command -v chromium-browser || command -v google-chrome; } \
	  >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "[+] Installing Chromium with apt-get (for the browser test of feedback pages)..."; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  { apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; } \
	    || { echo "error: apt-get could not install chromium" >&2; exit 1; }; \
	else \
	  echo "note: no chromium, chromium-browser or google-chrome on PATH: the browser test of" >&2; \
	  echo "  feedback pages will skip (Debian/Ubuntu: sudo apt-get install chromium)." >&2; \
	fi

# The `dot` binary the graphviz Python package drives (Debian package list in apt.txt).
graphviz:
	@command -v dot >/dev/null 2>&1 && { echo "[3/3] Graphviz is installed ($$(dot -V 2>&1))."; exit 0; }; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "[3/3] Installing Graphviz with apt-get ($$(tr '\n' ' ' < apt.txt))..."; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$(grep -v '^\s*#' apt.txt) >/dev/null \
	    || { echo "error: apt-get could not install Graphviz" >&2; exit 1; }; \
	else \
	  echo "error: the Graphviz 'dot' program is missing. Install it, then run make again:" >&2; \
	  echo "  Debian/Ubuntu: sudo apt-get install graphviz" >&2; \
	  echo "  macOS:         brew install graphviz" >&2; \
	  echo "  conda:         conda install -c conda-forge graphviz" >&2; \
	  exit 1; \
	fi

# Server root is the repository (so lessons can show ../figures/), opened on lessons/. The
# notebooks run on the "python3" kernel, which is this .venv's Python when its jupyter starts.
# Without an NVIDIA GPU the CUDA kernels run in Numba's simulator, as in lesson 08; a
# NUMBA_ENABLE_CUDASIM you set yourself wins (make lab NUMBA_ENABLE_CUDASIM=0).
lab: setup
	@if [ -z "$${NUMBA_ENABLE_CUDASIM+set}" ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then \
	  echo "No NVIDIA GPU found: CUDA kernels will run in Numba's simulator (NUMBA_ENABLE_CUDASIM=1)."; \
	  export NUMBA_ENABLE_CUDASIM=1; \
	fi; \
	echo "Starting JupyterLab on lessons/ (the notebooks run on .venv's Python; Ctrl-C stops it)..."; \
	exec $(BIN)/jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/lessons $(ALLOW_ROOT) $(LAB_ARGS)

# Kernels run in Numba's CUDA simulator unless told otherwise (make test NUMBA_ENABLE_CUDASIM=0).
# One BLAS/OpenMP thread per test worker: pytest -n auto already uses every core, and
# PyTorch's (and OpenBLAS's) own threads on top of it only fight over them.
test: export NUMBA_ENABLE_CUDASIM ?= 1
test: export OMP_NUM_THREADS ?= 1
test: export OPENBLAS_NUM_THREADS ?= 1
test: setup $(INSTRUCTOR) $(SITE_STAMP) sandbox browser
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n auto --dist loadfile tests $(NBVAL_ARGS) $(PYTEST_ARGS)
	$(if $(EXERCISES),$(BIN)/python -m pytest -q -n auto --dist loadfile $(EXERCISES) \
	  --nbval-lax --nbval-current-env $(PYTEST_ARGS))
	@if { command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1; \
	then $(MAKE) --no-print-directory site-test; \
	else echo "SKIPPED: the website's browser test (make site-test) needs Chromium: sudo apt-get install chromium"; fi

# NumPy's BLAS on one thread, as PyTorch is (benchmarks/mlp.py), so that the ratios compare
# one core with one core.
bench: export OPENBLAS_NUM_THREADS = 1
bench: export OMP_NUM_THREADS = 1
bench: setup
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/where_time_goes.py
	$(BIN)/python benchmarks/cnn.py
	$(BIN)/python benchmarks/gpt.py
	$(BIN)/python benchmarks/rnn.py
	$(BIN)/python benchmarks/real_loops.py
	$(BIN)/python benchmarks/outside_loops.py --quick
	-$(BIN)/python benchmarks/fuzz_torch.py

# The same random calls on minigrad and PyTorch (needs torch): leaks and silent divergences,
# with a new seed each run unless SEED is given (also part of `make bench`, ~10 s).
CALLS ?= 10000
fuzz-torch: setup
	$(BIN)/python benchmarks/fuzz_torch.py --calls $(CALLS) $(if $(SEED),--seed $(SEED))

# On a machine with an NVIDIA GPU (CUDA 13 driver): the kernels against cuBLAS (through
# CuPy, when installed) and against the device's copy bandwidth. Never part of `make test`.
# Where $(PYTHON) already has numba-cuda (a GPU image with no network, say), nothing is
# downloaded: minigrad is built into $(GPU_SITE) with that Python and run from there.
# Otherwise .venv gets the gpu extra from PyPI.
GPU_SITE := .gpu-site
GPU_SIM  ?= 0
GPU_RUN   = PYTHONSAFEPATH=1 PYTHONPATH=$(abspath $(GPU_SITE)) NUMBA_ENABLE_CUDASIM=$(GPU_SIM) $(PYTHON)
HAS_NUMBA_CUDA = $(PYTHON) -c 'import numba_cuda, numpy' 2>/dev/null

bench-gpu:
	@if $(HAS_NUMBA_CUDA); then \
	  $(MAKE) --no-print-directory gpu-site && $(GPU_RUN) benchmarks/gpu.py $(BENCH_ARGS); \
	else \
	  $(MAKE) --no-print-directory setup && $(BIN)/pip install -q -e ".[gpu]" && \
	  NUMBA_ENABLE_CUDASIM=0 $(BIN)/python benchmarks/gpu.py $(BENCH_ARGS); \
	fi

# The kernel tests on the GPU itself (make test runs them in the simulator).
GPU_TESTS := tests/test_kernels.py tests/test_device.py
test-gpu:
	@if $(HAS_NUMBA_CUDA); then \
	  $(MAKE) --no-print-directory gpu-site && \
	  $(GPU_RUN) -m pytest -q -p no:cacheprovider $(GPU_TESTS) $(PYTEST_ARGS); \
	else \
	  $(MAKE) --no-print-directory setup $(INSTRUCTOR) && $(BIN)/pip install -q -e ".[gpu]" && \
	  NUMBA_ENABLE_CUDASIM=0 $(BIN)/python -m pytest -q $(GPU_TESTS) $(PYTEST_ARGS); \
	fi

# minigrad (with kernels/ as minigrad.kernels) built for $(PYTHON), offline, no dependencies.
# PYTHONSAFEPATH keeps the source folder minigrad/ (which has no kernels/) off sys.path.
gpu-site:
	@echo "Building minigrad into $(GPU_SITE) for $$($(PYTHON) -c 'import sys; print(sys.executable)')" \
	  "(numba-cuda $$($(PYTHON) -c 'import numba_cuda; print(numba_cuda.__version__)'), offline)..."
	@rm -rf $(GPU_SITE) build
	@$(PYTHON) -m pip install -q --no-deps --no-index --no-build-isolation --target $(GPU_SITE) . \
	  || { echo "error: $(PYTHON) could not build minigrad offline (it needs setuptools)." >&2; exit 1; }

# The README's figures and the backward-step strip, drawn by minigrad.viz (needs `dot`).
figures: setup
	$(BIN)/python figures/make_figures.py

# Grading 30 submissions of one lesson with nbgrader, against the lesson's own run time.
bench-grading: setup $(INSTRUCTOR)
	NUMBA_ENABLE_CUDASIM=1 PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python benchmarks/grading.py

# The instructor's course folder: every lesson as an nbgrader assignment, generated.
# Then, in $(COURSE): nbgrader release_assignment NN_name, collect, autograde, ... (README).
course: setup $(INSTRUCTOR) sandbox
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m minigrad.course.grading.make_course \
	  $(COURSE) --exchange $(EXCHANGE) $(if $(LESSONS),--lessons $(LESSONS))

# Autograde one lesson's collected submissions, JOBS at a time, each in its own sandbox
# (site/teaching.md, "Teaching a class"): make grade LESSON=03 JOBS=4 [STUDENT=id] [FORCE=1] [UNSAFE=1]
JOBS ?= 2
grade: setup $(INSTRUCTOR) sandbox
	@test -n "$(LESSON)" || { echo "error: say which lesson to grade, e.g. make grade LESSON=03" >&2; exit 1; }
	@if [ -z "$${NUMBA_ENABLE_CUDASIM+set}" ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then \
	  export NUMBA_ENABLE_CUDASIM=1; fi; \
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m minigrad.course.grading.grade $(COURSE) $(LESSON) \
	  --jobs $(JOBS) $(if $(STUDENT),--student $(STUDENT)) $(if $(FORCE),--force) $(if $(UNSAFE),--unsafe)

# Editors' stubs: minigrad/core/variable.pyi and minigrad/__init__.pyi (a test fails when
# they are stale; run after adding an op).
stubs: setup
	$(BIN)/python -m minigrad.ops.tooling.stub

# Student versions of the lessons into lessons/exercises/ (a test fails when they are stale).
exercises: setup
	$(BIN)/python -m minigrad.course.make_exercises lessons

# Each lesson's time top to bottom in a fresh kernel (budget 30 s on 2 cores) and its slow cells.
lesson-times: setup
	NUMBA_ENABLE_CUDASIM=1 $(BIN)/python benchmarks/lesson_times.py

clean:
	rm -rf $(VENV) $(GPU_SITE) build dist *.egg-info .pytest_cache .ruff_cache .hypothesis site/_build
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -name .ipynb_checkpoints -type d -prune -exec rm -rf {} +
