PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make demo` installs only what the demo needs (the `demo` extra), under its own stamp; a venv
# that `make test` already filled has it all, so the demo install is then a quick no-op.
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test lint typecheck pytest docs docs-serve bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

$(DEMO_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python -m hydrangea demo

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy --strict src tests

pytest: $(STAMP)
	$(BIN)/pytest

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

test: lint typecheck pytest docs

bench:
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis site
