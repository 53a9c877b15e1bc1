#!/usr/bin/env bash
# ABCI socket throughput and latency: kairosd against CometBFT's Go socket server
# (`abci-cli kvstore`, the baseline), both driven by the same load client (abci_load) in the
# same run, alternating. It prints figures; it is not a pass/fail test.
#
# Usage: scripts/bench.sh
#   REQUESTS=N     requests per measurement (default 1000000)
#   ROUNDS=R       measurements per cell and server; the one with the median req/s is shown
#                  (default 5)
#   TX_BYTES=B FLUSH_EVERY=F WINDOW=W KEYS=K   passed to abci_load (defaults 256, 100, 1000,
#                  5000: distinct tx keys per connection, see test/bench/abci_load.cc)
# Logs, raw results (results.jsonl) and the kairosd home go to build/bench/.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REQUESTS=${REQUESTS:-1000000}
ROUNDS=${ROUNDS:-5}
TX_BYTES=${TX_BYTES:-256}
FLUSH_EVERY=${FLUSH_EVERY:-100}
WINDOW=${WINDOW:-1000}
KEYS=${KEYS:-5000}
ABCI_CLI=${ABCI_CLI:-$ROOT/.tools/bin/abci-cli}
OUT=$ROOT/build/bench
KAIROSD=$ROOT/build/release/app/kairosd
LOAD=$ROOT/build/release/test/bench/abci_load

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ -x "$ABCI_CLI" ] || die "$ABCI_CLI not found: run scripts/setup.sh"
rm -rf "$OUT"
mkdir -p "$OUT"
say "building release (log: $OUT/build.log)"
if ! "$ROOT/scripts/build.sh" release >"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log" >&2
  die "build failed"
fi

# --- servers ------------------------------------------------------------------------------
server_pids=()
stop_servers() {
  local pid
  for pid in "${server_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

# True when something accepts connections on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A port below Linux's ephemeral range that nothing listens on and that is not in "$@".
free_port() {
  local port _
  for _ in $(seq 200); do
    port=$((20000 + RANDOM % 12000))
    if ! listening "$port" && [[ " $* " != *" $port "* ]]; then
      echo "$port"
      return
    fi
  done
  die "no free port found"
}

# start_server KEY NAME PORT LOG CMD...: runs CMD in the background with its output in LOG,
# records its pid in server_pid[KEY] and waits until it listens on PORT.
declare -A server_pid
start_server() {
  local key=$1 name=$2 port=$3 log=$4
  shift 4
  "$@" >"$log" 2>&1 &
  local pid=$! _
  server_pids+=("$pid")
  server_pid[$key]=$pid
  for _ in $(seq 100); do
    listening "$port" && { say "$name listening on 127.0.0.1:$port (pid $pid, log $log)"; return; }
    kill -0 "$pid" 2>/dev/null || { tail -20 "$log" >&2; die "$name exited at start"; }
    sleep 0.1
  done
  die "$name does not listen on port $port after 10 s"
}

# CPU time used so far by every thread of process $1, in nanoseconds.
cpu_ns() {
  if [ -r "/proc/$1/schedstat" ]; then
    cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
  else  # no schedstats: utime + stime in clock ticks
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f\n", ($14 + $15) * 1e9 / hz }' "/proc/$1/stat"
  fi
}

kairos_port=$(free_port)
go_port=$(free_port "$kairos_port")
"$KAIROSD" init --home "$OUT/kairos-home" >/dev/null
# This bench measures ABCI only: no gRPC or REST server (nor their default ports) is needed.
python3 "$ROOT/scripts/cometbft_config.py" "$OUT/kairos-home/config.toml" grpc.address='""' \
  api.address='""'
start_server kairos kairosd "$kairos_port" "$OUT/kairosd.log" \
  "$KAIROSD" start --home "$OUT/kairos-home" --abci-address "tcp://127.0.0.1:$kairos_port" \
  --log-level warn
start_server go "abci-cli kvstore" "$go_port" "$OUT/kvstore.log" \
  "$ABCI_CLI" kvstore --address "tcp://127.0.0.1:$go_port" --log_level error

# --- measurements -------------------------------------------------------------------------
COMETBFT_VERSION=$("$(dirname "$ABCI_CLI")/cometbft" version 2>/dev/null || echo "(version ?)")
declare -A port=([kairos]=$kairos_port [go]=$go_port)

# load SERVER METHOD CONNS REQUESTS: one abci_load run. Appends "req_per_s p50 p99
# server_cpu_ns_per_req" to $OUT/cell.SERVER.METHOD.CONNS, and abci_load's JSON line with the
# server's CPU added to results.jsonl.
load() {
  local server=$1 method=$2 conns=$3 requests=$4 out cpu_before cpu_after
  cpu_before=$(cpu_ns "${server_pid[$server]}")
  out=$("$LOAD" --address "tcp://127.0.0.1:${port[$server]}" --method "$method" \
    --requests "$requests" --connections "$conns" --tx-bytes "$TX_BYTES" \
    --flush-every "$FLUSH_EVERY" --window "$WINDOW" --keys "$KEYS" --label "$server") ||
    die "abci_load failed against $server ($method, $conns connections); logs in $OUT"
  cpu_after=$(cpu_ns "${server_pid[$server]}")
  local server_cpu=$(((cpu_after - cpu_before) / requests))
  grep '^{' <<<"$out" | sed "s/}\$/,\"server_cpu_ns_per_req\":$server_cpu}/" >>"$OUT/results.jsonl"
  local kv
  kv=$(grep '^label=' <<<"$out")
  field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$kv"; }
  echo "$(field req_per_s) $(field p50_us) $(field p99_us) $server_cpu" \
    >>"$OUT/cell.$server.$method.$conns"
}

say "warm-up"
for server in kairos go; do load "$server" echo 1 $((REQUESTS / 10 + 1)); done
rm -f "$OUT"/cell.* "$OUT/results.jsonl"  # the warm-up is not a measurement

# CheckTx is not compared here: kairosd's CheckTx runs a signed Cosmos tx through the whole
# ante pipeline, the kvstore's checks a "key=value" format; no shared payload is a fair
# comparison. test/bench/tx_bench measures it against the raw signature-verify rate instead.
methods=(echo)
conn_counts=(1 4)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for method in "${methods[@]}"; do
  for conns in "${conn_counts[@]}"; do
    for round in $(seq "$ROUNDS"); do
      # Alternate which server goes first, so neither always follows the other.
      order=(kairos go)
      ((round % 2 == 0)) && order=(go kairos)
      for server in "${order[@]}"; do
        say "$method x$conns round $round/$ROUNDS: $server"
        load "$server" "$method" "$conns" "$REQUESTS"
      done
    done
  done
done

# The line of a cell file with the median req/s.
median() { sort -n "$1" | sed -n "$((($(wc -l <"$1") + 1) / 2))p"; }

echo
printf 'ABCI socket load: %s requests per run, %s-byte txs (%s distinct keys),' \
  "$REQUESTS" "$TX_BYTES" "$KEYS"
printf ' Flush every %s, window %s per connection\n' "$FLUSH_EVERY" "$WINDOW"
printf 'Each cell: the run with the median req/s of %s per server. Load average at start: %s\n' \
  "$ROUNDS" "$load_before"
row() { printf '%-9s %5s %13s %13s %6s %18s %18s %11s %11s\n' "$@"; }
row method conns "kairos req/s" "go req/s" ratio "kairos p50/p99 us" "go p50/p99 us" \
  "kairos cpu" "go cpu"
for method in "${methods[@]}"; do
  for conns in "${conn_counts[@]}"; do
    read -r k_rate k_p50 k_p99 k_cpu < <(median "$OUT/cell.kairos.$method.$conns")
    read -r g_rate g_p50 g_p99 g_cpu < <(median "$OUT/cell.go.$method.$conns")
    ratio=$(awk -v a="$k_rate" -v b="$g_rate" 'BEGIN { printf "%.2f", a / b }')
    row "$method" "$conns" "$k_rate" "$g_rate" "${ratio}x" "$k_p50/$k_p99" "$g_p50/$g_p99" \
      "$k_cpu ns" "$g_cpu ns"
  done
done
cat <<EOF

Notes:
- go = \`abci-cli kvstore\` of CometBFT ${COMETBFT_VERSION} (Go socket server, in-memory kvstore);
  kairos = kairosd (Release, default config: $(grep -E '^io_threads' "$OUT/kairos-home/config.toml" ||
  echo 'io_threads = ?') plus the application thread).
- Echo is answered without application logic by both (Go: in the socket server; kairos:
  Application::Echo on the application thread), so it compares the transports.
- CheckTx is measured by test/bench/tx_bench (signed MsgSend txs against the raw secp256k1
  verify rate), not here: the kvstore's CheckTx checks a "key=value" format, kairosd's runs the
  ante pipeline on a signed Cosmos tx, so no payload is valid for both.
- Client and servers share this machine's $(nproc) cores; that is equally true for both servers.
  Other work on the machine (see the load average above) adds noise.
- cpu = the server process's CPU time (all threads) per request during the run. With a fixed
  window, req/s is about window x connections / latency, so it also reflects scheduling on the
  shared cores; cpu is the cleaner measure of each server's own cost.
- Latency = a request's batch handed to write() -> its response parsed by the client.
  Raw JSON lines: $OUT/results.jsonl.
EOF
