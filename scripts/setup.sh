#!/usr/bin/env bash
# Installs what Kairos needs to build and test, and nothing that is already there.
#   - Debian packages (compiler, CMake, Boost, protobuf, LevelDB, spdlog, Catch2, ...)
#   - the pinned CometBFT tools, built with `go install` into .tools/ (ignored by git):
#     cometbft and abci-cli v0.38.25 in .tools/bin, and cometbft v0.40.0 (the app-mempool mode,
#     `mempool.type = "app"`) in .tools/cometbft-v0.40.0
#   - grpcurl (pinned), the gRPC client of the e2e test test_grpc.py
#   - the pinned npm packages of test/e2e/cosmjs and test/e2e/rest_clients (npm ci), for the e2e
#     tests test_cosmjs.py and test_rest_clients.py
# Idempotent: a second run prints "nothing to do". Prints each thing it installs.
#
# Usage: scripts/setup.sh [--packages-only]
#   --packages-only    only the Debian packages (docker/Dockerfile's build stage uses it, so the
#                      image is built with exactly the packages of a developer machine)
#   (--with-app-mempool is still accepted and does nothing more: v0.40.0 is always installed now)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/.tools"
COMETBFT_VERSION=v0.38.25
COMETBFT_APP_MEMPOOL_VERSION=v0.40.0
GO_MIN_MINOR=25  # cometbft v0.38.25 needs go >= 1.22, v0.40.0 go >= 1.25

PACKAGES=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates python3
  libboost-dev protobuf-compiler libprotobuf-dev libleveldb-dev libsnappy-dev libabsl-dev
  libspdlog-dev libfmt-dev catch2 libsecp256k1-dev libssl-dev libtomlplusplus-dev
  libcli11-dev prometheus-cpp-dev nlohmann-json3-dev clang libclang-rt-14-dev
  libgrpc++-dev protobuf-compiler-grpc
)

did_something=0
say() { printf 'setup: %s\n' "$*"; }

packages_only=0
for arg in "$@"; do
  case "$arg" in
    --packages-only) packages_only=1 ;;
    --with-app-mempool) ;;  # kept for old callers: v0.40.0 is always installed
    *) say "usage: scripts/setup.sh [--packages-only]; unknown argument: $arg" >&2; exit 2 ;;
  esac
done

# --- Debian packages ---------------------------------------------------------------------
missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  say "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  did_something=1
fi

if [ "$packages_only" -eq 1 ]; then
  [ "$did_something" -eq 1 ] || say "nothing to do: every package is present"
  exit 0
fi

# --- Go toolchain ------------------------------------------------------------------------
if ! command -v go >/dev/null 2>&1; then
  say "error: Go (>= 1.$GO_MIN_MINOR) is needed to build CometBFT; install it and re-run" >&2
  exit 1
fi
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if [ "${go_minor:-0}" -lt "$GO_MIN_MINOR" ]; then
  say "error: $(go env GOVERSION) is too old; CometBFT $COMETBFT_APP_MEMPOOL_VERSION needs go >= 1.$GO_MIN_MINOR" >&2
  exit 1
fi

# --- CometBFT tools, pinned --------------------------------------------------------------
# Never @latest: it resolves to the frozen v1.0.1, whose wire differs.
install_tool() {  # <dir> <package path> <version> <binary>
  local dir=$1 pkg=$2 version=$3 bin=$4
  local stamp="$dir/.$bin.version"
  if [ -x "$dir/$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then return; fi
  say "installing $bin $version into ${dir#"$ROOT"/} (go install)"
  mkdir -p "$dir"
  GOBIN="$dir" GOFLAGS=-mod=mod go install "$pkg@$version"
  echo "$version" >"$stamp"
  did_something=1
}
install_tool "$TOOLS/bin" github.com/cometbft/cometbft/cmd/cometbft "$COMETBFT_VERSION" cometbft
install_tool "$TOOLS/bin" github.com/cometbft/cometbft/abci/cmd/abci-cli "$COMETBFT_VERSION" abci-cli
# v0.40.0 for the e2e tests in app-mempool mode (test/e2e, e2e.app_mempool.*).
install_tool "$TOOLS/cometbft-$COMETBFT_APP_MEMPOOL_VERSION" \
  github.com/cometbft/cometbft/cmd/cometbft "$COMETBFT_APP_MEMPOOL_VERSION" cometbft

# grpcurl: the e2e test test_grpc.py calls kairosd's gRPC server with it (a client we did not
# write, as Cosmos operators use it).
GRPCURL_VERSION=v1.9.3
install_tool "$TOOLS/bin" github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION" grpcurl

# --- Test tools written in Go -------------------------------------------------------------
# ics23-verify: the ICS-23 reference verifier (github.com/cosmos/ics23/go), used by the tests to
# check our proofs with code we did not write. Rebuilt when its source changes.
build_go_program() {  # <binary> <source dir>
  local bin=$1 src=$2
  local stamp="$TOOLS/bin/.$bin.version"
  local digest
  digest=$(cat "$src"/go.mod "$src"/go.sum "$src"/*.go | sha256sum | cut -c1-16)
  if [ -x "$TOOLS/bin/$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$digest" ]; then return; fi
  say "building $bin from ${src#"$ROOT"/} (go build)"
  mkdir -p "$TOOLS/bin"
  (cd "$src" && go build -o "$TOOLS/bin/$bin" .)
  echo "$digest" >"$stamp"
  did_something=1
}
build_go_program ics23-verify "$ROOT/test/ics23/verify"

# --- Python modules of the scripts and e2e tests --------------------------------------------
# cryptography: scripts/localnet.py derives the localnet's P2P keys; PyYAML: test_compose.py.
py_missing=()
python3 -c 'import cryptography' 2>/dev/null || py_missing+=(cryptography)
python3 -c 'import yaml' 2>/dev/null || py_missing+=(pyyaml)
if ((${#py_missing[@]})); then
  say "installing Python modules: ${py_missing[*]} (pip)"
  python3 -m pip install --quiet "${py_missing[@]}" ||
    { say "error: could not install ${py_missing[*]}; install them for $(command -v python3)" >&2; exit 1; }
  did_something=1
fi

# --- npm clients of the e2e tests ------------------------------------------------------------
# test/e2e/cosmjs: CosmJS, for test_cosmjs.py; test/e2e/rest_clients: Keplr's chain validator and
# the Telescope LCD client (interchain, @cosmology/lcd), for test_rest_clients.py. The exact
# versions are in each folder's package.json and package-lock.json; `npm ci` installs them into
# its node_modules (ignored by git) when it is missing or the lock changed.
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  say "warning: node (>= 20) and npm are not installed: the e2e tests test_cosmjs.py and" \
    "test_rest_clients.py will fail" >&2
else
  for npm_dir in "$ROOT/test/e2e/cosmjs" "$ROOT/test/e2e/rest_clients"; do
    lock_digest=$(sha256sum "$npm_dir/package-lock.json" | cut -c1-16)
    lock_stamp="$npm_dir/node_modules/.kairos-lock.sha"
    if [ ! -d "$npm_dir/node_modules" ] ||
      [ "$(cat "$lock_stamp" 2>/dev/null)" != "$lock_digest" ]; then
      say "installing the npm packages of ${npm_dir#"$ROOT"/} (npm ci)"
      npm ci --prefix "$npm_dir" --no-audit --no-fund --loglevel=error
      echo "$lock_digest" >"$lock_stamp"
      did_something=1
    fi
  done
fi

if [ "$did_something" -eq 0 ]; then
  say "nothing to do: every package and tool is present"
fi
