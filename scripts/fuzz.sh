#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build/fuzz and runs one of them for
# FUZZ_SECONDS, starting from a small seed corpus of valid ABCI frames written here.
#
# Usage: scripts/fuzz.sh [TARGET]        TARGET defaults to frame_fuzz (test/fuzz/TARGET.cc)
#   FUZZ_SECONDS=N   how long to fuzz (default 60)
#   FUZZ_ARGS="..."  extra libFuzzer flags, e.g. "-jobs=2 -workers=2"
# The corpus grows in build/fuzz/corpus/TARGET; a crashing input is saved in
# build/fuzz/artifacts/ and the script exits non-zero.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=${1:-frame_fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
DIR=$ROOT/build/fuzz
CORPUS=$DIR/corpus/$TARGET
ARTIFACTS=$DIR/artifacts
LOG=$DIR/$TARGET.log

say() { printf 'fuzz: %s\n' "$*" >&2; }

cmake -S "$ROOT" -B "$DIR" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_FUZZ=ON -DKAIROS_BUILD_TESTS=OFF \
  -DKAIROS_BUILD_BENCH=OFF >/dev/null
cmake --build "$DIR" --parallel "$(nproc)" --target "$TARGET"

# seed NAME BYTES: a corpus entry; BYTES is a printf format of escapes.
seed() { printf "$2" >"$CORPUS/seed-$1"; }

mkdir -p "$CORPUS" "$ARTIFACTS"
if [ "$TARGET" = frame_fuzz ]; then
  # frame_fuzz input: one byte N (low 3 bits), N chunk-size bytes, then the stream of frames.
  seed flush '\x00\x02\x12\x00'
  seed echo '\x00\x06\x0a\x04\x0a\x02hi'
  seed info '\x00\x02\x1a\x00'
  seed check-tx '\x00\x07\x42\x05\x0a\x03a=b'
  seed query '\x00\x0f\x32\x0d\x12\x0b/app/height'
  seed init-chain '\x00\x08\x2a\x06\x12\x04test'
  seed prepare-proposal '\x00\x0a\x82\x01\x07\x08\x64\x12\x03a=b'
  seed finalize-block '\x00\x0a\xa2\x01\x07\x0a\x03a=b\x28\x01'
  seed commit '\x00\x02\x5a\x00'
  # A mempool-connection stream split into 1-, 2- and 3-byte chunks (Prepare/Commit path).
  seed split-stream '\x03\x80\x01\x82\x07\x42\x05\x0a\x03a=b\x06\x0a\x04\x0a\x02hi\x02\x12\x00'
  seed too-large '\x00\xff\xff\x03'
  seed bad-varint '\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01'
fi

say "running $TARGET for ${FUZZ_SECONDS}s (log: $LOG)"
status=0
# shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
"$DIR/test/fuzz/$TARGET" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/$TARGET-" ${FUZZ_ARGS:-} "$CORPUS" >"$LOG" 2>&1 || status=$?

grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$LOG" | tail -2 || true
grep -E '^stat::' "$LOG" || true
echo "corpus: $(find "$CORPUS" -type f | wc -l) inputs in $CORPUS"
if [ "$status" -ne 0 ]; then
  grep -E 'ERROR|SUMMARY|property violated|Test unit written' "$LOG" | head -20 || true
  say "$TARGET failed (exit $status); see $LOG"
  exit "$status"
fi
say "$TARGET: no crash in ${FUZZ_SECONDS}s"
