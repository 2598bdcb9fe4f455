# One name per habit; CI (.ci/run) runs the same targets a developer runs.
#   make venv        create .venv with kenning (editable) and the test tools
#   make check       lint + format check + typecheck + tests (what CI runs for Python)
#   make fmt         apply ruff's formatter and the safe lint fixes
#   make fmt-editors prettier (TypeScript) and StyLua (Lua); make lint-editors checks them
#   make test-e2e    the real-editor end-to-end tests (real VS Code via code-server; real Neovim)
#   make bench-smoke the benchmark suite's quick self-check
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?= -q

.PHONY: venv lint fmt fmt-editors lint-editors typecheck test test-e2e bench-smoke check vscode

venv:
	python3 -m venv $(VENV) && $(VENV)/bin/pip install -q -e '.[test]'

lint:
	$(VENV)/bin/ruff check
	$(VENV)/bin/ruff format --check

fmt:
	$(VENV)/bin/ruff check --fix
	$(VENV)/bin/ruff format

fmt-editors:
	cd editors/vscode && npm ci --no-audit --no-fund && npm run format
	cd editors/neovim && npm ci --no-audit --no-fund && npm run format

lint-editors:
	cd editors/vscode && npm ci --no-audit --no-fund && npm run format:check
	cd editors/neovim && npm ci --no-audit --no-fund && npm run format:check

typecheck:
	$(VENV)/bin/mypy

test:
	$(VENV)/bin/pytest $(PYTEST_ARGS)

test-e2e:
	$(VENV)/bin/pytest $(PYTEST_ARGS) tests/test_neovim.py
	bash .ci/vscode-e2e

bench-smoke:
	$(PY) -m bench --smoke --output /tmp/kenning-bench-smoke.md

vscode:
	cd editors/vscode && npm ci --no-audit --no-fund && npm run typecheck && npm test && npm run package

check: lint typecheck test
