#!/usr/bin/env bash
# Long-run crash test of the store: the unit test store_crash_test SIGKILLs a committing
# process at random instants and checks every reopen; this runs it ITERATIONS times (default
# 5000) instead of the 200 of the test suite. Uses the test build (scripts/build.sh test).
#   ITERATIONS=N scripts/crash-soak.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/build.sh" test >/dev/null
KAIROS_CRASH_ITERATIONS=${ITERATIONS:-5000} \
  "$ROOT/build/test/test/unit/kairos_unit_tests" "[crash]" --success --durations yes |
  grep -E 'crash test:|passed|failed|seconds'
