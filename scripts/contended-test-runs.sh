#!/usr/bin/env bash
# Flake hunt: runs the full `swift test` N times while one busy loop per core competes for the
# CPU, and reports how many runs failed and which tests failed in them.
#
#   scripts/contended-test-runs.sh [N]            # N defaults to 20
#   BUSY_LOOPS=4 scripts/contended-test-runs.sh 5 # more (or fewer) busy loops than cores
#   BESIDE_BUILD=1 scripts/contended-test-runs.sh  # and a clean build of the package, over and
#                                                  # over, in a scratch path of its own
#
# The package is built once first (not contended); every run then uses `swift test --skip-build`,
# so a run measures the tests alone. Each run's output is kept in $LOG_DIR (default: a new
# temporary directory) as run-K.log; the failing tests are read from XCTest's
# "Test Case '...' failed" lines and Swift Testing's "Test xyz() ... failed" lines.
# Not part of the default CI run: 20 runs take 30-60 minutes on a 2-core machine.
set -uo pipefail
cd "$(dirname "$0")/.."

runs="${1:-20}"
loops="${BUSY_LOOPS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
log_dir="${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/contended-runs.XXXXXX")}"
mkdir -p "$log_dir"

busy_pids=()
test_pid=""
build_loop_pid=""
stop_busy_loops() {
    if [ -n "$build_loop_pid" ]; then pkill -TERM -P "$build_loop_pid" 2>/dev/null; kill "$build_loop_pid" 2>/dev/null; wait "$build_loop_pid" 2>/dev/null; fi
    build_loop_pid=""
    for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${busy_pids[@]}"; do wait "$pid" 2>/dev/null; done
    busy_pids=()
}
# On exit (also when interrupted): the busy loops and a test run under way are stopped.
stop_all() {
    if [ -n "$test_pid" ]; then pkill -TERM -P "$test_pid" 2>/dev/null; kill "$test_pid" 2>/dev/null; fi
    stop_busy_loops
}
trap stop_all EXIT
trap 'exit 130' INT TERM

echo "== build (uncontended)"
if ! swift build --build-tests >"$log_dir/build.log" 2>&1; then
    echo "build failed: see $log_dir/build.log"
    exit 2
fi

echo "== $runs contended runs, $loops busy loop(s), logs in $log_dir"
for _ in $(seq "$loops"); do
    yes >/dev/null &
    busy_pids+=("$!")
done

if [ "${BESIDE_BUILD:-0}" = 1 ]; then
    echo "== and a clean build over and over (scratch path $log_dir/beside-build)"
    ( builds=0
      while true; do
          rm -rf "$log_dir/beside-build"
          swift build --scratch-path "$log_dir/beside-build" >"$log_dir/beside-build.log" 2>&1
          builds=$((builds + 1)); echo "$builds" >"$log_dir/beside-builds.count"
      done ) &
    build_loop_pid=$!
fi

failed_runs=0
failures_file="$log_dir/failures.txt"
: >"$failures_file"
for run in $(seq "$runs"); do
    log="$log_dir/run-$run.log"
    start=$(date +%s)
    # In the background and waited for, so that the traps can stop it.
    swift test --skip-build >"$log" 2>&1 &
    test_pid=$!
    wait "$test_pid"
    status=$?
    test_pid=""
    seconds=$(( $(date +%s) - start ))
    # XCTest: "Test Case 'Suite.test' failed"; Swift Testing: "✘ Test name() ... failed" or
    # "Test name() recorded an issue". Crashes show up as a nonzero status with no such line.
    names=$( { grep -oE "Test Case '[^']+' failed" "$log" | sed -E "s/Test Case '([^']+)' failed/\1/";
               grep -E "Test [^ ]+\(.*\) (failed|recorded an issue)" "$log" \
                   | grep -oE "Test [^ ]+\([^)]*\)" | sed -E 's/^Test //'; } | sort -u)
    if [ "$status" -ne 0 ] || [ -n "$names" ]; then
        failed_runs=$((failed_runs + 1))
        [ -n "$names" ] || names="(exit status $status, no failing test named: see $log)"
        echo "run $run: FAILED in ${seconds}s"
        echo "$names" | sed 's/^/    /'
        echo "$names" | sed "s/^/run $run: /" >>"$failures_file"
    else
        echo "run $run: passed in ${seconds}s"
    fi
done

stop_busy_loops
echo "== $runs runs, $failed_runs failed"
if [ -s "$failures_file" ]; then
    echo "failing tests (runs failed):"
    sed -E 's/^run [0-9]+: //' "$failures_file" | sort | uniq -c | sort -rn
fi
[ "$failed_runs" -eq 0 ]
