#!/usr/bin/env bash
# Command 1: installs what is missing, builds Release, and runs a single-validator node:
# kairosd plus CometBFT v0.38.25, both on loopback. Ctrl-C stops both.
#
#   KAIROS_HOME   kairosd home (default ~/.kairos); CometBFT's home is $KAIROS_HOME/cometbft
#   ABCI_PORT, RPC_PORT, P2P_PORT   default 26658, 26657, 26656
#
# The homes are created on the first run only; delete $KAIROS_HOME to start a new chain.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KAIROS_HOME=${KAIROS_HOME:-$HOME/.kairos}
CMT_HOME="$KAIROS_HOME/cometbft"
ABCI_PORT=${ABCI_PORT:-26658}
RPC_PORT=${RPC_PORT:-26657}
P2P_PORT=${P2P_PORT:-26656}
KAIROSD="$ROOT/build/release/app/kairosd"
COMETBFT="$ROOT/.tools/bin/cometbft"

bash "$ROOT/scripts/setup.sh"
bash "$ROOT/scripts/build.sh" release

if [ ! -f "$KAIROS_HOME/config.toml" ]; then
  "$KAIROSD" init --home "$KAIROS_HOME"
fi
if [ ! -f "$CMT_HOME/config/config.toml" ]; then
  "$COMETBFT" init --home "$CMT_HOME" >/dev/null
  python3 "$ROOT/scripts/cometbft_config.py" "$CMT_HOME/config/config.toml" \
    proxy_app="tcp://127.0.0.1:$ABCI_PORT" \
    rpc.laddr="tcp://127.0.0.1:$RPC_PORT" \
    p2p.laddr="tcp://127.0.0.1:$P2P_PORT" \
    instrumentation.prometheus=false
  echo "initialised CometBFT home $CMT_HOME"
fi

KAIROSD_LOG="$KAIROS_HOME/kairosd.log"
CMT_LOG="$KAIROS_HOME/cometbft.log"
kairos_pid=""
cmt_pid=""
stop() {
  trap - INT TERM EXIT
  echo
  echo "stopping CometBFT and kairosd..."
  [ -n "$cmt_pid" ] && kill -TERM "$cmt_pid" 2>/dev/null && wait "$cmt_pid" 2>/dev/null || true
  [ -n "$kairos_pid" ] && kill -TERM "$kairos_pid" 2>/dev/null && wait "$kairos_pid" 2>/dev/null || true
  echo "stopped. Logs: $KAIROSD_LOG, $CMT_LOG"
}
trap stop INT TERM EXIT

"$KAIROSD" start --home "$KAIROS_HOME" --abci-address "tcp://127.0.0.1:$ABCI_PORT" >>"$KAIROSD_LOG" 2>&1 &
kairos_pid=$!
for _ in $(seq 50); do  # wait until kairosd listens
  if (exec 3<>"/dev/tcp/127.0.0.1/$ABCI_PORT") 2>/dev/null; then break; fi
  if ! kill -0 "$kairos_pid" 2>/dev/null; then
    echo "kairosd failed to start:" >&2; tail -n 20 "$KAIROSD_LOG" >&2; exit 1
  fi
  sleep 0.1
done
"$COMETBFT" start --home "$CMT_HOME" >>"$CMT_LOG" 2>&1 &
cmt_pid=$!

echo "kairosd  pid $kairos_pid, ABCI tcp://127.0.0.1:$ABCI_PORT, log $KAIROSD_LOG"
echo "cometbft pid $cmt_pid, log $CMT_LOG"
echo "RPC: http://127.0.0.1:$RPC_PORT   (try: curl http://127.0.0.1:$RPC_PORT/abci_info)"
echo "Ctrl-C stops both."

# Whichever process ends first ends the node.
set +e
wait -n "$kairos_pid" "$cmt_pid"
status=$?
set -e
echo "a process exited (status $status); see the logs:" >&2
tail -n 5 "$KAIROSD_LOG" "$CMT_LOG" >&2
exit 1
