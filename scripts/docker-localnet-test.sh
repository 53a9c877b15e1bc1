#!/usr/bin/env bash
# The compose localnet, end to end, where a Docker engine runs (test/e2e/docker_localnet.py has
# the steps): a fresh localnet's homes (default ports 36600..36634, which must be free), the
# kairos:local image, `compose up` of docker/docker-compose.yml; then all four validators at
# height 20 with one block hash and one app hash, a transfer seen alike on all four, and kairosd
# killed inside one container: the container restarts and the node catches up. The containers
# are removed at the end (--keep leaves them running).
#
#   scripts/docker-localnet-test.sh [--offline] [--no-build] [--keep]
#
#   --offline    build the image with scripts/docker-image-offline.sh (no registry)
#   --no-build   use the kairos:local image as it is
#   KAIROSD      the kairosd for `localnet.sh init` and the CLI (default build/release/app/kairosd)
#
# Compose v2 (`docker compose`) or Debian's docker-compose 1.29, whichever is there. Not part of
# .ci/run (the image build alone takes longer than CI's budget). Without a Docker engine it says
# so and exits 2, having done nothing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}"; exit 0 ;; esac

# shellcheck source=scripts/docker-engine.sh
source "$ROOT/scripts/docker-engine.sh"
require_docker_engine "the compose localnet test did not run"

if docker compose version >/dev/null 2>&1; then
  export KAIROS_COMPOSE="docker compose"
elif command -v docker-compose >/dev/null 2>&1; then
  export KAIROS_COMPOSE="docker-compose"
else
  echo "no Docker Compose: neither 'docker compose' (v2) nor docker-compose (1.29) is installed; the compose localnet test did not run" >&2
  exit 2
fi
exec python3 "$ROOT/test/e2e/docker_localnet.py" "$@"
