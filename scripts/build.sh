#!/usr/bin/env bash
# Configures and builds one of the two builds:
#   release  build/release: Release, what `kairosd start` runs
#   test     build/test:    Debug + ASan + UBSan, warnings are errors; the unit and e2e tests
# Usage: scripts/build.sh release|test [extra cmake args...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kind=${1:-release}
shift || true
case "$kind" in
  release) args=(-DCMAKE_BUILD_TYPE=Release -DKAIROS_BUILD_TESTS=OFF -DKAIROS_BUILD_BENCH=ON) ;;
  test) args=(-DCMAKE_BUILD_TYPE=Debug -DKAIROS_SANITIZE=ON -DKAIROS_WERROR=ON
              -DKAIROS_BUILD_TESTS=ON -DKAIROS_BUILD_BENCH=OFF) ;;
  *) echo "usage: $0 release|test" >&2; exit 2 ;;
esac
dir="$ROOT/build/$kind"
cmake -S "$ROOT" -B "$dir" -G Ninja "${args[@]}" "$@" >/dev/null
cmake --build "$dir" --parallel "$(nproc)"
echo "built $dir"
