# `make run` and `make test` are the whole set-up: they install what is missing, build and run.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
WERROR := $(if $(CI),ON,OFF)

.PHONY: all deps configure build run test bench fixtures clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DTENFOLD_WERROR=$(WERROR) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/tenfold train

# Fast unit tests first, then the slow ones (real training runs).
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L unit
	cd $(BUILD_DIR) && ctest --output-on-failure -L slow

bench: build
	scripts/install-python-references.sh
	python3 bench/train_throughput.py --tenfold $(BUILD_DIR)/tenfold-bench-train
	python3 bench/pipeline_throughput.py --tenfold $(BUILD_DIR)/tenfold-bench-pipeline

fixtures:
	scripts/install-python-references.sh
	python3 tools/make_torch_fixtures.py
	python3 tools/make_keras_fixtures.py

clean:
	rm -rf $(BUILD_DIR)
