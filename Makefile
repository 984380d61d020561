PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint browser clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -e '.[embedded,dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/codetrial models --prepare
	$(BIN)/codetrial run

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# The report's browser test drives Debian's chromium.
browser:
	command -v chromium >/dev/null || { apt-get update && apt-get install -y chromium; }

# pytest exits 5 when it collected no tests: that is a failure here, not a pass.
test: $(STAMP) lint browser
	$(BIN)/codetrial models --prepare
	$(BIN)/python -m pytest; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

clean:
	rm -rf $(VENV) runs
