#!/usr/bin/env bash
# Command 1: installs what is missing, builds Release, and runs a single-validator dev chain:
# kairosd plus CometBFT v0.38.25, both on loopback. A new chain gets funded dev accounts whose
# keys are in the keyring, so the commands it prints send a first transfer at once. Ctrl-C (or
# SIGTERM) stops CometBFT, then kairosd, prints "stopped" and exits 0; if either process fails on
# its own, the other is stopped, the tails of both logs are printed and the exit status is 1.
#
#   scripts/run-node.sh [--reset] [--accounts N]
#
#   --reset        start a new chain: delete kairosd's chain data (data/) and the CometBFT home
#                  (blocks, genesis, validator key); keep the keyrings, client.toml, config.toml
#   --accounts N   how many dev accounts a new chain gets (dev0, dev1, ...; default 1)
#
#   KAIROS_HOME    kairosd home (default ~/.kairos); CometBFT's home is $KAIROS_HOME/cometbft
#   ABCI_PORT, RPC_PORT, P2P_PORT   default 26658, 26657, 26656. Applied whenever given, on an
#                  existing home too (the keys it changes are printed); when not given, an
#                  existing home keeps its ports
#   GRPC_PORT, API_PORT   kairosd's gRPC and REST (LCD) ports, default 9090 and 1317: the same
#   DEV_ACCOUNTS   as --accounts
#   KAIROSD        a kairosd binary to use: setup and build are skipped (the tests use the
#                  sanitizer build); COMETBFT likewise for CometBFT (default .tools/bin/cometbft)
#
# The dev accounts' keys use the "test" keyring backend (keyring-test.json, a fixed passphrase;
# README, "Talking to it"): for this local chain only.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "run-node.sh: $*" >&2; exit 2; }

reset=0
accounts=${DEV_ACCOUNTS:-1}
while [ $# -gt 0 ]; do
  case "$1" in
    --reset) reset=1 ;;
    --accounts) [ $# -ge 2 ] || die "--accounts needs a number"; accounts=$2; shift ;;
    --accounts=*) accounts=${1#*=} ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
  shift
done
case "$accounts" in ''|*[!0-9]*) die "--accounts must be a number from 1 to 100, got '$accounts'" ;; esac
[ "$accounts" -ge 1 ] && [ "$accounts" -le 100 ] || die "--accounts must be from 1 to 100, got $accounts"
for var in ABCI_PORT RPC_PORT P2P_PORT; do
  value=${!var:-}
  case "$value" in ''|[1-9]|[1-9][0-9]|[1-9][0-9][0-9]|[1-9][0-9][0-9][0-9]|[1-9][0-9][0-9][0-9][0-9]) ;;
    *) die "$var must be a port number, got '$value'" ;; esac
done

if [ -z "${KAIROSD:-}" ]; then
  bash "$ROOT/scripts/setup.sh"
  bash "$ROOT/scripts/build.sh" release
  KAIROSD="$ROOT/build/release/app/kairosd"
fi
COMETBFT=${COMETBFT:-$ROOT/.tools/bin/cometbft}
[ -x "$KAIROSD" ] || die "no kairosd at $KAIROSD"
[ -x "$COMETBFT" ] || die "no cometbft at $COMETBFT (scripts/setup.sh installs it)"
CONFIG_PY="$ROOT/scripts/cometbft_config.py"

DEFAULT_HOME="$HOME/.kairos"
KAIROS_HOME=${KAIROS_HOME:-$DEFAULT_HOME}
mkdir -p "$KAIROS_HOME"
KAIROS_HOME=$(cd "$KAIROS_HOME" && pwd)
CMT_HOME="$KAIROS_HOME/cometbft"
CMT_CONFIG="$CMT_HOME/config/config.toml"
KAIROSD_LOG="$KAIROS_HOME/kairosd.log"
CMT_LOG="$KAIROS_HOME/cometbft.log"
DEV_COINS=100000000000stake

# One run-node.sh per home: a second one (or a --reset) while the node runs would break it. The
# lock's descriptor is closed for the node's processes (9>&-), so it dies with this script.
exec 9>"$KAIROS_HOME/run-node.lock"
flock -n 9 || die "another run-node.sh is running on $KAIROS_HOME (stop it first)"

kairosd() { "$KAIROSD" "$@" --home "$KAIROS_HOME"; }
# How the printed commands call kairosd: relative to the current directory when it is inside it,
# with --home only when the home is not the default one.
K=$KAIROSD
case "$K" in "$PWD"/*) K=${K#"$PWD"/} ;; esac
[ "$KAIROS_HOME" = "$DEFAULT_HOME" ] || K="$K --home $KAIROS_HOME"

# The kairosd data directory: config.toml's db.dir, relative to the home unless absolute.
data_dir() {
  local dir=data
  [ -f "$KAIROS_HOME/config.toml" ] && dir=$(python3 "$CONFIG_PY" --get "$KAIROS_HOME/config.toml" db.dir)
  case "$dir" in /*) echo "$dir" ;; *) echo "$KAIROS_HOME/$dir" ;; esac
}

if [ "$reset" = 1 ]; then
  removed=()
  for path in "$(data_dir)" "$CMT_HOME"; do
    if [ -e "$path" ]; then rm -rf "$path"; removed+=("$path"); fi
  done
  echo "reset: removed ${removed[*]:-nothing (no chain yet)}; kept the keyrings, client.toml and config.toml"
fi

[ -f "$KAIROS_HOME/config.toml" ] || kairosd init >/dev/null
# kairosd's gRPC and REST ports, when given (config.toml's grpc.address and api.address), and
# the CometBFT RPC its servers read blocks and node info from (query.cometbft_rpc).
app_keys=()
[ -n "${GRPC_PORT:-}" ] && app_keys+=(grpc.address="127.0.0.1:$GRPC_PORT")
[ -n "${API_PORT:-}" ] && app_keys+=(api.address="127.0.0.1:$API_PORT")
[ -n "${RPC_PORT:-}" ] && app_keys+=(query.cometbft_rpc="http://127.0.0.1:$RPC_PORT")
if [ ${#app_keys[@]} -gt 0 ]; then
  while IFS= read -r change; do
    echo "kairosd config ($KAIROS_HOME/config.toml): $change"
  done < <(python3 "$CONFIG_PY" --report "$KAIROS_HOME/config.toml" "${app_keys[@]}")
fi
new_chain=0
if [ ! -f "$CMT_HOME/config/genesis.json" ]; then
  if [ -n "$(ls -A "$(data_dir)" 2>/dev/null)" ]; then
    die "kairosd has chain data in $(data_dir) but there is no CometBFT home at $CMT_HOME: run scripts/run-node.sh --reset to start a new chain (it keeps the keys)"
  fi
  new_chain=1
  rm -rf "$CMT_HOME"
  "$COMETBFT" init --home "$CMT_HOME" >/dev/null 2>&1
  python3 "$CONFIG_PY" "$CMT_CONFIG" moniker=kairos-dev instrumentation.prometheus=false \
    rpc.laddr="tcp://127.0.0.1:${RPC_PORT:-26657}" p2p.laddr="tcp://127.0.0.1:${P2P_PORT:-26656}" \
    proxy_app="tcp://127.0.0.1:${ABCI_PORT:-26658}"
else
  # The port variables given are applied to the existing home, and said.
  keys=()
  [ -n "${RPC_PORT:-}" ] && keys+=(rpc.laddr="tcp://127.0.0.1:$RPC_PORT")
  [ -n "${P2P_PORT:-}" ] && keys+=(p2p.laddr="tcp://127.0.0.1:$P2P_PORT")
  [ -n "${ABCI_PORT:-}" ] && keys+=(proxy_app="tcp://127.0.0.1:$ABCI_PORT")
  if [ ${#keys[@]} -gt 0 ]; then
    while IFS= read -r change; do
      echo "CometBFT config ($CMT_CONFIG): $change"
    done < <(python3 "$CONFIG_PY" --report "$CMT_CONFIG" "${keys[@]}")
  fi
fi
# The ports in effect, read back from CometBFT's config.
port_of() { local a; a=$(python3 "$CONFIG_PY" --get "$CMT_CONFIG" "$1"); echo "${a##*:}"; }
ABCI_PORT=$(port_of proxy_app)
RPC_PORT=$(port_of rpc.laddr)
P2P_PORT=$(port_of p2p.laddr)
RPC_URL="http://127.0.0.1:$RPC_PORT"
CHAIN_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["chain_id"])' "$CMT_HOME/config/genesis.json")

# The client config beside the keyring: its node follows RPC_PORT. A new client.toml uses the
# test keyring backend, where the dev keys are, unless the home already has keys of the file
# backend (they stay the default then; the printed commands name the test backend).
if [ ! -f "$KAIROS_HOME/client.toml" ]; then
  if [ -f "$KAIROS_HOME/keyring.json" ]; then
    kairosd config set keyring-backend file >/dev/null
  else
    kairosd config set keyring-backend test >/dev/null
  fi
  echo "wrote $KAIROS_HOME/client.toml (keyring-backend = \"$(kairosd config get keyring-backend)\", node = \"$RPC_URL\")"
fi
if [ "$(kairosd config get node)" != "$RPC_URL" ]; then
  [ "$new_chain" = 1 ] || echo "client.toml: node = \"$RPC_URL\" (was \"$(kairosd config get node)\")"
  kairosd config set node "$RPC_URL" >/dev/null
fi
# The dev keys are in the test keyring; say so on the command line if client.toml uses another.
KT=""
[ "$(kairosd config get keyring-backend)" = test ] || KT=" --keyring-backend test"

# Dev accounts: made (or reused from the keyring) and funded in a new chain's genesis.
dev_names=()
if [ "$new_chain" = 1 ]; then
  echo
  echo "A new dev chain, $CHAIN_ID, with $accounts funded dev account(s). FOR THIS LOCAL CHAIN ONLY:"
  echo "their keys are in $KAIROS_HOME/keyring-test.json under a fixed, public passphrase (the"
  echo "\"test\" keyring backend). Never send real funds to these addresses or use these"
  echo "mnemonics anywhere else."
  echo
  for i in $(seq 0 $((accounts - 1))); do
    name="dev$i"
    if address=$(kairosd keys show "$name" --address --keyring-backend test 2>/dev/null); then
      mnemonic=$(kairosd keys export "$name" --keyring-backend test)
      note=" (reused from the keyring)"
    else
      added=$(kairosd keys add "$name" --keyring-backend test --output json)
      address=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["address"])' "$added")
      mnemonic=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["mnemonic"])' "$added")
      note=""
    fi
    kairosd genesis add-account "$name" "$DEV_COINS" --keyring-backend test >/dev/null
    dev_names+=("$name")
    echo "  $name  $address  $DEV_COINS$note"
    echo "        mnemonic: $mnemonic"
  done
else
  echo "reusing the chain $CHAIN_ID in $CMT_HOME (scripts/run-node.sh --reset starts a new one and keeps the keys)"
  # The dev keys this chain funded: those of the test keyring that its genesis lists.
  while IFS= read -r name; do dev_names+=("$name"); done < <(
    kairosd keys list --keyring-backend test --output json 2>/dev/null | python3 -c '
import json, sys
genesis = json.load(open(sys.argv[1]))
state = genesis.get("app_state") or {}
funded = {b["address"] for b in (state.get("bank") or {}).get("balances", [])}
for key in json.load(sys.stdin):
    if key["name"].startswith("dev") and key["address"] in funded:
        print(key["name"])' "$CMT_HOME/config/genesis.json")
  [ ${#dev_names[@]} -gt 0 ] || echo "(this chain has no dev accounts in its genesis: it was made before run-node.sh funded any; --reset makes a new chain with them)"
fi

# ---- run ------------------------------------------------------------------------------------
kairos_pid=""
cmt_pid=""

# Running, and not a zombie (a child that exited but was not waited for still answers kill -0).
alive() {
  local stat
  [ -n "$1" ] && stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

tails() {
  echo "--- last lines of $KAIROSD_LOG:" >&2; tail -n 15 "$KAIROSD_LOG" >&2 || true
  echo "--- last lines of $CMT_LOG:" >&2; tail -n 15 "$CMT_LOG" >&2 || true
}

# SIGTERM to one process and its exit status (SIGKILL after 30 s).
stop_one() {
  local name=$1 pid=$2 rc=0 watchdog
  alive "$pid" || { wait "$pid" 2>/dev/null || rc=$?; return "$rc"; }
  kill -TERM "$pid" 2>/dev/null || true
  # The watchdog takes its sleep with it when it is stopped first (no stray sleep is left).
  ( trap 'kill $! 2>/dev/null; exit 0' TERM; sleep 30 & wait $!; kill -KILL "$pid" 2>/dev/null ) 9>&- &
  watchdog=$!
  wait "$pid" 2>/dev/null || rc=$?
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  if [ "$rc" != 0 ]; then echo "$name exited with status $rc while stopping" >&2; fi
  return "$rc"
}

# Both processes down, CometBFT first (so kairosd gets no request after it stopped).
stop_both() {
  local failed=0
  [ -z "$cmt_pid" ] || stop_one CometBFT "$cmt_pid" || failed=1
  [ -z "$kairos_pid" ] || stop_one kairosd "$kairos_pid" || failed=1
  cmt_pid="" kairos_pid=""
  return "$failed"
}

# Ctrl-C or SIGTERM: an orderly stop, exit 0 unless a process failed to stop cleanly.
on_signal() {
  trap '' INT TERM  # a second Ctrl-C does not cut the stop short
  echo
  echo "stopping CometBFT, then kairosd..."
  if stop_both; then
    echo "stopped"
    exit 0
  fi
  tails
  exit 1
}

# A process that ended on its own: stop the other, show why, exit 1.
on_failure() {
  trap '' INT TERM
  echo "$1; stopping the node" >&2
  stop_both || true
  tails
  exit 1
}

# Anything else that ends this script leaves no process behind.
trap 'stop_both >/dev/null 2>&1 || true' EXIT
trap on_signal INT TERM

echo "=== run-node.sh $(date -u +%FT%TZ): chain $CHAIN_ID" >>"$KAIROSD_LOG"
# Each in its own session (setsid): the terminal's Ctrl-C reaches this script only, which then
# stops CometBFT before kairosd, instead of both getting SIGINT at once.
setsid "$KAIROSD" start --home "$KAIROS_HOME" --abci-address "tcp://127.0.0.1:$ABCI_PORT" \
  >>"$KAIROSD_LOG" 2>&1 9>&- </dev/null &
kairos_pid=$!
listening=0
for _ in $(seq 300); do  # up to 30 s for kairosd to listen (a large store takes a while)
  if (exec 3<>"/dev/tcp/127.0.0.1/$ABCI_PORT") 2>/dev/null; then listening=1; break; fi
  alive "$kairos_pid" || { rc=0; wait "$kairos_pid" || rc=$?; kairos_pid=""; on_failure "kairosd failed to start (status $rc)"; }
  sleep 0.1
done
[ "$listening" = 1 ] || on_failure "kairosd does not listen on 127.0.0.1:$ABCI_PORT after 30 s"
setsid "$COMETBFT" start --home "$CMT_HOME" >>"$CMT_LOG" 2>&1 9>&- </dev/null &
cmt_pid=$!

# Ready once CometBFT's RPC reports a block: the printed commands then work as printed.
rpc_height() {
  python3 -c '
import json, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1] + "/status", timeout=2) as r:
        print(json.load(r)["result"]["sync_info"]["latest_block_height"])
except Exception:
    print(0)' "$RPC_URL"
}
height=0
for _ in $(seq 600); do
  height=$(rpc_height)
  [ "$height" -ge 1 ] && break
  alive "$kairos_pid" || on_failure "kairosd exited while CometBFT was starting"
  alive "$cmt_pid" || on_failure "CometBFT exited at start (is port $RPC_PORT or $P2P_PORT taken?)"
  sleep 0.1
done
[ "$height" -ge 1 ] || on_failure "no block after 60 s"

echo
echo "kairosd   pid $kairos_pid, ABCI tcp://127.0.0.1:$ABCI_PORT, log $KAIROSD_LOG"
grpc_at=$(python3 "$CONFIG_PY" --get "$KAIROS_HOME/config.toml" grpc.address 2>/dev/null || true)
rest_at=$(python3 "$CONFIG_PY" --get "$KAIROS_HOME/config.toml" api.address 2>/dev/null || true)
echo "          gRPC ${grpc_at:-off}, REST ${rest_at:+http://}${rest_at:-off}"
echo "cometbft  pid $cmt_pid, RPC $RPC_URL, P2P tcp://127.0.0.1:$P2P_PORT, log $CMT_LOG"
echo "chain     $CHAIN_ID at height $height"
for name in "${dev_names[@]}"; do
  echo "$name      $(kairosd keys show "$name" --address --keyring-backend test)  balance $(kairosd query balance "$name" --keyring-backend test --output text | paste -sd, -)"
done
echo
if [ ${#dev_names[@]} -gt 0 ]; then
  # A recipient name not yet in the keyring (a reset keeps the keys of the last chain).
  to=""
  for candidate in alice bob carol dave erin frank; do
    if ! kairosd keys show "$candidate" --address $KT >/dev/null 2>&1; then to=$candidate; break; fi
  done
  echo "Send a first transfer (in another shell):"
  if [ -n "$to" ]; then
    echo "  $K keys add $to$KT"
  else
    to=alice
  fi
  echo "  $K tx send ${dev_names[0]} $to 1000000stake --fees 2000stake --wait$KT"
else
  echo "Query it (in another shell): $K status"
fi
echo "Ctrl-C stops both."

# Whichever process ends first, on its own, ends the node (a signal runs on_signal instead).
set +e
while true; do
  ended=""
  wait -n -p ended "$kairos_pid" "$cmt_pid"
  rc=$?
  [ -n "$ended" ] || continue  # not an exit (a signal's trap exits on its own)
  if [ "$ended" = "$cmt_pid" ]; then
    cmt_pid=""
    # CometBFT stops on its own when its app's connection drops, and may be reaped before a
    # kairosd that was killed (a large process takes a while to die): if kairosd goes too, it
    # is the cause.
    for _ in $(seq 30); do alive "$kairos_pid" || break; sleep 0.1; done
    if ! alive "$kairos_pid"; then
      krc=0
      wait "$kairos_pid" 2>/dev/null || krc=$?
      kairos_pid=""
      on_failure "kairosd exited (status $krc)"
    fi
    on_failure "CometBFT exited (status $rc)"
  fi
  kairos_pid=""
  on_failure "kairosd exited (status $rc)"
done
