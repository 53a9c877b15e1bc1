#!/usr/bin/env python3
"""The compose localnet end to end, with a Docker engine (scripts/docker-localnet-test.sh runs it;
not a ctest test: building the image alone takes longer than CI's budget).

1. A fresh localnet's homes in a temp KAIROS_LOCALNET_DIR (`scripts/localnet.sh init`, default
   ports: the committed docker/docker-compose.yml is written for them), the kairos:local image
   (`docker build`, or scripts/docker-image-offline.sh with --offline, or as it is with
   --no-build), and `compose -p kairos-localnet-test up -d --no-build`.
2. All four validators pass height 20 with one block hash and one app hash at every height.
3. A transfer sent to node 0 lands, and every node reports the same recipient balance at the same
   height.
4. kairosd is killed (SIGKILL, `docker exec ... pkill`) inside node 2's container: kairos-node
   stops CometBFT and exits 1, Docker restarts the container (restart: unless-stopped; a
   `docker kill` would count as a manual stop and not restart it), and node 2 catches up: past
   node 0's height at the kill, with node 0's block and app hash at that height.
5. `compose down`, and the homes (written by root inside the containers) removed through a
   container. --keep leaves the network running and prints where it is.

KAIROS_COMPOSE is the compose command ("docker compose" or "docker-compose", set by the script).
"""

import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time

import harness
from harness import check, log

REPO = harness.REPO
COMPOSE_FILE = os.path.join(REPO, "docker", "docker-compose.yml")
PROJECT = "kairos-localnet-test"
NODES = 4
BASE = 36600  # the ports the committed compose file is written for
HEIGHT = 20
IMAGE = "kairos:local"


def sh(argv, env=None, timeout=3600, check_rc=True):
    log("$ " + " ".join(shlex.quote(a) for a in argv))
    p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
    if check_rc:
        check(p.returncode == 0, f"{argv[0]} exited {p.returncode}:\n{p.stdout[-4000:]}")
    return p


def ports_free():
    busy = []
    for i in range(NODES):
        for port in (BASE + 10 * i, BASE + 10 * i + 1, BASE + 10 * i + 2):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    busy.append(port)
    return busy


def restart_count(container):
    out = sh(["docker", "inspect", "-f", "{{.RestartCount}}", container]).stdout.strip()
    return int(out)


def main(argv):
    offline, no_build, keep = "--offline" in argv, "--no-build" in argv, "--keep" in argv
    unknown = [a for a in argv if a not in ("--offline", "--no-build", "--keep")]
    if unknown:
        print(f"docker_localnet.py: unknown arguments {unknown}", file=sys.stderr)
        return 2
    compose = shlex.split(os.environ.get("KAIROS_COMPOSE", "docker compose"))
    kairosd = os.environ.get("KAIROSD") or os.path.join(REPO, "build", "release", "app", "kairosd")
    check(os.access(kairosd, os.X_OK), f"no kairosd at {kairosd} (scripts/build.sh release, or "
                                       "set KAIROSD)")
    busy = ports_free()
    check(not busy, f"ports {busy} are taken: stop the plain localnet (scripts/localnet.sh stop) "
                    "or whatever holds them")
    for i in range(NODES):
        found = sh(["docker", "ps", "-aq", "-f", f"name=^kairos-node{i}$"]).stdout.strip()
        check(not found, f"a container kairos-node{i} exists already (compose down it first)")

    tmp = tempfile.mkdtemp(prefix="kairos-docker-localnet-")
    net = os.path.join(tmp, "net")
    env = dict(os.environ, KAIROS_LOCALNET_DIR=net, KAIROSD=kairosd,
               KAIROS_KEYRING_PASSPHRASE=harness.KEYRING_PASSPHRASE)
    env.pop("KAIROS_LOCALNET_PORT", None)
    up = compose + ["-p", PROJECT, "-f", COMPOSE_FILE]
    t0 = time.monotonic()
    ok = False
    try:
        sh(["bash", os.path.join(REPO, "scripts", "localnet.sh"), "init"], env=env)
        if offline:
            sh(["bash", os.path.join(REPO, "scripts", "docker-image-offline.sh"), "--tag", IMAGE])
        elif not no_build:
            sh(["docker", "build", "-f", os.path.join(REPO, "docker", "Dockerfile"), "-t", IMAGE,
                REPO])
        sh(up + ["up", "-d", "--no-build"], env=env, timeout=600)
        nodes = [harness.RunningNode(f"node{i}", BASE + 10 * i + 1, os.path.join(net, "keyring"))
                 for i in range(NODES)]

        # 2. Height 20 everywhere, one block and one app hash per height.
        for n in nodes:
            n.wait_for_height(HEIGHT + 1, timeout=300)
        for h in range(1, HEIGHT + 1):
            seen = {(n.rpc("block", height=h)["block_id"]["hash"], n.block(h + 1)["header"]["app_hash"])
                    for n in nodes}
            check(len(seen) == 1, f"height {h}: the nodes disagree: {seen}")
        log(f"4 validators: one block hash and one app hash at each height 1..{HEIGHT}")

        # 3. A transfer, seen alike on all four.
        before = nodes[0].balance("user1")
        res = nodes[0].send("user0", "user1", "1000stake")
        h = int(res["height"])
        for n in nodes:
            n.wait_for_height(h)
        balances = {n.name: n.balance("user1", height=h) for n in nodes}
        check(set(balances.values()) == {before + 1000}, f"user1's balance at {h}: {balances}")
        log(f"transfer in block {h}: user1 has {before + 1000}stake on all 4 nodes")

        # 4. kairosd killed inside node 2's container: restarted by Docker, caught up.
        container = "kairos-node2"
        restarts = restart_count(container)
        at_kill = nodes[0].height()
        sh(["docker", "exec", container, "pkill", "-KILL", "-x", "kairosd"])
        harness.poll(lambda: restart_count(container) > restarts, 120,
                     f"{container} to be restarted by Docker")
        target = at_kill + 5
        nodes[2].wait_for_height(target, timeout=300)
        nodes[0].wait_for_height(target)
        check(nodes[2].rpc("block", height=target)["block_id"] ==
              nodes[0].rpc("block", height=target)["block_id"],
              f"node 2 and node 0 differ at height {target}")
        check(nodes[2].app_hash_after(target - 1) == nodes[0].app_hash_after(target - 1),
              f"node 2's app hash differs from node 0's after block {target - 1}")
        log(f"{container}: restarted after kairosd's SIGKILL (restart count {restarts} -> "
            f"{restart_count(container)}), caught up past height {target} with node 0's hashes")
        ok = True
    finally:
        if keep:
            log(f"--keep: the network runs on; its homes are in {net}; stop it with "
                f"KAIROS_LOCALNET_DIR={net} {' '.join(up)} down")
        else:
            sh(up + ["down", "--timeout", "30"], env=env, check_rc=False, timeout=300)
            # The containers wrote as root into the homes: remove them from inside one.
            sh(["docker", "run", "--rm", "-v", f"{tmp}:/tmp-net", IMAGE, "rm", "-rf", "/tmp-net/net"],
               check_rc=False, timeout=120)
            subprocess.run(["rm", "-rf", tmp], check=False)
        log(f"{'PASS' if ok else 'FAIL'}: compose localnet test in {time.monotonic() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except harness.E2EError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
