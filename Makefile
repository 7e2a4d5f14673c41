# `make run` and `make test` are the whole set-up: they install what is missing, build and run.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
WERROR := $(if $(CI),ON,OFF)
# CI builds from scratch: the libraries in unity batches (CMakeLists.txt), half the compile
# time; a developer's incremental build recompiles one source, not its batch.
UNITY := $(if $(CI),ON,OFF)

.PHONY: all deps configure build run test asan-build tsan-build fuzz-build sanitized-builds sanitize fuzz bench
.PHONY: fixtures clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DTENFOLD_WERROR=$(WERROR) \
	  -DTENFOLD_UNITY_BUILD=$(UNITY) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The recipe on every local device; then its curves as a PNG. TensorBoard: --logdir build/logs.
run: build
	$(BUILD_DIR)/tenfold train --save $(BUILD_DIR)/multi_device_model.h5 \
	  --history $(BUILD_DIR)/history.json --log-dir $(BUILD_DIR)/logs
	$(BUILD_DIR)/tenfold plot $(BUILD_DIR)/history.json

# Build, unit tests, slow tests, then `make sanitize fuzz`: the order and why in scripts/test.sh.
test: deps
	@BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) scripts/test.sh

# Line tables (-g1) are all a sanitizer's report needs; full debug information costs a quarter
# more compile time (tests/fuzz/run.sh's build has line tables only too). -O1: the library
# compiles in 204 CPU s against 271 at -O2. Unity batches of 16 sources, as in the fuzz build
# (fewer repeated headers and template instantiations): the library, tenfold_core and the
# threaded tests then compile in 197 CPU s.
SANITIZED_FLAGS := -O1 -g1 -DNDEBUG

# AddressSanitizer and UndefinedBehaviorSanitizer run in the clang build the fuzz targets use
# (tests/fuzz/run.sh configures it), so CI compiles the sanitized library once.
asan-build: deps
	@tests/fuzz/run.sh --configure-only
	@cmake --build build-fuzz -j $(JOBS) --target core_tests

tsan-build: deps
	@cmake -S . -B $(BUILD_DIR)-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(SANITIZED_FLAGS)" \
	  -DTENFOLD_SANITIZE=thread -DTENFOLD_WERROR=$(WERROR) -DTENFOLD_UNITY_BUILD=ON \
	  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
	@cmake --build $(BUILD_DIR)-tsan -j $(JOBS) --target threaded_tests

fuzz-build: asan-build
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_targets

# Every build `make sanitize fuzz` runs in, the two build directories side by side: the serial
# tails of one (a last unity batch, a precompiled header, links) leave cores to the other.
sanitized-builds: deps
	@$(MAKE) --no-print-directory -j 2 fuzz-build tsan-build

sanitize: asan-build tsan-build
	cd build-fuzz && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -R '^test_(core|data|datasets)$$'
	# Side by side: test_models runs on one core (one OpenMP thread there, tests/CMakeLists.txt).
	cd $(BUILD_DIR)-tsan && TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest --output-on-failure -j $(JOBS) -R '^test_(data|models|distribute)$$'

FUZZ_SECONDS ?= 20

fuzz: deps
	tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: build
	scripts/install-python-references.sh
	python3 bench/train_throughput.py --tenfold $(BUILD_DIR)/tenfold-bench-train
	python3 bench/pipeline_throughput.py --tenfold $(BUILD_DIR)/tenfold-bench-pipeline
	python3 bench/scaling.py --build $(BUILD_DIR)
	python3 bench/zoo.py --tenfold $(BUILD_DIR)/tenfold

fixtures:
	scripts/install-python-references.sh
	python3 tools/make_torch_fixtures.py
	python3 tools/make_keras_fixtures.py
	python3 tools/make_image_fixtures.py
	python3 tools/make_model_fixtures.py
	python3 tools/make_activation_fixtures.py
	python3 tools/make_loss_fixtures.py
	python3 tools/make_optimizer_fixtures.py

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR)-tsan build-fuzz
