#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build/fuzz and runs each for
# FUZZ_SECONDS, starting from the seed corpora in test/fuzz/corpus/TARGET/ (genesis JSON and
# config.toml texts from the unit tests, and choice bytes for the targets that build their
# inputs: test/fuzz/README.md). ctest replays the same seeds in the test build (label fuzz).
#
# Usage: scripts/fuzz.sh [TARGET...]     default: every target in test/fuzz (*_fuzz.cc)
#   frame_fuzz      the ABCI frame reader and the Request parser, up to the app
#   tx_decode_fuzz  the tx decoder (canonical encodings)
#   query_fuzz      queries over a committed store: proofs at past heights, Simulate
#   block_fuzz      signed txs through CheckTx, PrepareProposal, ProcessProposal, FinalizeBlock,
#                   Commit and a restart, on two nodes that must agree
#   genesis_fuzz    genesis app_state: ParseGenesis and InitChain
#   config_fuzz     config.toml: ParseConfig and the options kairosd builds from it
#   FUZZ_SECONDS=N   how long to fuzz each target (default 60)
#   FUZZ_ARGS="..."  extra libFuzzer flags, e.g. "-jobs=2 -workers=2"
# The corpora grow in build/fuzz/corpus/TARGET (the seeds are read, never written); a crashing
# input is saved in build/fuzz/artifacts/.
# Prints one line per target (executions, executions/s, coverage, features, and the size of its
# corpus in build/fuzz before and after the run) and exits non-zero if any target found
# something.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
DIR=$ROOT/build/fuzz
ARTIFACTS=$DIR/artifacts
if [ $# -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=()
  for src in "$ROOT"/test/fuzz/*_fuzz.cc; do TARGETS+=("$(basename "$src" .cc)"); done
fi

say() { printf 'fuzz: %s\n' "$*" >&2; }

LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$ROOT" -B "$DIR" -G Ninja -DCMAKE_CXX_COMPILER=clang++ "${LAUNCHER[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_FUZZ=ON -DKAIROS_BUILD_TESTS=OFF \
  -DKAIROS_BUILD_BENCH=OFF >/dev/null
cmake --build "$DIR" --parallel "$(nproc)" --target "${TARGETS[@]}"

mkdir -p "$ARTIFACTS"
summary=()
failed=0
for t in "${TARGETS[@]}"; do
  corpus=$DIR/corpus/$t
  mkdir -p "$corpus"
  extra=()
  [ -d "$ROOT/test/fuzz/corpus/$t" ] && extra+=("$ROOT/test/fuzz/corpus/$t")
  flags=()
  [ -f "$ROOT/test/fuzz/$t.dict" ] && flags+=("-dict=$ROOT/test/fuzz/$t.dict")
  case $t in
    # A run of these touches the whole app: tens of thousands of features, whose frequencies
    # libFuzzer's entropic scheduling updates on every run. That took ~70% of block_fuzz's time
    # (perf); without it, 4-5x the executions. Their inputs are a few hundred bytes of choices,
    # so no slow growth of the length limit.
    query_fuzz|block_fuzz|genesis_fuzz) flags+=(-entropic=0 -len_control=0 -max_len=2048) ;;
  esac
  log=$DIR/$t.log
  say "running $t for ${FUZZ_SECONDS}s (log: $log)"
  status=0
  start=$(find "$corpus" -type f | wc -l)
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
  nice "$DIR/test/fuzz/$t" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
    -artifact_prefix="$ARTIFACTS/$t-" "${flags[@]}" ${FUZZ_ARGS:-} "$corpus" "${extra[@]}" \
    >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  result=ok
  if [ "$status" -ne 0 ]; then
    result="FOUND (exit $status, see $log)"
    failed=1
    grep -E 'ERROR|SUMMARY|property violated|Test unit written' "$log" | head -10 >&2 || true
  fi
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  summary+=("$(printf '%-15s execs=%-9s execs/s=%-6s cov=%-6s ft=%-6s corpus=%s->%s %s' "$t" \
    "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$start" "$(find "$corpus" -type f | wc -l)" \
    "$result")")
done
printf '%s\n' "${summary[@]}"
exit "$failed"
