#!/usr/bin/env bash
# Balance queries per second over kairosd's gRPC, its REST gateway and CometBFT's abci_query,
# with 1 and 16 concurrent clients, while the node runs blocks at a steady load of bank sends;
# and the block times with and without the query load (issue 23's query benchmark). It prints
# figures; it is not a pass/fail test.
#
# One Release node (scripts/run-node.sh, CometBFT v0.38, default consensus timeouts) on a temp
# home, with DEV_ACCOUNTS funded genesis accounts: dev0 funds `kairosd bench load`'s accounts,
# dev1... are only queried, so their balance is known (100000000000stake) and api_bench checks
# every answer against it. `kairosd bench load --rate RATE` sends transfers in the background for
# the whole run. Then, in this order, for CELL seconds each: no queries (the baseline), grpc,
# rest and abci with 1 client, the baseline again, the three with 16 clients, the baseline a
# third time. For each cell's window: api_bench's figures (test/bench/api_bench.cc), the
# blocks committed in it (from CometBFT's /blockchain: intervals between consecutive header
# times, txs per block), kairosd's mean FinalizeBlock and store commit time (its Prometheus
# histograms, kairos_block_execution_seconds and kairos_store_commit_seconds) and the CPU of
# kairosd, CometBFT and api_bench.
#
# Usage: scripts/bench-api.sh
#   CELL=S          seconds per cell (default 20)
#   RATE=R          bank sends per second (default 200)
#   QUERY_ACCOUNTS=N   accounts queried (default 20; dev1..devN)
#   LOAD_ACCOUNTS=N    bench load's senders (default 100)
#   KAIROSD, API_BENCH   binaries (default build/release/app/kairosd, .../test/bench/api_bench)
# Logs, the node's home and raw results (results.txt) go to a temp directory, kept (and named)
# when KEEP=1; it is removed otherwise. Nothing is left running on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CELL=${CELL:-20}
RATE=${RATE:-200}
QUERY_ACCOUNTS=${QUERY_ACCOUNTS:-20}
LOAD_ACCOUNTS=${LOAD_ACCOUNTS:-100}
KAIROSD=${KAIROSD:-$ROOT/build/release/app/kairosd}
API_BENCH=${API_BENCH:-$ROOT/build/release/test/bench/api_bench}
DEV_AMOUNT=100000000000  # what run-node.sh gives each dev account, in stake

say() { printf 'bench-api: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
[ -x "$KAIROSD" ] || die "no kairosd at $KAIROSD (build the Release build with KAIROS_BUILD_BENCH=ON)"
[ -x "$API_BENCH" ] || die "no api_bench at $API_BENCH (build the Release build with KAIROS_BUILD_BENCH=ON)"

WORK=$(mktemp -d /tmp/kairos-bench-api-XXXXXX)
HOME_DIR=$WORK/home
node_pid=""
load_pid=""
cleanup() {
  local rc=$?
  if [ -n "$load_pid" ]; then kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; fi
  # run-node.sh stops CometBFT, then kairosd, on SIGTERM.
  if [ -n "$node_pid" ]; then kill -TERM "$node_pid" 2>/dev/null || true; wait "$node_pid" 2>/dev/null || true; fi
  if [ "${KEEP:-0}" = 1 ] || [ "$rc" != 0 ]; then say "logs and results kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
taken=" "
free_port() {
  local port _
  for _ in $(seq 200); do
    port=$((20000 + RANDOM % 12000))
    if ! listening "$port" && [[ "$taken" != *" $port "* ]]; then taken+="$port "; echo "$port"; return; fi
  done
  die "no free port found"
}
export ABCI_PORT RPC_PORT P2P_PORT GRPC_PORT API_PORT
ABCI_PORT=$(free_port); RPC_PORT=$(free_port); P2P_PORT=$(free_port); GRPC_PORT=$(free_port)
API_PORT=$(free_port); METRICS_PORT=$(free_port)
RPC=http://127.0.0.1:$RPC_PORT
METRICS=http://127.0.0.1:$METRICS_PORT/metrics

# kairosd's config first, so run-node.sh keeps it: metrics on for the block timings.
"$KAIROSD" init --home "$HOME_DIR" >/dev/null
python3 "$ROOT/scripts/cometbft_config.py" "$HOME_DIR/config.toml" \
  metrics.address="127.0.0.1:$METRICS_PORT"
say "starting the node in $HOME_DIR (log $WORK/run-node.log)"
KAIROSD=$KAIROSD KAIROS_HOME=$HOME_DIR setsid "$ROOT/scripts/run-node.sh" \
  --accounts $((QUERY_ACCOUNTS + 1)) >"$WORK/run-node.log" 2>&1 </dev/null &
node_pid=$!
for _ in $(seq 1200); do
  grep -q '^Ctrl-C stops both' "$WORK/run-node.log" && break
  kill -0 "$node_pid" 2>/dev/null || { cat "$WORK/run-node.log" >&2; die "run-node.sh exited"; }
  sleep 0.1
done
grep -q '^Ctrl-C stops both' "$WORK/run-node.log" || die "the node did not start in 120 s"
KAIROSD_PID=$(sed -n 's/^kairosd *pid \([0-9]*\).*/\1/p' "$WORK/run-node.log")
COMET_PID=$(sed -n 's/^cometbft *pid \([0-9]*\).*/\1/p' "$WORK/run-node.log")
[ -n "$KAIROSD_PID" ] && [ -n "$COMET_PID" ] || die "no pids in $WORK/run-node.log"

k() { "$KAIROSD" "$@" --home "$HOME_DIR" --keyring-backend test; }
accounts=()
for i in $(seq 1 "$QUERY_ACCOUNTS"); do accounts+=("$(k keys show "dev$i" --address)"); done
ACCOUNT_LIST=$(IFS=,; echo "${accounts[*]}")

# The steady load, for every cell plus a margin (bench load signs every tx before it starts).
CELLS=(none grpc:1 rest:1 abci:1 none grpc:16 rest:16 abci:16 none)
LOAD_SECONDS=$((${#CELLS[@]} * (CELL + 8) + 60))
say "bench load: $RATE transfers/s for up to ${LOAD_SECONDS}s from $LOAD_ACCOUNTS accounts (log $WORK/load.log)"
"$KAIROSD" --home "$HOME_DIR" bench load --node "$RPC" --rate "$RATE" --duration "${LOAD_SECONDS}s" \
  --accounts "$LOAD_ACCOUNTS" --fund-from dev0 --fund-amount 100000000stake --connections 4 \
  --drain 5s >"$WORK/load.log" 2>&1 </dev/null &
load_pid=$!

# JSON of CometBFT's RPC.
rpc() { python3 -c 'import json,sys,urllib.request; print(json.dumps(json.load(urllib.request.urlopen(sys.argv[1], timeout=10))["result"]))' "$RPC/$1"; }
height() { rpc status | python3 -c 'import json,sys; print(json.load(sys.stdin)["sync_info"]["latest_block_height"])'; }
last_block_txs() { rpc "blockchain?minHeight=$1&maxHeight=$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["block_metas"][0]["num_txs"])'; }

# Steady when three blocks in a row hold at least half a second's worth of txs each.
say "waiting for the load to reach the blocks"
steady=0
for _ in $(seq 300); do
  kill -0 "$load_pid" 2>/dev/null || { tail -20 "$WORK/load.log" >&2; die "bench load exited"; }
  h=$(height)
  if [ "$(last_block_txs "$h")" -ge $((RATE / 2)) ]; then steady=$((steady + 1)); else steady=0; fi
  [ "$steady" -ge 3 ] && break
  sleep 1
done
[ "$steady" -ge 3 ] || die "the blocks never held the load (see $WORK/load.log)"

# CPU seconds used so far by process $1 (every thread).
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ split($0, a, ") "); split(a[2], f, " "); printf "%.2f\n", (f[12] + f[13]) / hz }' "/proc/$1/stat"; }
# "sum count" of a kairosd histogram.
histogram() {
  python3 - "$METRICS" "$1" <<'EOF'
import sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
values = {}
for line in text.splitlines():
    for part in ("_sum", "_count"):
        if line.startswith(sys.argv[2] + part + " "):
            values[part] = float(line.split()[1])
print(values.get("_sum", 0), values.get("_count", 0))
EOF
}

# Block figures of heights ($1, $2]: "blocks interval_p50_ms interval_p99_ms txs_per_block".
block_stats() {
  python3 - "$RPC" "$1" "$2" <<'EOF'
import datetime, json, sys, urllib.request
rpc, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
metas = {}
h = hi
while h >= lo:  # /blockchain answers at most 20 blocks, newest first
    r = json.load(urllib.request.urlopen(f"{rpc}/blockchain?minHeight={max(lo, h - 19)}&maxHeight={h}", timeout=10))
    for m in r["result"]["block_metas"]:
        metas[int(m["header"]["height"])] = m
    h -= 20
def t(m):  # RFC 3339 with nanoseconds
    s = m["header"]["time"].rstrip("Z")
    base, _, frac = s.partition(".")
    return datetime.datetime.fromisoformat(base).timestamp() + float("0." + (frac or "0"))
heights = sorted(metas)
gaps = sorted((t(metas[b]) - t(metas[a])) * 1000 for a, b in zip(heights, heights[1:]))
def pct(p):
    return gaps[min(len(gaps) - 1, int(p * (len(gaps) - 1) + 0.5))] if gaps else 0
txs = [int(metas[x]["num_txs"]) for x in heights[1:]]
print(len(gaps), f"{pct(0.5):.0f}", f"{pct(0.99):.0f}", f"{sum(txs) / max(1, len(txs)):.0f}")
EOF
}

RESULTS=$WORK/results.txt
: >"$RESULTS"
n=0
for cell in "${CELLS[@]}"; do
  n=$((n + 1))
  via=${cell%%:*}
  clients=${cell#*:}
  [ "$via" = none ] && clients=0
  kill -0 "$load_pid" 2>/dev/null || { tail -20 "$WORK/load.log" >&2; die "bench load ended before the cells did"; }
  h0=$(height)
  read -r exec_sum0 exec_n0 < <(histogram kairos_block_execution_seconds)
  read -r commit_sum0 commit_n0 < <(histogram kairos_store_commit_seconds)
  k_cpu0=$(cpu_s "$KAIROSD_PID"); c_cpu0=$(cpu_s "$COMET_PID")
  t0=$(date +%s.%N)
  case "$via" in
    none)
      say "cell $n/${#CELLS[@]}: no queries, ${CELL}s"
      sleep "$CELL"
      q="label=none qps=0 p50_us=0 p99_us=0 errors=0 client_cpu_share=0"
      ;;
    grpc|rest|abci)
      case "$via" in
        grpc) address=127.0.0.1:$GRPC_PORT ;;
        rest) address=http://127.0.0.1:$API_PORT ;;
        abci) address=$RPC ;;
      esac
      say "cell $n/${#CELLS[@]}: $via, $clients client(s), ${CELL}s"
      q=$("$API_BENCH" --via "$via" --address "$address" --clients "$clients" --duration "$CELL" \
        --accounts "$ACCOUNT_LIST" --denom stake --expect-amount "$DEV_AMOUNT" --label "$via") ||
        { echo "$q" >&2; die "api_bench failed ($via, $clients clients)"; }
      ;;
  esac
  t1=$(date +%s.%N)
  h1=$(height)
  k_cpu1=$(cpu_s "$KAIROSD_PID"); c_cpu1=$(cpu_s "$COMET_PID")
  read -r exec_sum1 exec_n1 < <(histogram kairos_block_execution_seconds)
  read -r commit_sum1 commit_n1 < <(histogram kairos_store_commit_seconds)
  read -r blocks gap50 gap99 txs < <(block_stats "$h0" "$h1")
  field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$(head -1 <<<"$q")"; }
  errors_text=$(grep '^error ' <<<"$q" | tr '\n' ';' || true)
  awk -v via="$via" -v clients="$clients" -v qps="$(field qps)" -v p50="$(field p50_us)" \
    -v p99="$(field p99_us)" -v errors="$(field errors)" -v client_cpu="$(field client_cpu_share)" \
    -v blocks="$blocks" -v gap50="$gap50" -v gap99="$gap99" -v txs="$txs" \
    -v es0="$exec_sum0" -v es1="$exec_sum1" -v en0="$exec_n0" -v en1="$exec_n1" \
    -v cs0="$commit_sum0" -v cs1="$commit_sum1" -v cn0="$commit_n0" -v cn1="$commit_n1" \
    -v k0="$k_cpu0" -v k1="$k_cpu1" -v c0="$c_cpu0" -v c1="$c_cpu1" -v t0="$t0" -v t1="$t1" 'BEGIN {
      wall = t1 - t0
      exec_ms = (en1 > en0) ? (es1 - es0) / (en1 - en0) * 1000 : 0
      commit_ms = (cn1 > cn0) ? (cs1 - cs0) / (cn1 - cn0) * 1000 : 0
      printf "%s %s %.0f %.2f %.2f %s %.2f %s %s %s %s %.1f %.1f %.2f %.2f\n", via, clients, qps,
        p50 / 1000, p99 / 1000, errors, client_cpu, blocks, gap50, gap99, txs, exec_ms, commit_ms,
        (k1 - k0) / wall, (c1 - c0) / wall
    }' >>"$RESULTS"
  [ -z "$errors_text" ] || say "cell $n ($via x$clients) errors: $errors_text"
  echo "$q" >>"$WORK/api_bench.out"
done
kill "$load_pid" 2>/dev/null || true
wait "$load_pid" 2>/dev/null || true
load_pid=""

echo
printf 'Balance queries against one kairosd + CometBFT %s node under %s bank sends/s, %ss cells, %s\n' \
  "$("$ROOT/.tools/bin/cometbft" version 2>/dev/null || echo '?')" "$RATE" "$CELL" "$(date -u +%FT%TZ)"
printf 'Load average at the end: %s; %s cores\n' "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
row() { printf '%-5s %7s %8s %15s %6s %10s %7s %17s %9s %15s %15s\n' "$@"; }
row door clients QPS "p50/p99 ms" errors "client CPU" blocks "interval p50/p99" "txs/block" \
  "exec/commit ms" "kairosd/cmt CPU"
while read -r via clients qps p50 p99 errors client_cpu blocks gap50 gap99 txs exec commit kcpu ccpu; do
  if [ "$via" = none ]; then
    row none - - - - - "$blocks" "$gap50/$gap99" "$txs" "$exec/$commit" "$kcpu/$ccpu"
  else
    row "$via" "$clients" "$qps" "$p50/$p99" "$errors" "$client_cpu" "$blocks" "$gap50/$gap99" \
      "$txs" "$exec/$commit" "$kcpu/$ccpu"
  fi
done <"$RESULTS"
cat <<EOF

Notes:
- QPS counts answers checked correct (the balance of the account asked, ${DEV_AMOUNT}stake);
  errors = failed or wrong answers (api_bench prints each kind). Latency: request sent -> answer
  decoded, one request at a time per client.
- client CPU = api_bench's own CPU time over the cell (getrusage), in cores; it shares the
  machine's $(nproc) cores with the node.
- interval = time between consecutive blocks' header times in the cell (CometBFT's default
  timeout_commit of 1 s is in it); with ~1 s blocks a cell holds ~$CELL intervals, so p99 is
  the largest. exec/commit = kairosd's mean FinalizeBlock and store Commit time per block
  (its metrics). kairosd/cmt CPU = cores used by each process over the cell.
- "none" rows are the baseline without queries, measured before, between and after.
EOF
