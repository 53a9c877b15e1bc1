# Sourced by the Docker scripts (docker-image-offline.sh, docker-localnet-test.sh):
# require_docker_engine WHAT says plainly that no Docker engine answers, and what was therefore
# not done, and exits 2; it returns when `docker info` succeeds.

require_docker_engine() {
  local why
  if ! command -v docker >/dev/null 2>&1; then
    echo "no Docker engine: the docker command is not installed; $1" >&2
    exit 2
  fi
  if ! why=$(docker info 2>&1 >/dev/null); then
    why=$(printf '%s\n' "$why" | grep -v '^\s*$' | tail -n 1)
    echo "no Docker engine answers (docker info: ${why:-failed}); $1" >&2
    exit 2
  fi
}
