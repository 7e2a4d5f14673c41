#!/usr/bin/env bash
# Builds the fuzz targets of the readers of untrusted files (IDX, PNG, JPEG, NumPy, CSV, model
# files) with clang (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer) and runs each
# for a budget of seconds (default 30), starting from small valid files. Exits non-zero on any
# finding.
# The model-file target parses HDF5 in a child process (src/io/stored_file.h): ASan reports
# printed by such a child are contained crashes of libhdf5, turned into errors, not findings.
# `run.sh --configure-only` only configures that clang build (build-fuzz), which `make sanitize`
# also runs the core tests in.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

# Unoptimized (-O0), line tables (-g1) only, unity batches: clang compiles the sanitized
# library 4x faster than at -O2 (its heaviest batch: 131 -> 32 s), and what runs in this build
# (the core tests, a fuzzer whose time goes to HDF5 in a child process) runs seconds.
configure_sanitized_build() {
  cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DTENFOLD_SANITIZE=fuzzer-no-link,address,undefined \
    -DTENFOLD_BUILD_BENCHMARKS=OFF -DTENFOLD_UNITY_BUILD=ON >/dev/null
}

if [[ ${1:-} == --configure-only ]]; then
  configure_sanitized_build
  exit 0
fi
budget=${1:-30}
work=${TMPDIR:-/tmp}/tenfold-fuzz
rm -rf "$work"
mkdir -p "$work/idx" "$work/png" "$work/model"

# The model-file loader needs the whole library: a clang build of it with the sanitizers, which
# compiles (minutes) while the small targets build and run (one core each).
configure_sanitized_build
cmake --build "$root/build-fuzz" -j "$(nproc)" --target fuzz_model_file > "$work/model_build.log" 2>&1 &
model_build=$!
# A finding ends the script early: the build must not outlive it.
trap 'kill "$model_build" 2>/dev/null || true' EXIT
core_sources=("$root/src/core/tensor.cpp" "$root/src/core/shape.cpp" "$root/src/core/error.cpp")

build() {  # build TARGET SOURCE LIBRARIES...
  local target=$1 source=$2
  shift 2
  clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root/src" "$root/tests/fuzz/$target.cpp" "$source" "${core_sources[@]}" "$@" \
    -o "$work/$target"
}

# Undefined behaviour in the library is a finding too: tenfold_lib is compiled recoverable.
run() {  # run TARGET CORPUS [MAX_LEN]
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$work/$1" -max_total_time="$budget" -max_len="${3:-4096}" \
    -rss_limit_mb=2048 -print_final_stats=1 "$2" 2>&1 | tail -n 12
}

build fuzz_idx "$root/src/datasets/idx.cpp" -lz
# Seeds: a 2x3x4 image file and a 5-label file, raw and compressed.
printf '\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04' > "$work/idx/images"
head -c 24 /dev/urandom >> "$work/idx/images"
printf '\x00\x00\x08\x01\x00\x00\x00\x05\x01\x02\x03\x04\x05' > "$work/idx/labels"
gzip -c "$work/idx/images" > "$work/idx/images.gz"
gzip -c "$work/idx/labels" > "$work/idx/labels.gz"
run fuzz_idx "$work/idx"

build fuzz_png "$root/src/datasets/png.cpp" -lpng
# Seeds: the test images (gray, gray + alpha, RGB, RGBA, 16-bit).
find "$root/tests/fixtures/images/shapes" -iname '*.png' -exec cp {} "$work/png/" \;
run fuzz_png "$work/png"

build fuzz_data_files "$root/src/datasets/jpeg.cpp" "$root/src/datasets/numpy.cpp" "$root/src/datasets/csv.cpp" \
  "$root/src/io/zip_archive.cpp" -ljpeg -lzip
# Seeds: the test photos (JPEG), arrays (.npy) and tables (.csv).
mkdir -p "$work/data_files"
find "$root/tests/fixtures/images/photos" -iname '*.jp*g' -exec cp {} "$work/data_files/" \;
cp "$root"/tests/fixtures/data/arrays/*.npy "$root"/tests/fixtures/data/tables/*.csv "$work/data_files/"
run fuzz_data_files "$work/data_files" 65536

wait "$model_build" || { tail -n 40 "$work/model_build.log"; echo "building fuzz_model_file failed"; exit 1; }
cp "$root/build-fuzz/tests/fuzz_model_file" "$work/"
# Seeds: Keras' own .h5, .keras and .weights.h5 files.
cp "$root"/tests/fixtures/models/small.* "$work/model/"
(cd "$work" && run fuzz_model_file "$work/model" 200000)
