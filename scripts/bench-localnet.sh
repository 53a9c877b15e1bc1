#!/usr/bin/env bash
# The localnet benchmark (not a test): the highest rate of bank transfers the 4-validator (or
# --nodes N) Kairos
# localnet holds for a whole run with p99 inclusion latency under 5 s, and, in the same run, the
# same search on the same topology with CometBFT's built-in kvstore app (txs of the same size).
#
#   scripts/bench-localnet.sh [--quick] [--duration S] [--start-rate N] [--max-rate N]
#                             [--accounts K] [--unordered-share P] [--connections C]
#                             [--apps "kairos kairos-app kairos-direct kvstore kvstore-socket"]
#                             [--nodes N] [--rate N]
#
#   --quick          20 s runs, 1 bisection step (about 5-10 minutes instead of 20-25)
#   --duration S     seconds per run (default 60; --quick 20)
#   --start-rate N   first rate tried (default 100 tx/s); each pass doubles it until a run
#                    fails, then the gap is bisected (3 steps; --quick 1)
#   --max-rate N     stop doubling here (default 20000)
#   --connections C  the generator's keep-alive connections per node (default 32)
#   --apps LIST      which localnets, in order (default "kairos kvstore"): kairos is Kairos beside
#                    CometBFT v0.38.25; kairos-app Kairos beside CometBFT v0.40.0 in app-mempool
#                    mode (mempool.type = "app", docs/app-mempool.md); kvstore is CometBFT's
#                    built-in kvstore in CometBFT's process; kvstore-socket the same app as a
#                    process of its own over the ABCI socket (abci-cli kvstore), as kairosd is;
#                    kairos-direct the kairos-app network with the generator sending through
#                    each kairosd's REST BroadcastTx (POST /cosmos/tx/v1beta1/txs), which puts
#                    the tx straight into kairosd's mempool (direct ingestion, app/api/README.md)
#   --nodes N        validators per network (default 4; 1 for a single node)
#   --index-events L kairosd's tx.index_events for the Kairos networks (a TOML array, e.g.
#                    '["message.sender","transfer.recipient"]'; default: every attribute)
#   --rate N         no search: one run per app at N tx/s (above what the node holds, for a
#                    saturating load), reported whatever its verdict, with the CPU each process
#                    spent per included tx
#
# A run passes when the generator sent every tx on schedule (send rate >= 95% of the target),
# the nodes accepted >= 99% of them, every accepted tx was seen in a block, and p99 inclusion
# latency (send -> block seen) < 5000 ms. The figure reported for each app is the TPS measured
# in its best passing run (included txs / max(send span, last inclusion)).
#
# Each network lives in a temp directory on free ports and is deleted at the end (KEEP=1 keeps
# them). KAIROSD (default build/release/app/kairosd, built by localnet.sh when missing) and
# COMETBFT as for scripts/localnet.sh. Every run's JSON goes to $OUT (default
# /tmp/kairos-bench-localnet-<date>.jsonl); the summary is printed at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
QUICK=0
DURATION=""
START_RATE=100
MAX_RATE=20000
ACCOUNTS=200
CONNECTIONS=32
UNORDERED=0
APPS="kairos kvstore"
NODES=4
FIXED_RATE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --duration) DURATION=$2; shift ;;
    --start-rate) START_RATE=$2; shift ;;
    --max-rate) MAX_RATE=$2; shift ;;
    --accounts) ACCOUNTS=$2; shift ;;
    --connections) CONNECTIONS=$2; shift ;;
    --unordered-share) UNORDERED=$2; shift ;;
    --apps) APPS=$2; shift ;;
    --nodes) NODES=$2; shift ;;
    --rate) FIXED_RATE=$2; shift ;;
    --index-events) export KAIROS_LOCALNET_KAIROSD_CONFIG="tx.index_events=$2"; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "bench-localnet: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$QUICK" = 1 ]; then
  DURATION=${DURATION:-20}; BISECT=1
else
  DURATION=${DURATION:-60}; BISECT=3
fi
[[ "$DURATION" =~ ^[0-9]+$ && "$START_RATE" =~ ^[0-9]+$ && "$MAX_RATE" =~ ^[0-9]+$ &&
   "$FIXED_RATE" =~ ^[0-9]+$ && "$NODES" =~ ^[1-9]$ ]] ||
  { echo "bench-localnet: --duration, --start-rate, --max-rate and --rate take whole numbers, --nodes 1 to 9" >&2; exit 2; }
export KAIROS_LOCALNET_NODES=$NODES
NODE_IDS=$(seq 0 $((NODES - 1)))

KAIROSD=${KAIROSD:-$ROOT/build/release/app/kairosd}
if [ ! -x "$KAIROSD" ]; then
  echo "bench-localnet: building $KAIROSD (scripts/build.sh release)"
  bash "$ROOT/scripts/build.sh" release
fi
export KAIROSD
export KAIROS_KEYRING_PASSPHRASE=${KAIROS_KEYRING_PASSPHRASE:-kairos-localnet}
OUT=${OUT:-/tmp/kairos-bench-localnet-$(date +%Y%m%d-%H%M%S).jsonl}
WORK=$(mktemp -d /tmp/kairos-bench-localnet.XXXXXX)
: >"$OUT"

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

free_base() {
  python3 - <<'EOF'
import random, socket
for _ in range(100):
    base = random.randrange(10000, 32700)  # below the kernel's ephemeral ports (32768..)
    socks = []
    try:
        for p in range(base, base + 40):
            s = socket.socket(); socks.append(s); s.bind(("127.0.0.1", p))
        print(base); break
    except OSError:
        pass
    finally:
        for s in socks: s.close()
EOF
}

# The field $2 of the JSON object in file $1 (nested with dots: latency_ms.p99); "" for null.
field() {
  python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print("" if v is None else v)' "$1" "$2"
}

CURRENT_APP=""
CURRENT_DIR=""
net() {
  local app=$CURRENT_APP
  [ "$app" = kairos-direct ] && app=kairos-app  # the same network; only the generator differs
  KAIROS_LOCALNET_APP=$app KAIROS_LOCALNET_DIR=$CURRENT_DIR bash "$ROOT/scripts/localnet.sh" "$@"
}
cleanup() {
  if [ -n "$CURRENT_DIR" ] && [ -d "$CURRENT_DIR" ]; then
    net stop >/dev/null 2>&1 || true
    [ "${KEEP:-0}" = 1 ] || net reset >/dev/null 2>&1 || true
  fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

height_of() {  # $1 rpc port
  curl -s "http://127.0.0.1:$1/status" 2>/dev/null |
    python3 -c 'import json, sys
print(json.load(sys.stdin)["result"]["sync_info"]["latest_block_height"])' 2>/dev/null || echo 0
}

wait_height() {  # $1 rpc port, $2 height
  for _ in $(seq 600); do
    [ "$(height_of "$1")" -ge "$2" ] && return 0
    sleep 0.2
  done
  echo "bench-localnet: port $1 did not reach height $2 in 120 s" >&2
  return 1
}

mempool_txs() {  # the txs in the nodes' mempools, summed
  local i n=0
  for i in $NODE_IDS; do
    if [ "$CURRENT_APP" = kairos-app ] || [ "$CURRENT_APP" = kairos-direct ]; then
      # App-mempool mode: CometBFT keeps no mempool (/num_unconfirmed_txs is always 0); the
      # txs wait in kairosd's pool, which its metrics endpoint reports.
      n=$((n + $(curl -s "http://127.0.0.1:$((BASE + 10 * i + 4))/metrics" |
        awk '$1 == "kairos_mempool_txs" { print int($2); found = 1 } END { if (!found) print 1 }')))
    else
      n=$((n + $(curl -s "http://127.0.0.1:$((BASE + 10 * i + 1))/num_unconfirmed_txs" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["result"]["total"])' 2>/dev/null ||
        echo 1)))
    fi
  done
  echo "$n"
}

# Each run starts with empty mempools. A failed run can leave a backlog that drains, or txs that
# never will: under overload CometBFT refuses some of a sender's ordered txs ("mempool is full")
# and Kairos's app mempool parks the sender's later sequences behind the gap (no TTL in the
# default config), so both mempools stay full. Waits up to 60 s for them to empty, then restarts
# the network (the chain goes on; mempools are not persisted).
wait_mempools_empty() {
  local n
  for _ in $(seq 300); do
    n=$(mempool_txs)
    [ "$n" = 0 ] && return 0
    sleep 0.2
  done
  log "$CURRENT_APP: $n txs still in the mempools after 60 s; restarting the localnet"
  net stop >&2
  net start >&2
  for i in $NODE_IDS; do wait_height $((BASE + 10 * i + 1)) "$(($(height_of $((BASE + 1))) + 2))"; done
  n=$(mempool_txs)
  [ "$n" = 0 ] || log "$CURRENT_APP: $n txs in the mempools after the restart"
}

# CPU seconds (user + system) used so far by the live processes of each kind, from /proc:
# "kairosd=<s> cometbft=<s>".
cpu_now() {
  python3 - "$CURRENT_DIR/pids" <<'EOF'
import os, sys
tick = os.sysconf("SC_CLK_TCK")
used = {"kairosd": 0.0, "cometbft": 0.0}
for name in os.listdir(sys.argv[1]):
    kind = name.split(".")[0].rstrip("0123456789")
    try:
        pid = int(open(os.path.join(sys.argv[1], name)).read())
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        used[kind] = used.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    except (OSError, ValueError):
        pass
print(" ".join(f"{k}={v:.2f}" for k, v in used.items()))
EOF
}

# One run at rate $1; prints "pass" or "fail"; the JSON in $WORK/run.json is appended to $OUT.
run_at() {
  local rate=$1 args=() nodes=()
  local i
  for i in $NODE_IDS; do
    nodes+=(--node "http://127.0.0.1:$((BASE + 10 * i + 1))")
    [ "$CURRENT_APP" = kairos-direct ] && nodes+=(--api "http://127.0.0.1:$((BASE + 10 * i + 6))")
  done
  if [[ "$CURRENT_APP" != kairos* ]]; then
    args=(--kvstore --tx-size "$TX_SIZE")
  else
    args=(--accounts "$ACCOUNTS" --unordered-share "$UNORDERED" --fund-from user0
      --fund-amount 1000000000stake)
  fi
  wait_mempools_empty
  local load cpu_before cpu_after
  load=$(loadavg)
  cpu_before=$(cpu_now)
  if ! /usr/bin/time -o "$WORK/run.time" -f "%U %S" \
    "$KAIROSD" --home "$CURRENT_DIR/keyring" bench load --rate "$rate" --duration "${DURATION}s" \
    "${nodes[@]}" "${args[@]}" --connections "$CONNECTIONS" --drain 30s --output json \
    >"$WORK/run.json" 2>"$WORK/run.err"; then
    cat "$WORK/run.err" >&2
    echo "bench-localnet: kairosd bench load failed" >&2
    exit 1
  fi
  cpu_after=$(cpu_now)
  python3 - "$WORK/run.json" "$CURRENT_APP" "$load" "$cpu_before" "$cpu_after" "$WORK/run.time" \
    >>"$OUT" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); r["app"] = sys.argv[2]; r["loadavg_before"] = sys.argv[3]
before = dict(kv.split("=") for kv in sys.argv[4].split())
after = dict(kv.split("=") for kv in sys.argv[5].split())
# CPU seconds over the run, the nodes summed; the generator's includes its signing.
r["cpu_s"] = {k: round(float(after[k]) - float(before.get(k, 0)), 2) for k in after}
gen = open(sys.argv[6]).read().split()[-2:]
r["cpu_s"]["generator"] = round(float(gen[0]) + float(gen[1]), 2)
print(json.dumps(r))
EOF
  python3 - "$OUT" "$rate" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1]); rate = float(sys.argv[2])
p99 = r["latency_ms"]["p99"]
ok = (r["sent"] == r["planned"] and r["send_rate"] >= 0.95 * rate and
      r["accepted"] >= 0.99 * r["sent"] and r["accepted_not_included"] == 0 and
      p99 is not None and p99 < 5000)
rej = ", ".join(f'{v["count"]} x {k}' for k, v in r["rejections"].items()) or "none"
print(f'{"pass" if ok else "fail"} rate {rate:.0f}: sent {r["sent"]}/{r["planned"]} at '
      f'{r["send_rate"]}/s (lag {r["max_send_lag_ms"]} ms), accepted {r["accepted"]}, '
      f'included {r["included"]}, TPS {r["tps"]}, p50 {r["latency_ms"]["p50"]} ms, p99 {p99} ms, '
      f'{r["blocks"]} blocks, CPU s {r["cpu_s"]}; rejections: {rej}', file=sys.stderr)
print("pass" if ok else "fail")
EOF
}

checked() { [ "$1" = pass ] || [ "$1" = fail ] || { echo "bench-localnet: a run failed to run" >&2; exit 1; }; }

# Doubling then bisection; sets BEST_RATE and BEST_JSON (the best passing run's JSON).
search() {
  local rate=$START_RATE lo=0 hi=0 verdict
  BEST_RATE=0; BEST_JSON=""
  while :; do
    verdict=$(run_at "$rate")
    checked "$verdict"
    if [ "$verdict" = pass ]; then
      lo=$rate; BEST_RATE=$rate; BEST_JSON=$(tail -n 1 "$OUT")
      [ "$rate" -ge "$MAX_RATE" ] && break
      rate=$((rate * 2)); [ "$rate" -gt "$MAX_RATE" ] && rate=$MAX_RATE
    else
      hi=$rate; break
    fi
  done
  local step
  for step in $(seq "$BISECT"); do
    [ "$hi" -gt 0 ] && [ "$lo" -gt 0 ] || break
    rate=$(((lo + hi) / 2))
    [ $((hi - lo)) -le $((lo / 20)) ] && break  # within 5%
    verdict=$(run_at "$rate")
    checked "$verdict"
    if [ "$verdict" = pass ]; then
      lo=$rate; BEST_RATE=$rate; BEST_JSON=$(tail -n 1 "$OUT")
    else
      hi=$rate
    fi
  done
  LAST_FAIL=$hi
}

bench_app() {
  CURRENT_APP=$1
  CURRENT_DIR="$WORK/$1"
  BASE=$(free_base)
  log "$1: $NODES-validator localnet in $CURRENT_DIR, ports $BASE.., load $(loadavg)"
  KAIROS_LOCALNET_PORT=$BASE net start >&2
  for i in $NODE_IDS; do wait_height $((BASE + 10 * i + 1)) 2; done
  if [ "$FIXED_RATE" -gt 0 ]; then
    checked "$(run_at "$FIXED_RATE")"
    BEST_RATE=$FIXED_RATE; BEST_JSON=$(tail -n 1 "$OUT"); LAST_FAIL=0
  else
    search
  fi
  net stop >&2
  [ "${KEEP:-0}" = 1 ] || net reset >/dev/null
  CURRENT_DIR=""
}

START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD_START=$(loadavg)
T0=$(date +%s)
log "bench-localnet: $([ "$QUICK" = 1 ] && echo quick || echo full) search, ${DURATION}s per run, \
$ACCOUNTS accounts, unordered share $UNORDERED, kairosd $KAIROSD \
(config: ${KAIROS_LOCALNET_KAIROSD_CONFIG:-default}); runs -> $OUT"
TX_SIZE=0
declare -A BEST FAILED
for app in $APPS; do
  case "$app" in kairos|kairos-app|kairos-direct|kvstore|kvstore-socket) ;; *) echo "bench-localnet: unknown app '$app'" >&2; exit 2 ;; esac
  if [[ "$app" != kairos* ]]; then
    # kvstore txs as large as the signed transfers of the Kairos runs (else of this shape).
    TX_SIZE=$(python3 -c 'import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
k=[r["tx_bytes_avg"] for r in rows if r["app"].startswith("kairos")]
print(k[-1] if k else 0)' "$OUT")
  fi
  bench_app "$app"
  BEST[$app]=$BEST_JSON; FAILED[$app]=$LAST_FAIL
done
LOAD_END=$(loadavg)

SUMMARY_ARGS=()
for app in $APPS; do SUMMARY_ARGS+=("$app" "${BEST[$app]}" "${FAILED[$app]:-0}"); done
python3 - "${SUMMARY_ARGS[@]}" <<EOF
import json, sys
args = sys.argv[1:]
names = {"kairos": "Kairos (bank MsgSend), CometBFT v0.38.25",
         "kairos-app": "Kairos (bank MsgSend), CometBFT v0.40.0 app mempool",
         "kairos-direct": "Kairos (bank MsgSend), v0.40.0 app mempool, direct ingestion (REST)",
         "kvstore": "CometBFT kvstore (in process)",
         "kvstore-socket": "CometBFT kvstore (ABCI socket)"}
tps = {}
print()
import os
print("started $START, $(( $(date +%s) - T0 )) s, ${DURATION} s per run, $NODES node(s), "
      "kairosd config: " + (os.environ.get("KAIROS_LOCALNET_KAIROSD_CONFIG") or "default") +
      ", nproc $(nproc), "
      "loadavg $LOAD_START at the start, $LOAD_END at the end")
fixed = $FIXED_RATE > 0
if fixed:
    print("| app | rate sent, tx/s | TPS | p50 ms | p99 ms | tx bytes | CPU ms per included tx: "
          "app / CometBFT / generator (incl. signing) |")
else:
    print("| app | highest passing rate, tx/s | TPS | p50 ms | p99 ms | tx bytes | first failing rate |")
print("|---|---|---|---|---|---|---|")
for i in range(0, len(args), 3):
    app, text, fail = args[i], args[i + 1], args[i + 2]
    if not text:
        print(f"| {names[app]} | - | no passing run | | | | {fail} |")
        continue
    r = json.loads(text)
    tps[app] = r["tps"]
    if fixed:
        inc = max(1, r["included"])
        cpu = r["cpu_s"]
        per = " / ".join(f'{1000 * cpu.get(k, 0) / inc:.3f}' for k in ("kairosd", "cometbft", "generator"))
        print(f'| {names[app]} | {r["send_rate"]} | {r["tps"]} | {r["latency_ms"]["p50"]} | '
              f'{r["latency_ms"]["p99"]} | {r["tx_bytes_avg"]} | {per} |')
        continue
    print(f'| {names[app]} | {r["rate"]:.0f} | {r["tps"]} | {r["latency_ms"]["p50"]} | '
          f'{r["latency_ms"]["p99"]} | {r["tx_bytes_avg"]} | {fail if int(fail) else "-"} |')
for kairos in ("kairos", "kairos-app", "kairos-direct"):
    for base in ("kvstore", "kvstore-socket"):
        if kairos in tps and base in tps:
            print(f"{kairos} / {base} = {tps[kairos] / tps[base]:.2f}")
print("every run: $OUT")
EOF
