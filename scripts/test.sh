#!/usr/bin/env bash
# Command 2: installs what is missing, builds the test build (Debug + ASan + UBSan, warnings
# are errors), checks that the fuzz targets build, and runs every test with ctest: unit and
# e2e (real CometBFT on loopback).
#   CTEST_ARGS  extra ctest arguments, e.g. CTEST_ARGS="-L unit"
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh" test
# The fuzz targets must keep building (clang + libFuzzer); scripts/fuzz.sh runs them.
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$ROOT" -B "$ROOT/build/fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ "${LAUNCHER[@]}" -DKAIROS_FUZZ=ON -DKAIROS_BUILD_TESTS=OFF \
  -DKAIROS_BUILD_BENCH=OFF >/dev/null
cmake --build "$ROOT/build/fuzz" --parallel "$(nproc)"
echo "fuzz targets built in build/fuzz"

cd "$ROOT/build/test"
# shellcheck disable=SC2086
ctest --output-on-failure ${CTEST_ARGS:-}
