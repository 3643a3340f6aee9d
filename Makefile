# tansaku developer loop. `make help` lists the targets.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
PORT ?= 8000
export PYTHONUTF8 := 1

.DEFAULT_GOAL := help

.PHONY: help install test test-fast test-unit lint fmt typecheck demo-build bench bench-jsquad bench-cards bench-peers bench-scale bench-analysis demo run clean

help: ## show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-11s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	./scripts/system-deps.sh
	@touch $(STAMP)

install: $(STAMP) ## create .venv and install tansaku with every extra and the dev tools

# The whole suite waits on disk, processes and servers as much as it computes: one worker more
# than the cores keeps them busy. worksteal: an idle worker takes tests queued on a busy one.
TEST_WORKERS ?= $(shell $(PY) -c 'import os; print((os.cpu_count() or 1) + 1)')

test: $(STAMP) ## run the whole test suite (unit + integration + e2e, browser, PostgreSQL) on every core
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal

test-fast: $(STAMP) ## the developer's loop: in-process tests only (no real model, browser, PostgreSQL or CLI processes), on every core
	$(BIN)/pytest -m "not integration and not e2e" -n auto --dist worksteal

test-unit: test-fast ## alias of test-fast

lint: $(STAMP) ## ruff lint + format check + the layer contracts (import-linter)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports

fmt: $(STAMP) ## format and auto-fix
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

typecheck: $(STAMP) ## mypy on the package
	$(BIN)/mypy

bench: $(STAMP) ## every retrieval config on every basket set and the cards, one table (nDCG@10 / R@10)
	$(BIN)/python bench/retrieval_basket.py --out bench/results/retrieval-basket.md

bench-jsquad: $(STAMP) ## tansaku eval on jsquad-ir alone, every metric (default, legs, fusion variants)
	$(BIN)/python bench/jsquad.py

bench-cards: $(STAMP) ## tansaku eval on the bundled card judgements only
	$(BIN)/python bench/jsquad.py examples/eval/cards.yaml --home .tansaku-bench

bench-peers: $(STAMP) ## jsquad-ir: tansaku beside whitespace/bigram BM25, e5, qdrant-client local
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(BIN)/python bench/peers.py

bench-scale: $(STAMP) ## latency, ingest, RSS and disk at 10k and 100k chunks (~20 min)
	$(BIN)/python bench/scale.py --sizes 10000 100000
	$(BIN)/python bench/scale.py --ingest-overhead

bench-analysis: $(STAMP) ## jsquad-ir error analysis, engine sweep and the merged-passage variant
	$(BIN)/python bench/jsquad_analysis.py analyze
	$(BIN)/python bench/jsquad_analysis.py sweep
	$(BIN)/python bench/jsquad_analysis.py merged
	$(BIN)/python bench/jsquad_analysis.py merged --target 520
	$(BIN)/python bench/jsquad_analysis.py check

demo: $(STAMP) ## build the demo workspace from examples/, show sample searches, then serve the web UI
	$(BIN)/tansaku demo
	$(BIN)/tansaku serve --host 127.0.0.1 --port $(PORT)

demo-build: $(STAMP) ## build the demo workspace and show sample searches (no server)
	$(BIN)/tansaku demo

run: demo ## alias of demo

clean: ## remove the demo workspace and caches (keeps .venv)
	rm -rf .tansaku .pytest_cache .ruff_cache .mypy_cache
