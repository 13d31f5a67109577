# The two commands of the README:
#   make demo   install what is missing, build, run the demo
#   make test   install what is missing, build, run every test suite
# Everything else here is a step of those two.

VENV      := .venv
PY        := $(VENV)/bin/python
APT_PKGS  := libmlir-22-dev mlir-22-tools llvm-22-dev clang-format-22
PIP_PKGS  := torch==2.13.0 pybind11==3.1.0 scikit-build-core==1.1.2 lit==23.1.5 ninja \
             numpy pytest ruff
# test-only dependencies (tests/test_zoo.py builds Hugging Face architectures from their configs)
TEST_PKGS := transformers==5.18.0
JOBS      ?= 2
export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)
export PATH := $(CURDIR)/$(VENV)/bin:/usr/lib/llvm-22/bin:$(PATH)

.PHONY: demo test deps build generate check-generated lint test-python test-lit coverage opinfo fuzz bench

demo: build
	$(PY) examples/demo.py

test: build check-generated lint test-lit test-python

deps: $(VENV)/.deps-stamp

$(VENV)/.deps-stamp: Makefile
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check $(PIP_PKGS)
	touch $@

# scikit-build-core builds in build/<wheel tag>/ and keeps it, so rebuilds are incremental.
build: deps
	$(PY) -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e .

generate: deps
	$(PY) optable/generate.py

check-generated: deps
	$(PY) optable/generate.py --check

CXX_SOURCES = $(shell git ls-files 'csrc/*.cpp' 'csrc/*.h' 'mlir/*.cpp' 'mlir/*.h' | grep -v generated)

lint: deps
	$(VENV)/bin/ruff check python tests optable benchmarks examples
	clang-format-22 --dry-run --Werror $(CXX_SOURCES)

test-lit: build
	$(VENV)/bin/lit -sv mlir/test

# The run records which aten ops each passing test captured (tests/conftest.py); the
# dtypes/tests columns of docs/ops.md (optable/coverage.json) must all be seen again.
test-python: build
	mkdir -p build
	$(PY) -m pip install -q --disable-pip-version-check $(TEST_PKGS)
	POPTORCH_COVERAGE=build/op-coverage.json $(PY) -m pytest -q tests
	$(PY) optable/generate.py --coverage build/op-coverage.json

# Rewrites optable/coverage.json (and docs/ops.md) from a full test run.
coverage: build
	mkdir -p build
	$(PY) -m pip install -q --disable-pip-version-check $(TEST_PKGS)
	POPTORCH_COVERAGE=build/op-coverage.json $(PY) -m pytest -q tests
	$(PY) optable/generate.py --update-coverage build/op-coverage.json

# Runs torch's OpInfo database through inferenceModel, all samples (tests/opinfo/sweep.py),
# and rewrites tests/opinfo/expected.json, the recorded outcome of every (op, dtype).
opinfo: build
	mkdir -p build
	$(PY) tests/opinfo/sweep.py --dtypes float32,int64,bool --jobs $(JOBS) \
	  --json build/opinfo-report.json --update-expected

# Differential fuzzing: random models through inferenceModel against eager PyTorch
# (tests/fuzz/fuzzer.py); reproducers of the failures and summary.json land in build/fuzz.
# make test runs a short fixed-seed run (tests/test_fuzz.py); this is the long run, and
# `make fuzz FUZZ_SEED=n` explores the models of another seed.
FUZZ_SEED ?= 0

fuzz: build
	mkdir -p build
	$(PY) tests/fuzz/fuzzer.py --models 10000 --seed $(FUZZ_SEED) --jobs 2 --out build/fuzz

# benchmark-only dependencies: the peers we measure against and the plot (the models are
# transformers classes: TEST_PKGS)
BENCH_PKGS := onnxruntime==1.31.1 onnx==1.23.2 openvino==2026.4.1 matplotlib==3.11.2

bench: build
	$(PY) -m pip install -q --disable-pip-version-check $(BENCH_PKGS) $(TEST_PKGS)
	$(PY) benchmarks/micro.py --json benchmarks/micro.json
	$(PY) benchmarks/lifecycle.py --json benchmarks/lifecycle.json
	$(PY) benchmarks/suite.py --json benchmarks/results.json --plot benchmarks/ratios.png
	$(PY) benchmarks/suite.py --dtype bfloat16
	$(PY) benchmarks/training.py --inductor --json benchmarks/training.json
