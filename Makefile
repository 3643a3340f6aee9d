# tansaku developer loop. `make help` lists the targets.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
export PYTHONUTF8 := 1

.DEFAULT_GOAL := help

.PHONY: help install test test-unit lint fmt typecheck bench demo run clean

help: ## show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-11s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP) ## create .venv and install tansaku with every extra and the dev tools

test: $(STAMP) ## run the whole test suite (unit + integration + e2e)
	$(BIN)/pytest

test-unit: $(STAMP) ## fast unit tests only
	$(BIN)/pytest -m "not integration and not e2e"

lint: $(STAMP) ## ruff lint + format check
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

fmt: $(STAMP) ## format and auto-fix
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

typecheck: $(STAMP) ## mypy on the package
	$(BIN)/mypy

bench: $(STAMP) ## quality + speed on ../shared/data/jsquad-ir (writes docs/benchmarks.md figures)
	$(BIN)/python bench/jsquad.py --data ../shared/data/jsquad-ir

demo: $(STAMP) ## build the demo workspace from examples/ and run sample searches
	$(BIN)/tansaku demo

run: demo ## alias of demo

clean: ## remove the demo workspace and caches (keeps .venv)
	rm -rf .tansaku .pytest_cache .ruff_cache .mypy_cache
