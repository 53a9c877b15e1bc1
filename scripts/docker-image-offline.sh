#!/usr/bin/env bash
# Builds the kairos:local image where no image registry can be reached (docker/README.md,
# "Without a registry"): the three base images are one Debian bookworm image made here with
# debootstrap and `docker import`, CometBFT is the binary scripts/setup.sh built
# (.tools/bin/cometbft, copied to docker/prebuilt/ for COMETBFT_PREBUILT=1) instead of `go
# install` in a Go image, and the legacy builder runs the Dockerfile (BuildKit may want images
# of its own from a registry). Debian packages still come from a Debian mirror.
#
#   scripts/docker-image-offline.sh [--tag kairos:local] [--base kairos-base:bookworm]
#
#   DEBIAN_MIRROR   the mirror for debootstrap and apt (default http://deb.debian.org/debian)
#
# Needs a Docker engine, debootstrap, and root or sudo for debootstrap. The base image is made
# once (delete it with `docker rmi kairos-base:bookworm` to make it again). Without a Docker
# engine it says so and exits 2, having done nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TAG=kairos:local
BASE=kairos-base:bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
die() { echo "docker-image-offline.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) TAG=$2; shift ;;
    --base) BASE=$2; shift ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "docker-image-offline.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
  shift
done

# shellcheck source=scripts/docker-engine.sh
source "$ROOT/scripts/docker-engine.sh"
require_docker_engine "nothing built"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if docker image inspect "$BASE" >/dev/null 2>&1; then
  echo "base image $BASE: present"
else
  command -v debootstrap >/dev/null || die "debootstrap is not installed (sudo apt-get install debootstrap)"
  rootfs=$(mktemp -d)
  trap '$SUDO rm -rf "$rootfs"' EXIT
  echo "base image $BASE: debootstrap --variant=minbase bookworm from $MIRROR"
  $SUDO debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR"
  $SUDO tar -C "$rootfs" -c . | docker import - "$BASE"
fi

[ -x "$ROOT/.tools/bin/cometbft" ] || bash "$ROOT/scripts/setup.sh"
install -m 0755 "$ROOT/.tools/bin/cometbft" "$ROOT/docker/prebuilt/cometbft"
echo "cometbft: $("$ROOT/docker/prebuilt/cometbft" version), prebuilt"

DOCKER_BUILDKIT=0 docker build -f "$ROOT/docker/Dockerfile" \
  --build-arg BUILD_IMAGE="$BASE" --build-arg GO_IMAGE="$BASE" --build-arg RUNTIME_IMAGE="$BASE" \
  --build-arg COMETBFT_PREBUILT=1 -t "$TAG" "$ROOT"
echo "built $TAG from $BASE (no registry used)"
