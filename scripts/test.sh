#!/usr/bin/env bash
# `make test`: builds Tenfold, runs the fast unit tests first (in parallel: many are short and
# single-threaded), then the slow ones (real training on every core: one at a time, 10% faster
# than two), then `make sanitize fuzz`: the core (tensors, input pipeline, data files) and the
# threaded tests under sanitizers, and a short fuzzing run of the readers of untrusted files.
# The tests' Keras installs (mostly downloads) while Tenfold builds.
# `make sanitize fuzz` compiles the library twice more (AddressSanitizer, ThreadSanitizer),
# about as much CPU time as the release build: those builds start at once in the idle scheduling class, so
# they get only the CPU time the release build and the tests leave (serial links, Keras'
# downloads, the slow tests' waits on Python and on the processes they kill), and the cores
# once the tests end. The release build and the slow tests run as fast beside them (CI: 354
# and 393 s, against 357 and 383-395 without).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
mkdir -p "$build_dir"

# util-linux's chrt; where the idle class is refused (a restricted container), the lowest nice.
if chrt --idle 0 true 2>/dev/null; then idle=(chrt --idle 0); else idle=(nice -n 19); fi
# In its own process group (job control on), so that a failing test stops the whole build with
# it. Not its own session (setsid): the kernel's autogroups would then share the CPU evenly
# between this script's session and the build's, whatever its class.
set -m
"${idle[@]}" make --no-print-directory sanitized-builds > "$build_dir/sanitized-builds.log" 2>&1 &
sanitized_builds=$!
set +m
# (CONT after TERM: a stopped process takes its TERM when continued.)
trap 'kill -- -$sanitized_builds 2>/dev/null; kill -CONT -- -$sanitized_builds 2>/dev/null || true' EXIT

scripts/install-keras-for-tests.sh "$build_dir/keras-venv" &
keras_install=$!
make --no-print-directory build
wait $keras_install

# Paused during the unit tests: there two tests run at once, each on two OpenMP threads, and
# beside an idle-class compile test_models took 22 s instead of 7 (measured).
kill -STOP -- -$sanitized_builds 2>/dev/null || true
(cd "$build_dir" && ctest --output-on-failure -j "$jobs" -L unit)
kill -CONT -- -$sanitized_builds 2>/dev/null || true
(cd "$build_dir" && ctest --output-on-failure -L slow)

wait $sanitized_builds || {
  tail -n 40 "$build_dir/sanitized-builds.log"
  echo "the sanitized builds failed; their log: $build_dir/sanitized-builds.log"
  exit 1
}
trap - EXIT
make --no-print-directory sanitize fuzz
