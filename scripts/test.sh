#!/usr/bin/env bash
# Command 2: installs what is missing, builds the test build (Debug + ASan + UBSan, warnings
# are errors) and runs every test with ctest: unit (two at a time), the fuzz targets' seed
# corpora replayed (the same sources as scripts/fuzz.sh's libFuzzer build, under gcc, ASan and
# UBSan), and e2e (real CometBFT on loopback, two at a time but for the timing-sensitive ones).
#   CTEST_ARGS  extra ctest arguments, e.g. CTEST_ARGS="-L unit"
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh" test

cd "$ROOT/build/test"
if [ -n "${CTEST_ARGS:-}" ]; then
  # shellcheck disable=SC2086
  exec ctest --output-on-failure $CTEST_ARGS
fi
# Unit tests and replays are CPU-bound and independent: two at a time on two cores. The e2e
# tests run real CometBFT nodes and mostly wait for blocks: two at a time too, except those whose
# scenario depends on the timing, which ctest runs alone (RUN_SERIAL, test/e2e/CMakeLists.txt).
# Both sets always run; the script fails if either did.
rc=0
ctest --output-on-failure -L 'unit|fuzz' -j2 || rc=$?
ctest --output-on-failure -LE 'unit|fuzz' -j2 || rc=$?
exit $rc
