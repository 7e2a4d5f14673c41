#!/usr/bin/env bash
# Builds the IDX reader's fuzz target with clang (libFuzzer, AddressSanitizer,
# UndefinedBehaviorSanitizer) and runs it for a budget of seconds (default 30), starting from
# small valid files. Exits non-zero on any finding.
set -euo pipefail
budget=${1:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${TMPDIR:-/tmp}/tenfold-fuzz-idx
mkdir -p "$work/corpus"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/src" "$root/tests/fuzz/fuzz_idx.cpp" "$root/src/datasets/idx.cpp" \
  "$root/src/core/tensor.cpp" "$root/src/core/shape.cpp" "$root/src/core/error.cpp" \
  -lz -o "$work/fuzz_idx"
# Seeds: a 2x3x4 image file and a 5-label file, raw and compressed.
printf '\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04' > "$work/corpus/images"
head -c 24 /dev/urandom >> "$work/corpus/images"
printf '\x00\x00\x08\x01\x00\x00\x00\x05\x01\x02\x03\x04\x05' > "$work/corpus/labels"
gzip -c "$work/corpus/images" > "$work/corpus/images.gz"
gzip -c "$work/corpus/labels" > "$work/corpus/labels.gz"
"$work/fuzz_idx" -max_total_time="$budget" -max_len=4096 -rss_limit_mb=1024 \
  -print_final_stats=1 "$work/corpus" 2>&1 | tail -n 12
