#!/usr/bin/env bash
# A 4-validator localnet on loopback: each validator is a kairosd beside its own CometBFT v0.38.25.
#
#   scripts/localnet.sh init     create the network (homes, keys, genesis) without starting it
#   scripts/localnet.sh start    create the network on the first start, then start the 8 processes
#   scripts/localnet.sh stop     SIGTERM every process (SIGKILL after 15 s), CometBFT first
#   scripts/localnet.sh status   each node's height, app hash and peer count
#   scripts/localnet.sh reset    stop, then delete the localnet directory (a new chain next start)
#   scripts/localnet.sh logs     tail -F every log
#   scripts/localnet.sh kill-node I    SIGKILL node I's processes (kairosd and CometBFT) at once
#   scripts/localnet.sh start-node I   start node I's processes again (after kill-node or a crash)
#   scripts/localnet.sh add-node       create and start one more node (node4, node5, ...): a full
#                                node with a new consensus key, which the authority may then make
#                                a validator (kairosd tx poa set-validator user0 '<its key>' 10)
#   scripts/localnet.sh compose  write docker/docker-compose.yml from the node homes (init first
#                                if needed); with other ports than the default, to <dir> instead
#
#   KAIROS_LOCALNET_DIR    the localnet directory (default ~/.kairos-localnet)
#   KAIROS_LOCALNET_PORT   first port (default 36600); node i uses PORT+10i .. PORT+10i+6:
#                          p2p, rpc, abci (CometBFT's proxy_app -> that node's kairosd), CometBFT's
#                          prometheus (off; its address is set), kairosd's metrics (on:
#                          http://127.0.0.1:PORT+10i+4/metrics, docs/metrics.md), kairosd's
#                          gRPC (PORT+10i+5) and REST API (PORT+10i+6).
#                          Kept in <dir>/base_port once created.
#   KAIROS_LOCALNET_NODES  how many genesis validators a new network gets (default 4; 1 for the
#                          single-node benchmark, scripts/bench-localnet.sh --nodes 1)
#   KAIROS_LOCALNET_KAIROSD_CONFIG  extra kairosd config.toml settings for a new network,
#                          KEY=VALUE words (e.g. 'tx.index_events=["transfer.recipient"]')
#   KAIROS_LOCALNET_COMETBFT_CONFIG  extra CometBFT config.toml settings, KEY=VALUE words, for
#                          the nodes made after it is set (init, or one add-node: e.g. a
#                          node that joins by state sync, statesync.enable=true ...)
#   KAIROS_LOCALNET_APP    kairos (default), kairos-app, kvstore or kvstore-socket. kairos-app
#                          is Kairos beside CometBFT v0.40.0 with mempool.type = "app"
#                          (docs/app-mempool.md): kairosd's pool is the only mempool, peers'
#                          txs arrive by InsertTx, gossip goes in batches from ReapTxs, no
#                          CometBFT recheck. kvstore and kvstore-socket: the same 4 CometBFT
#                          validators with CometBFT's built-in kvstore app, no kairosd and no
#                          accounts (the baselines of scripts/bench-localnet.sh). kvstore runs in
#                          CometBFT's process (proxy_app = "kvstore"); kvstore-socket runs it as
#                          a process of its own beside each CometBFT (abci-cli kvstore on the abci
#                          port, over the ABCI socket as kairosd is: log kvstore<i>.log). Their
#                          directories default to ~/.kairos-localnet-<app>; kept in <dir>/app.
#   ABCI_CLI               abci-cli for kvstore-socket (default .tools/bin/abci-cli)
#   KAIROSD                kairosd binary (default build/release/app/kairosd, built with
#                          scripts/build.sh release when missing or too old to have 'keys')
#   COMETBFT               CometBFT v0.38.25 (default .tools/bin/cometbft, from scripts/setup.sh)
#   COMETBFT_APP_MEMPOOL   CometBFT v0.40.0, for kairos-app (default
#                          .tools/cometbft-v0.40.0/cometbft, from scripts/setup.sh)
#   KAIROS_KEYRING_PASSPHRASE  the test keyring's passphrase (default kairos-localnet)
#
# Layout of the directory: node<i>/ is CometBFT's home (from `cometbft testnet --v 4`),
# node<i>/kairos/ kairosd's home, keyring/keyring.json the funded test keys user0..user3 (each
# 1000000000000stake in genesis; use them with `kairosd --home <dir>/keyring tx send user0 ...
# --node http://127.0.0.1:<rpc>`), logs/ one log per process, pids/ one pid file per process.
# A kairos network is proof of authority (app/poa): app_state.poa lists the four validators,
# and user0 is the authority (it changes validators and every module's params).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
APP=${KAIROS_LOCALNET_APP:-kairos}
case "$APP" in
  kairos) DIR=${KAIROS_LOCALNET_DIR:-$HOME/.kairos-localnet} ;;
  kairos-app|kvstore|kvstore-socket) DIR=${KAIROS_LOCALNET_DIR:-$HOME/.kairos-localnet-$APP} ;;
  *) echo "localnet: KAIROS_LOCALNET_APP must be kairos, kairos-app, kvstore or kvstore-socket, not '$APP'" >&2
     exit 2 ;;
esac
if [ -f "$DIR/app" ] && [ "$(cat "$DIR/app")" != "$APP" ]; then
  echo "localnet: $DIR holds a $(cat "$DIR/app") network, not $APP (set KAIROS_LOCALNET_APP or KAIROS_LOCALNET_DIR)" >&2
  exit 2
fi
BASE_PORT=${KAIROS_LOCALNET_PORT:-36600}
if [ -f "$DIR/base_port" ]; then  # the ports the network was created with
  BASE_PORT=$(cat "$DIR/base_port")
fi
KAIROSD=${KAIROSD:-}
# kairos-app runs kairosd (is_kairos) beside CometBFT v0.40.0, which reports its version as
# 0.39.0 (the tag's TMCoreSemVer; docs/app-mempool.md).
if [ "$APP" = kairos-app ]; then
  COMETBFT=${COMETBFT_APP_MEMPOOL:-$ROOT/.tools/cometbft-v0.40.0/cometbft}
  COMETBFT_SERIES=0.39; COMETBFT_NAME=v0.40.0
else
  COMETBFT=${COMETBFT:-$ROOT/.tools/bin/cometbft}
  COMETBFT_SERIES=0.38; COMETBFT_NAME=v0.38
fi
is_kairos() { [ "$APP" = kairos ] || [ "$APP" = kairos-app ]; }
ABCI_CLI=${ABCI_CLI:-$ROOT/.tools/bin/abci-cli}
export KAIROS_KEYRING_PASSPHRASE=${KAIROS_KEYRING_PASSPHRASE:-kairos-localnet}
NODES=${KAIROS_LOCALNET_NODES:-4}  # genesis validators of a new network
case "$NODES" in [1-9]) ;; *) echo "localnet: KAIROS_LOCALNET_NODES must be 1 to 9, not '$NODES'" >&2; exit 2 ;; esac
ACCOUNTS=4
COINS=1000000000000stake

die() { echo "localnet: $*" >&2; exit 1; }
p2p_port() { echo $((BASE_PORT + 10 * $1)); }
rpc_port() { echo $((BASE_PORT + 10 * $1 + 1)); }
abci_port() { echo $((BASE_PORT + 10 * $1 + 2)); }
prom_port() { echo $((BASE_PORT + 10 * $1 + 3)); }
metrics_port() { echo $((BASE_PORT + 10 * $1 + 4)); }
grpc_port() { echo $((BASE_PORT + 10 * $1 + 5)); }
api_port() { echo $((BASE_PORT + 10 * $1 + 6)); }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The pid in pids/<name>.pid if that process is alive, else nothing.
live_pid() {
  local f="$DIR/pids/$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && alive "$pid"; then echo "$pid"; fi
}

# A process that exited but is not reaped yet (a zombie: the reaper of orphans may take seconds)
# counts as gone.
alive() {
  local state
  state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# The nodes the network has: the genesis validators and those add-node made.
node_count() {
  local n=0
  while [ -d "$DIR/node$n" ]; do n=$((n + 1)); done
  [ "$n" -gt 0 ] || n=$NODES
  echo "$n"
}

running() {
  local i
  for i in $(seq 0 $(($(node_count) - 1))); do
    if [ -n "$(live_pid "cometbft$i")" ] || [ -n "$(live_pid "kairosd$i")" ] ||
       [ -n "$(live_pid "kvstore$i")" ]; then return 0; fi
  done
  return 1
}

# Whether this kairosd has the 'keys' command (an old build prints its top-level help instead).
has_keys() { "$1" --help 2>/dev/null | grep -qE '^ +keys +'; }

check_cometbft_version() {
  local v
  v=$("$COMETBFT" version 2>/dev/null | head -n 1) || v=""
  case "$v" in
    "$COMETBFT_SERIES".*) ;;
    *) die "$COMETBFT is not CometBFT $COMETBFT_NAME (it says '$v')" ;;
  esac
}

find_binaries() {
  if [ "$APP" = kvstore-socket ]; then
    [ -x "$ABCI_CLI" ] || die "abci-cli not found at $ABCI_CLI (run scripts/setup.sh or set ABCI_CLI)"
  fi
  if ! is_kairos; then
    [ -x "$COMETBFT" ] || die "cometbft not found at $COMETBFT (run scripts/setup.sh or set COMETBFT)"
    check_cometbft_version
    return 0
  fi
  if [ -z "$KAIROSD" ]; then
    KAIROSD="$ROOT/build/release/app/kairosd"
    if [ ! -x "$KAIROSD" ] || ! has_keys "$KAIROSD"; then
      echo "localnet: $KAIROSD missing or older than the localnet, building it (scripts/build.sh release)"
      bash "$ROOT/scripts/build.sh" release
    fi
  fi
  [ -x "$KAIROSD" ] || die "kairosd not found at $KAIROSD (set KAIROSD or run scripts/build.sh release)"
  has_keys "$KAIROSD" ||
    die "$KAIROSD has no 'keys' command: it is older than the localnet, rebuild it (scripts/build.sh release)"
  [ -x "$COMETBFT" ] || die "cometbft not found at $COMETBFT (run scripts/setup.sh or set COMETBFT)"
  check_cometbft_version
}

# CometBFT's config of node i in <dir> (ports, peers, fast timeouts) and, for kairos, its kairosd
# home: configure_node DIR I PEERS.
configure_node() {
  local dir=$1 i=$2 others=$3
  local proxy="tcp://127.0.0.1:$(abci_port "$i")"
  [ "$APP" = kvstore ] && proxy=kvstore
  python3 "$ROOT/scripts/cometbft_config.py" "$dir/node$i/config/config.toml" \
    moniker="kairos-localnet-$i" \
    proxy_app="$proxy" \
    rpc.laddr="tcp://127.0.0.1:$(rpc_port "$i")" \
    rpc.pprof_laddr="" \
    p2p.laddr="tcp://127.0.0.1:$(p2p_port "$i")" \
    p2p.external_address="" \
    p2p.persistent_peers="$others" \
    p2p.addr_book_strict=false \
    p2p.allow_duplicate_ip=true \
    instrumentation.prometheus=false \
    instrumentation.prometheus_listen_addr=":$(prom_port "$i")" \
    consensus.timeout_propose=1s \
    consensus.timeout_propose_delta=200ms \
    consensus.timeout_prevote=300ms \
    consensus.timeout_prevote_delta=200ms \
    consensus.timeout_precommit=300ms \
    consensus.timeout_precommit_delta=200ms \
    consensus.timeout_commit=300ms
  if [ "$APP" = kairos-app ]; then
    python3 "$ROOT/scripts/cometbft_config.py" "$dir/node$i/config/config.toml" mempool.type=app
  fi
  if [ -n "${KAIROS_LOCALNET_COMETBFT_CONFIG:-}" ]; then
    local extra_cometbft
    read -r -a extra_cometbft <<<"$KAIROS_LOCALNET_COMETBFT_CONFIG"
    python3 "$ROOT/scripts/cometbft_config.py" "$dir/node$i/config/config.toml" "${extra_cometbft[@]}"
  fi
  if is_kairos; then
    "$KAIROSD" --home "$dir/node$i/kairos" init >/dev/null
    python3 "$ROOT/scripts/cometbft_config.py" "$dir/node$i/kairos/config.toml" \
      metrics.address="127.0.0.1:$(metrics_port "$i")" \
      grpc.address="127.0.0.1:$(grpc_port "$i")" \
      api.address="127.0.0.1:$(api_port "$i")" \
      query.cometbft_rpc="http://127.0.0.1:$(rpc_port "$i")"
    if [ -n "${KAIROS_LOCALNET_KAIROSD_CONFIG:-}" ]; then
      # One KEY=VALUE per word, split but not globbed (a TOML array is a bracket pattern).
      local extra
      read -r -a extra <<<"$KAIROS_LOCALNET_KAIROSD_CONFIG"
      python3 "$ROOT/scripts/cometbft_config.py" "$dir/node$i/kairos/config.toml" "${extra[@]}"
    fi
  fi
}

# Writes the network on the first start: CometBFT homes, kairosd homes, keyring, shared genesis.
create() {
  local i peers="" id
  tmp="$DIR.tmp.$$"  # global: the EXIT trap below needs it
  echo "localnet: creating a $NODES-validator $APP network in $DIR"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT  # a half-made network is never left behind
  "$COMETBFT" testnet --v "$NODES" --o "$tmp" --populate-persistent-peers=false >/dev/null
  for i in $(seq 0 $((NODES - 1))); do
    # Fixed P2P identities (scripts/localnet.py): the same node IDs on every machine, so the
    # peers and the generated docker/docker-compose.yml never change. Validator keys stay random.
    python3 "$ROOT/scripts/localnet.py" node-key "$i" "$tmp/node$i/config/node_key.json" >/dev/null
    id=$("$COMETBFT" show-node-id --home "$tmp/node$i")
    peers+="${peers:+,}$id@127.0.0.1:$(p2p_port "$i")"
  done
  for i in $(seq 0 $((NODES - 1))); do
    local others
    others=$(echo "$peers" | tr ',' '\n' | { grep -v "@127.0.0.1:$(p2p_port "$i")$" || true; } | paste -sd, -)
    configure_node "$tmp" "$i" "$others"
  done
  # The funded test accounts: keys in one keyring, coins in node0's genesis, copied to the others.
  ! is_kairos || "$KAIROSD" --home "$tmp/keyring" init >/dev/null
  for i in $(seq 0 $((ACCOUNTS - 1))); do
    is_kairos || break
    local addr
    addr=$("$KAIROSD" --home "$tmp/keyring" keys add "user$i" --output json |
      python3 -c 'import json, sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["address"])')
    "$KAIROSD" --home "$tmp/keyring" genesis add-account "$addr" "$COINS" \
      --genesis "$tmp/node0/config/genesis.json" >/dev/null
    echo "localnet: user$i $addr has $COINS"
  done
  # Proof of authority: the genesis validators in app_state.poa, user0 the authority.
  if is_kairos; then
    "$KAIROSD" --home "$tmp/keyring" genesis set-poa --authority user0 \
      --genesis "$tmp/node0/config/genesis.json" >/dev/null
    echo "localnet: proof of authority, user0 the authority"
  fi
  # One chain id for every localnet (`cometbft testnet` v0.38 picks a random one), so a wallet's
  # chain info fits any of them (docs/keplr-chain-info.localnet.json).
  python3 -c 'import json, sys
p = sys.argv[1]; g = json.load(open(p)); g["chain_id"] = "kairos-localnet"
json.dump(g, open(p, "w"), indent=2)' "$tmp/node0/config/genesis.json"
  for i in $(seq 1 $((NODES - 1))); do
    cp "$tmp/node0/config/genesis.json" "$tmp/node$i/config/genesis.json"
  done
  mkdir -p "$tmp/logs" "$tmp/pids"
  echo "$BASE_PORT" >"$tmp/base_port"
  echo "$APP" >"$tmp/app"
  rm -rf "$DIR"
  mv "$tmp" "$DIR"
  trap - EXIT
}

# Starts node i's kairosd and waits until it listens (its log says so). Returns 1 (after printing
# the log's tail) if it exits or does not listen within 30 s.
start_kairosd() {
  local i=$1 log="$DIR/logs/kairosd$1.log" pid offset listening
  offset=$(($(stat -c %s "$log" 2>/dev/null || echo 0) + 1))  # logs append across starts
  setsid "$KAIROSD" --home "$DIR/node$i/kairos" start \
    --abci-address "tcp://127.0.0.1:$(abci_port "$i")" </dev/null >>"$log" 2>&1 &
  pid=$!
  echo "$pid" >"$DIR/pids/kairosd$i.pid"
  listening="ABCI server listening on tcp://127.0.0.1:$(abci_port "$i")"
  for _ in $(seq 300); do
    if tail -c "+$offset" "$log" 2>/dev/null | grep -qF "$listening"; then return 0; fi
    alive "$pid" || { tail -n 20 "$log" >&2; echo "localnet: kairosd$i exited at start (log $log)" >&2; return 1; }
    sleep 0.1
  done
  tail -n 20 "$log" >&2
  echo "localnet: kairosd$i: no '$listening' within 30 s (log $log)" >&2
  return 1
}

# abci-cli kvstore on node i's abci port (kvstore-socket), waiting until the port answers.
start_kvstore() {
  local i=$1 pid
  setsid "$ABCI_CLI" kvstore --address "tcp://127.0.0.1:$(abci_port "$i")" --log_level error \
    </dev/null >>"$DIR/logs/kvstore$i.log" 2>&1 &
  pid=$!
  echo "$pid" >"$DIR/pids/kvstore$i.pid"
  for _ in $(seq 300); do
    port_busy "$(abci_port "$i")" && return 0
    alive "$pid" || { tail -n 20 "$DIR/logs/kvstore$i.log" >&2; return 1; }
    sleep 0.1
  done
  return 1
}

start_cometbft() {
  setsid "$COMETBFT" start --home "$DIR/node$1" </dev/null >>"$DIR/logs/cometbft$1.log" 2>&1 &
  echo "$!" >"$DIR/pids/cometbft$1.pid"
}

node_ports_free() {
  local p
  for p in $(p2p_port "$1") $(rpc_port "$1") $(abci_port "$1") $(metrics_port "$1") \
    $(grpc_port "$1") $(api_port "$1"); do
    port_busy "$p" && die "port $p on 127.0.0.1 is in use (another base: reset, then KAIROS_LOCALNET_PORT=... start)"
  done
  return 0
}

start() {
  find_binaries
  if [ -d "$DIR" ] && running; then
    die "already running in $DIR (scripts/localnet.sh status; stop it first)"
  fi
  local i n
  [ -f "$DIR/node0/config/genesis.json" ] || n=$NODES
  for i in $(seq 0 $((${n:-$(node_count)} - 1))); do node_ports_free "$i"; done
  [ -f "$DIR/node0/config/genesis.json" ] || create
  n=$(node_count)
  if is_kairos; then
    for i in $(seq 0 $((n - 1))); do
      start_kairosd "$i" || { stop; die "kairosd$i did not start"; }
    done
  elif [ "$APP" = kvstore-socket ]; then
    for i in $(seq 0 $((n - 1))); do
      start_kvstore "$i" || { stop; die "kvstore$i (abci-cli) did not start"; }
    done
  fi
  for i in $(seq 0 $((n - 1))); do start_cometbft "$i"; done
  sleep 1
  for i in $(seq 0 $((n - 1))); do
    [ -n "$(live_pid "cometbft$i")" ] ||
      { tail -n 20 "$DIR/logs/cometbft$i.log" >&2; stop; die "cometbft$i exited at start"; }
  done
  echo "localnet: started $n $APP nodes in $DIR"
  for i in $(seq 0 $((n - 1))); do
    if [ "$APP" != kvstore ]; then
      local metrics=""
      ! is_kairos || metrics="  metrics http://127.0.0.1:$(metrics_port "$i")/metrics  grpc 127.0.0.1:$(grpc_port "$i")  rest http://127.0.0.1:$(api_port "$i")"
      echo "  node$i: rpc http://127.0.0.1:$(rpc_port "$i")  p2p $(p2p_port "$i")  abci $(abci_port "$i")$metrics"
    else
      echo "  node$i: rpc http://127.0.0.1:$(rpc_port "$i")  p2p $(p2p_port "$i")  (kvstore in process)"
    fi
  done
}

node_index() {
  local n
  n=$(node_count)
  [[ "${1:-}" =~ ^[0-9]+$ ]] && [ "$1" -lt "$n" ] || die "expected a node index 0..$((n - 1)), not '${1:-}'"
  [ -f "$DIR/node0/config/genesis.json" ] || die "no localnet in $DIR"
}

# kill -9 of node i's processes (both at once: a machine crash), pid files removed.
kill_node() {
  local i=$1 name pid pids=()
  for name in "cometbft$i" "kairosd$i" "kvstore$i"; do
    pid=$(live_pid "$name")
    if [ -n "$pid" ]; then
      kill -KILL "$pid" 2>/dev/null || true
      pids+=("$pid")
      echo "localnet: killed $name (pid $pid)"
    fi
    rm -f "$DIR/pids/$name.pid"
  done
  for _ in $(seq 100); do  # gone (or zombies) within 10 s
    local left=0
    for pid in "${pids[@]}"; do if alive "$pid"; then left=1; fi; done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
}

start_node() {
  local i=$1
  find_binaries
  if [ -n "$(live_pid "cometbft$i")" ] || [ -n "$(live_pid "kairosd$i")" ] ||
     [ -n "$(live_pid "kvstore$i")" ]; then
    die "node$i is running (kill-node $i first)"
  fi
  node_ports_free "$i"
  if is_kairos; then start_kairosd "$i" || die "kairosd$i did not start"; fi
  if [ "$APP" = kvstore-socket ]; then start_kvstore "$i" || die "kvstore$i did not start"; fi
  start_cometbft "$i"
  sleep 0.5
  [ -n "$(live_pid "cometbft$i")" ] ||
    { tail -n 20 "$DIR/logs/cometbft$i.log" >&2; die "cometbft$i exited at start"; }
  echo "localnet: started node$i (rpc http://127.0.0.1:$(rpc_port "$i"))"
}

# One more node: a full node with a new consensus key, peered with every node before it, started.
add_node() {
  is_kairos || die "add-node adds a kairos node, not a $APP one"
  [ -f "$DIR/node0/config/genesis.json" ] || die "no localnet in $DIR"
  find_binaries
  local i peers="" j id
  i=$(node_count)
  node_ports_free "$i"
  "$COMETBFT" init --home "$DIR/node$i" >/dev/null 2>&1 || die "cometbft init of node$i failed"
  python3 "$ROOT/scripts/localnet.py" node-key "$i" "$DIR/node$i/config/node_key.json" >/dev/null
  cp "$DIR/node0/config/genesis.json" "$DIR/node$i/config/genesis.json"
  for j in $(seq 0 $((i - 1))); do
    id=$("$COMETBFT" show-node-id --home "$DIR/node$j")
    peers+="${peers:+,}$id@127.0.0.1:$(p2p_port "$j")"
  done
  configure_node "$DIR" "$i" "$peers"
  start_node "$i"
  echo "localnet: node$i is a full node; its consensus key: $("$COMETBFT" show-validator --home "$DIR/node$i")"
}

# SIGTERM to every process named <prefix><i> at once, up to 15 s for them to exit, then SIGKILL.
stop_all() {
  local prefix=$1 i pid names=() pids=()
  for i in $(seq 0 $(($(node_count) - 1))); do
    pid=$(live_pid "$prefix$i")
    if [ -n "$pid" ]; then
      kill -TERM "$pid" 2>/dev/null || true
      names+=("$prefix$i"); pids+=("$pid")
    fi
    rm -f "$DIR/pids/$prefix$i.pid"
  done
  for _ in $(seq 150); do
    local left=0
    for pid in "${pids[@]}"; do if alive "$pid"; then left=1; fi; done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if alive "${pids[$i]}"; then
      echo "localnet: ${names[$i]} (pid ${pids[$i]}) ignored SIGTERM for 15 s, SIGKILL" >&2
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
    echo "localnet: stopped ${names[$i]} (pid ${pids[$i]})"
  done
}

# CometBFT first, so that kairosd gets no more requests.
stop() {
  [ -d "$DIR/pids" ] || { echo "localnet: nothing in $DIR"; return 0; }
  stop_all cometbft
  stop_all kairosd
  stop_all kvstore
}

status() {
  [ -d "$DIR" ] || die "no localnet in $DIR"
  local i
  printf '%-6s %-8s %-8s %8s  %-64s %5s  %s\n' node "cometbft" "kairosd" height app_hash peers \
    "rpc / grpc / rest"
  for i in $(seq 0 $(($(node_count) - 1))); do
    local c k
    c=$(live_pid "cometbft$i"); k=$(live_pid "kairosd$i")
    is_kairos || k="-"
    printf '%-6s %-8s %-8s ' "node$i" "${c:-down}" "${k:-down}"
    local endpoints="$(rpc_port "$i")"
    ! is_kairos || endpoints+=" / $(grpc_port "$i") / $(api_port "$i")"
    python3 - "$(rpc_port "$i")" "$endpoints" <<'EOF'
import json, sys, urllib.request
port = sys.argv[1]
def get(path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=3) as r:
        return json.load(r)["result"]
try:
    st, net = get("status"), get("net_info")
    info = st["sync_info"]
    print(f'{info["latest_block_height"]:>8}  {info["latest_app_hash"] or "-":<64} {net["n_peers"]:>5}  {sys.argv[2]}')
except Exception as e:
    print(f'{"-":>8}  {"(rpc: " + str(e)[:56] + ")":<64} {"-":>5}  {sys.argv[2]}')
EOF
  done
}

cmd=${1:-}
case "$cmd" in
  init)
    find_binaries
    if [ -f "$DIR/node0/config/genesis.json" ]; then
      echo "localnet: already created in $DIR (reset to make a new one)"
    else
      create
    fi
    ;;
  start) start ;;
  compose)
    [ "$APP" = kairos ] || die "compose writes the kairos network (CometBFT v0.38.25), not $APP"
    find_binaries
    [ -f "$DIR/node0/config/genesis.json" ] || create
    out="$ROOT/docker/docker-compose.yml"
    # The committed file is for the default ports; another base gets its own file.
    [ "$BASE_PORT" = 36600 ] || out="$DIR/docker-compose.yml"
    python3 "$ROOT/scripts/localnet.py" compose "$DIR" "$out"
    ;;
  stop) stop ;;
  status) status ;;
  reset)
    stop
    rm -rf "$DIR"
    echo "localnet: deleted $DIR"
    ;;
  logs)
    [ -d "$DIR/logs" ] || die "no logs in $DIR"
    exec tail -n 20 -F "$DIR"/logs/*.log
    ;;
  kill-node) node_index "${2:-}"; kill_node "$2" ;;
  start-node) node_index "${2:-}"; start_node "$2" ;;
  add-node) add_node ;;
  *) echo "usage: $0 init|start|stop|status|reset|logs|compose|kill-node I|start-node I|add-node" >&2; exit 2 ;;
esac
