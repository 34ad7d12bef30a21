# papergym: `make demo` runs every registered benchmark at the smoke tier and writes the
# leaderboard; `make test` runs the test suite. Both create .venv and install first.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
STORE  ?= results/demo.sqlite
WORKERS ?= 2

.PHONY: install test demo check lint constraints clean readme

$(STAMP): pyproject.toml setup.py constraints.txt requirements-data.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ".[test,ray]"
	$(BIN)/pip install --quiet --no-deps -c constraints.txt -r requirements-data.txt
	touch $(STAMP)

install: $(STAMP)

test: install
	$(BIN)/pytest -n $(WORKERS) -q

demo: install
	$(BIN)/papergym run --all --tier smoke --store $(STORE) --workers $(WORKERS)

check: install
	$(BIN)/papergym check --all

lint: install
	$(BIN)/ruff check .

constraints: install
	$(BIN)/pip freeze --exclude-editable | grep -v -i '^papergym' \
		| sed 's/^torch==\(.*\)+cpu$$/torch==\1/' > constraints.tmp
	{ echo "# Exact versions for reproducible results; used by the Makefile and CI (pip -c)."; \
	  echo "# Regenerate with: make constraints"; cat constraints.tmp; } > constraints.txt
	rm constraints.tmp

clean:
	rm -rf $(VENV) results build *.egg-info

readme: install
	$(BIN)/python -m papergym.readme
