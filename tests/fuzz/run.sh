#!/usr/bin/env bash
# Builds the fuzz targets of the readers of untrusted files (IDX, PNG, JPEG, NumPy, CSV, model
# files) with clang (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer) and runs each
# for a budget of seconds (default 30), two at a time (each uses one core), starting from
# small valid files. Exits non-zero on any finding.
# The model-file target parses HDF5 in a child process (src/io/stored_file.h): ASan reports
# printed by such a child are contained crashes of libhdf5, turned into errors, not findings.
#   run.sh [SECONDS]        build the targets (when out of date) and run them
#   run.sh --configure-only configure their build (build-fuzz; make sanitize's core tests too)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$root/build-fuzz

# Unoptimized (-O0), line tables (-g1) only, unity batches: clang compiles the sanitized
# library 4x faster than at -O2 (its heaviest batch: 131 -> 32 s), and what runs in this build
# (the core tests, a fuzzer whose time goes to HDF5 in a child process) runs seconds. The
# small targets are -O1 (tests/CMakeLists.txt). Batches of 16 sources, not 8: at -O0 most of a
# batch's time is headers and the templates every source instantiates (the library: 160 -> 140
# CPU s).
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DTENFOLD_SANITIZE=fuzzer-no-link,address,undefined \
  -DTENFOLD_BUILD_BENCHMARKS=OFF -DTENFOLD_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
[[ ${1:-} == --configure-only ]] && exit 0
cmake --build "$build_dir" -j "$(nproc)" --target fuzz_targets
budget=${1:-30}
work=${TMPDIR:-/tmp}/tenfold-fuzz
rm -rf "$work"
mkdir -p "$work"/{idx,png,data_files,model_file}

# Seeds. IDX: a 2x3x4 image file and a 5-label file, raw and compressed.
printf '\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04' > "$work/idx/images"
head -c 24 /dev/urandom >> "$work/idx/images"
printf '\x00\x00\x08\x01\x00\x00\x00\x05\x01\x02\x03\x04\x05' > "$work/idx/labels"
gzip -c "$work/idx/images" > "$work/idx/images.gz"
gzip -c "$work/idx/labels" > "$work/idx/labels.gz"
# PNG: the test images (gray, gray + alpha, RGB, RGBA, 16-bit).
find "$root/tests/fixtures/images/shapes" -iname '*.png' -exec cp {} "$work/png/" \;
# Data files: the test photos (JPEG), arrays (.npy) and tables (.csv).
find "$root/tests/fixtures/images/photos" -iname '*.jp*g' -exec cp {} "$work/data_files/" \;
cp "$root"/tests/fixtures/data/arrays/*.npy "$root"/tests/fixtures/data/tables/*.csv "$work/data_files/"
# Model files: Keras' own .h5, .keras and .weights.h5 files.
cp "$root"/tests/fixtures/models/small.* "$work/model_file/"

# Undefined behaviour is a finding too (tenfold_lib is compiled recoverable). Each target runs
# in the work directory (where libFuzzer writes a finding's input), on the corpus named after
# it, and logs to TARGET.log.
declare -A running  # target -> its process
start() {  # start TARGET MAX_LEN: runs it in the background
  (cd "$work" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$build_dir/tests/$1" \
    -max_total_time="$budget" -max_len="$2" -rss_limit_mb=2048 -print_final_stats=1 "$work/${1#fuzz_}" \
    > "$work/$1.log" 2>&1) &
  running[$1]=$!
}
finish() {  # finish TARGET: waits for it, prints its end, fails on a finding
  local status=0
  wait "${running[$1]}" || status=$?
  echo "== $1"
  tail -n 12 "$work/$1.log"
  [ "$status" -eq 0 ] || { echo "$1 failed (exit $status): $work/$1.log"; exit 1; }
}
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
start fuzz_idx 4096
start fuzz_png 4096
finish fuzz_idx
finish fuzz_png
start fuzz_data_files 65536
start fuzz_model_file 200000
finish fuzz_data_files
finish fuzz_model_file
