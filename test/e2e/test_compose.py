#!/usr/bin/env python3
"""docker/: the compose file, the image recipe and the per-container supervisor, checked without a
Docker engine (none runs on this machine; the checks read what Docker would run).

- The committed docker/docker-compose.yml is exactly what `scripts/localnet.sh compose` writes
  for a fresh localnet on the default ports, so the two cannot drift.
- Against that localnet's node homes: the services are node0..node3; each one's ports follow
  localnet.sh's scheme (p2p, rpc, abci = base + 10 i + 0, 1, 2) and equal its config.toml; its
  peers are the three other nodes by their node IDs (`cometbft show-node-id`); kairosd listens
  where CometBFT's proxy_app points.
- The compose file uses only what docker-compose 1.29 (Debian's) accepts as well as Compose v2:
  no top-level `name:` (1.29's schema refuses it), and top-level, service and build keys from
  1.29's schema (compose/config/compose_spec.json of docker/compose 1.29).
- docker/Dockerfile: base images as build arguments (debian:bookworm, golang:1.25-bookworm,
  debian:bookworm-slim by default), no `# syntax=` line (BuildKit would fetch it from a
  registry); three stages; the build stage installs the packages of scripts/setup.sh; the
  CometBFT stage pins the version CMake is tested against, by `go install` or from a prebuilt
  binary (COMETBFT_PREBUILT=1); the runtime stage installs the Debian package of every shared
  library the kairosd under test links.
- scripts/docker-image-offline.sh and scripts/docker-localnet-test.sh parse (bash -n) and, with no
  Docker engine, say so and exit 2 without doing anything.
- docker/kairos-node, run here as a plain process with a node's compose command on free ports:
  it starts kairosd, then CometBFT connected to it (RPC answers, CometBFT's log shows the ABCI
  handshake); when kairosd is killed with SIGKILL it stops CometBFT and exits 1 (the container's
  restart policy then restarts the pair); SIGTERM stops both and exits 0. `--help` prints its
  comment and nothing of the script."""

import json
import os
import re
import signal
import subprocess
import tempfile
import tomllib
import urllib.request

import yaml

import harness
from harness import check, log
from test_localnet import free_port_base

REPO = harness.REPO
LOCALNET = os.path.join(REPO, "scripts", "localnet.sh")
GENERATOR = os.path.join(REPO, "scripts", "localnet.py")
COMPOSE = os.path.join(REPO, "docker", "docker-compose.yml")
DOCKERFILE = os.path.join(REPO, "docker", "Dockerfile")
KAIROS_NODE = os.path.join(REPO, "docker", "kairos-node")
DEFAULT_BASE = 36600
NODES = 4


def init_localnet(net_dir, base=None):
    env = dict(os.environ, KAIROS_LOCALNET_DIR=net_dir, KAIROSD=harness.KAIROSD,
               COMETBFT=harness.COMETBFT)
    env.pop("KAIROS_LOCALNET_PORT", None)
    if base is not None:
        env["KAIROS_LOCALNET_PORT"] = str(base)
    p = subprocess.run(["bash", LOCALNET, "init"], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    check(p.returncode == 0, f"localnet.sh init exited {p.returncode}:\n{p.stdout}")


def generate(net_dir, out):
    harness.run(["python3", GENERATOR, "compose", net_dir, out])
    with open(out) as f:
        return f.read()


def flags(command):
    """{'abci': ..., 'p2p': ..., ...} from a service's command list."""
    check(command[0] == "kairos-node", f"command must start with kairos-node: {command}")
    out = {}
    for arg in command[1:]:
        m = re.fullmatch(r"--([a-z0-9]+)=(.*)", arg)
        check(m is not None, f"unexpected argument {arg!r}")
        out[m.group(1)] = m.group(2)
    return out


def node_id(home):
    return harness.run([harness.COMETBFT, "show-node-id", "--home", home]).strip()


def test_compose_matches_localnet():
    with tempfile.TemporaryDirectory(prefix="kairos-compose-") as tmp:
        net = os.path.join(tmp, "net")
        init_localnet(net)  # default ports: nothing binds them, init only writes files
        text = generate(net, os.path.join(tmp, "compose.yml"))
        with open(COMPOSE) as f:
            committed = f.read()
        check(text == committed,
              "docker/docker-compose.yml differs from what `scripts/localnet.sh compose` writes for "
              "a fresh localnet: regenerate it (scripts/localnet.sh compose) and commit it")

        doc = yaml.safe_load(committed)
        services = doc["services"]
        check(sorted(services) == [f"node{i}" for i in range(NODES)],
              f"services {sorted(services)}")
        ids = [node_id(os.path.join(net, f"node{i}")) for i in range(NODES)]
        for i in range(NODES):
            name, svc = f"node{i}", services[f"node{i}"]
            with open(os.path.join(net, name, "config", "config.toml"), "rb") as f:
                config = tomllib.load(f)
            f_ = flags(svc["command"])
            base = DEFAULT_BASE + 10 * i
            want = {"p2p": f"tcp://127.0.0.1:{base}", "rpc": f"tcp://127.0.0.1:{base + 1}",
                    "abci": f"tcp://127.0.0.1:{base + 2}"}
            for key, value in want.items():
                check(f_[key] == value, f"{name}: --{key}={f_[key]}, expected {value}")
            check(f_["p2p"] == config["p2p"]["laddr"], f"{name}: p2p differs from config.toml")
            check(f_["rpc"] == config["rpc"]["laddr"], f"{name}: rpc differs from config.toml")
            check(f_["abci"] == config["proxy_app"],
                  f"{name}: kairosd's --abci {f_['abci']} is not CometBFT's proxy_app "
                  f"{config['proxy_app']}")
            peers = set(f_["peers"].split(","))
            want_peers = {f"{ids[j]}@127.0.0.1:{DEFAULT_BASE + 10 * j}"
                          for j in range(NODES) if j != i}
            check(peers == want_peers, f"{name}: peers {sorted(peers)}, expected {sorted(want_peers)}")
            check(peers == set(config["p2p"]["persistent_peers"].split(",")),
                  f"{name}: peers differ from config.toml's persistent_peers")
            check(svc["network_mode"] == "host", f"{name}: network_mode {svc.get('network_mode')}")
            check(svc["volumes"] == [f"${{KAIROS_LOCALNET_DIR:-~/.kairos-localnet}}/{name}:/data"],
                  f"{name}: volumes {svc['volumes']}")
            check(svc["build"]["dockerfile"] == "docker/Dockerfile", f"{name}: build {svc['build']}")
        log(f"compose: 4 services, ports, peers ({', '.join(i[:8] for i in ids)}) and proxy_app "
            "agree with the localnet")

        # The P2P keys are fixed: a second network gets the same node IDs (so the committed
        # file stays valid after `localnet.sh reset`), its validator keys do not repeat.
        net2 = os.path.join(tmp, "net2")
        init_localnet(net2)
        check([node_id(os.path.join(net2, f"node{i}")) for i in range(NODES)] == ids,
              "node IDs differ between two localnets")
        with open(os.path.join(net, "node0", "config", "priv_validator_key.json")) as a, \
                open(os.path.join(net2, "node0", "config", "priv_validator_key.json")) as b:
            check(a.read() != b.read(), "validator keys repeat between two localnets")


# What docker-compose 1.29 accepts (its compose/config/compose_spec.json): the top-level keys
# besides x-*, a service's keys and a build's keys. Compose v2 takes all of them too.
COMPOSE_129_TOP = {"version", "services", "networks", "volumes", "secrets", "configs"}
COMPOSE_129_SERVICE = {
    "deploy", "build", "blkio_config", "cap_add", "cap_drop", "cgroup_parent", "command",
    "configs", "container_name", "cpu_count", "cpu_percent", "cpu_shares", "cpu_quota",
    "cpu_period", "cpu_rt_period", "cpu_rt_runtime", "cpus", "cpuset", "credential_spec",
    "depends_on", "device_cgroup_rules", "devices", "dns", "dns_opt", "dns_search", "domainname",
    "entrypoint", "env_file", "environment", "expose", "extends", "external_links", "extra_hosts",
    "group_add", "healthcheck", "hostname", "image", "init", "ipc", "isolation", "labels", "links",
    "logging", "mac_address", "mem_limit", "mem_reservation", "mem_swappiness", "memswap_limit",
    "network_mode", "networks", "oom_kill_disable", "oom_score_adj", "pid", "pids_limit",
    "platform", "ports", "privileged", "pull_policy", "read_only", "restart", "runtime", "scale",
    "security_opt", "shm_size", "secrets", "sysctls", "stdin_open", "stop_grace_period",
    "stop_signal", "tmpfs", "tty", "ulimits", "user", "userns_mode", "volumes", "volumes_from",
    "working_dir"}
COMPOSE_129_BUILD = {"context", "dockerfile", "args", "labels", "cache_from", "network", "target",
                     "shm_size", "extra_hosts", "isolation"}


def test_compose_works_with_1_29_and_v2():
    with open(COMPOSE) as f:
        doc = yaml.safe_load(f)
    check("name" not in doc, "top-level name: docker-compose 1.29 refuses it (use -p)")
    top = {k for k in doc if not k.startswith("x-")}
    check(top <= COMPOSE_129_TOP, f"top-level keys 1.29 does not know: {top - COMPOSE_129_TOP}")
    for name, svc in doc["services"].items():
        keys = {k for k in svc if not k.startswith("x-")}
        check(keys <= COMPOSE_129_SERVICE,
              f"{name}: keys docker-compose 1.29 does not know: {keys - COMPOSE_129_SERVICE}")
        build = set(svc["build"]) if isinstance(svc.get("build"), dict) else set()
        check(build <= COMPOSE_129_BUILD, f"{name}: build keys 1.29 does not know: "
                                          f"{build - COMPOSE_129_BUILD}")
        check(svc["restart"] in ("no", "always", "on-failure", "unless-stopped"),
              f"{name}: restart {svc['restart']}")
        check(re.fullmatch(r"\d+(ms|s|m|h)", svc["stop_grace_period"]) is not None,
              f"{name}: stop_grace_period {svc['stop_grace_period']} is not a duration")
        check(all(isinstance(c, str) for c in svc["command"]), f"{name}: command not strings")
    log(f"compose: keys valid for docker-compose 1.29 and Compose v2 ({len(doc['services'])} "
        "services, no top-level name)")


def dockerfile_stages(text):
    stages, current = {}, None
    for line in text.splitlines():
        m = re.match(r"FROM\s+(\S+)\s+AS\s+(\S+)", line)
        if m:
            current = m.group(2)
            stages[current] = {"image": m.group(1), "text": ""}
        elif current:
            stages[current]["text"] += line + "\n"
    return stages


def linked_packages(binary):
    """The Debian packages that provide the shared libraries `binary` links."""
    packages = {}
    for line in harness.run(["ldd", binary]).splitlines():
        m = re.search(r"=>\s+(/\S+)", line)
        if not m:
            continue
        lib = os.path.realpath(m.group(1))
        p = subprocess.run(["dpkg", "-S", lib], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
        if p.returncode != 0:  # usrmerge: dpkg knows /lib/... but the path says /usr/lib/...
            alt = lib.replace("/usr/lib/", "/lib/", 1)
            p = subprocess.run(["dpkg", "-S", alt], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        check(p.returncode == 0, f"no Debian package provides {lib} (linked by {binary})")
        packages[p.stdout.split(":")[0]] = lib
    return packages


def test_dockerfile():
    with open(DOCKERFILE) as f:
        text = f.read()
    check(re.search(r"^#\s*syntax\s*=", text, re.M) is None,
          "a # syntax= line makes BuildKit fetch a frontend image")
    stages = dockerfile_stages(text)
    check(list(stages) == ["build", "cometbft", "runtime"], f"stages {list(stages)}")
    base_args = dict(re.findall(r"^ARG (\w+_IMAGE)=(\S+)$", text, re.M))
    want_images = {"build": ("BUILD_IMAGE", "debian:bookworm"),
                   "cometbft": ("GO_IMAGE", "golang:1.25-bookworm"),
                   "runtime": ("RUNTIME_IMAGE", "debian:bookworm-slim")}
    for stage, (arg, default) in want_images.items():
        check(stages[stage]["image"] == "${" + arg + "}",
              f"{stage} stage on {stages[stage]['image']}, expected the build arg {arg}")
        check(base_args.get(arg) == default, f"ARG {arg} defaults to {base_args.get(arg)}, "
                                             f"expected {default}")
    check(text.index("ARG BUILD_IMAGE") < text.index("FROM "),
          "the image ARGs must come before the first FROM")
    check("scripts/setup.sh --packages-only" in stages["build"]["text"],
          "the build stage must install its packages with scripts/setup.sh --packages-only")
    check('if [ "$COMETBFT_PREBUILT" = 1 ]' in stages["cometbft"]["text"] and
          "COPY docker/prebuilt/ /prebuilt/" in stages["cometbft"]["text"],
          "the cometbft stage must take a prebuilt binary with COMETBFT_PREBUILT=1")
    check(os.path.isdir(os.path.join(REPO, "docker", "prebuilt")),
          "docker/prebuilt/ must exist (the cometbft stage copies it)")
    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        tested = re.search(r'set\(KAIROS_COMETBFT_VERSION "([^"]+)"\)', f.read()).group(1)
    check(f"ARG COMETBFT_VERSION={tested}" in text, f"the Dockerfile must pin CometBFT {tested}")
    check("go install github.com/cometbft/cometbft/cmd/cometbft@${COMETBFT_VERSION}"
          in stages["cometbft"]["text"], "the cometbft stage must go install the pinned version")
    check("procps" in stages["runtime"]["text"],
          "the runtime stage installs procps (pkill: restarts are tested by killing a process)")
    installed = set(re.findall(r"[a-z0-9][a-z0-9.+-]+", stages["runtime"]["text"]))
    base_image = {"libc6", "libgcc-s1"}  # in every Debian image
    # The kairosd under test may be the sanitizer build (ctest's); the image builds Release,
    # which links no sanitizer runtime.
    sanitizer = re.compile(r"lib(asan|ubsan|lsan|tsan)\d*$")
    missing = {pkg: lib for pkg, lib in linked_packages(harness.KAIROSD).items()
               if pkg not in installed and pkg not in base_image and not sanitizer.match(pkg)}
    check(not missing, f"the runtime stage does not install {missing} (kairosd links them)")
    log(f"Dockerfile: stages {list(stages)}, CometBFT {tested}, runtime libraries complete")


def test_kairos_node_supervises_the_pair():
    usage = subprocess.run([KAIROS_NODE, "--abci=tcp://127.0.0.1:1"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    check(usage.returncode == 2 and "--abci, --p2p and --rpc are required" in usage.stdout,
          f"missing flags: rc {usage.returncode}, {usage.stdout!r}")
    helped = subprocess.run([KAIROS_NODE, "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    check(helped.returncode == 0 and helped.stdout.startswith("kairos-node: one validator") and
          "kairos-node --abci=" in helped.stdout and "restart policy" in helped.stdout,
          f"--help: rc {helped.returncode}, {helped.stdout!r}")
    check("set -" not in helped.stdout and "#" not in helped.stdout,
          f"--help prints script lines: {helped.stdout!r}")
    with tempfile.TemporaryDirectory(prefix="kairos-node-") as tmp:
        net = os.path.join(tmp, "net")
        init_localnet(net, base=free_port_base())
        out = os.path.join(tmp, "compose.yml")
        doc = yaml.safe_load(generate(net, out))
        command = doc["services"]["node0"]["command"]
        bin_dir = os.path.join(tmp, "bin")
        os.mkdir(bin_dir)
        os.symlink(harness.KAIROSD, os.path.join(bin_dir, "kairosd"))
        os.symlink(harness.COMETBFT, os.path.join(bin_dir, "cometbft"))
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
        for round_ in ("kill kairosd", "sigterm"):
            log_path = os.path.join(tmp, f"kairos-node-{round_.replace(' ', '-')}.log")
            with open(log_path, "wb") as log_file:
                proc = subprocess.Popen([KAIROS_NODE, *command[1:],
                                         f"--home={os.path.join(net, 'node0')}"],
                                        env=env, stdout=log_file, stderr=subprocess.STDOUT,
                                        preexec_fn=harness._die_with_parent, start_new_session=True)
            try:
                rpc = flags(command)["rpc"].replace("tcp://", "http://")
                harness.poll(lambda: status_ok(rpc), 60, "CometBFT's RPC under kairos-node",
                             alive=lambda: check(proc.poll() is None,
                                                 f"kairos-node exited: {read(log_path)[-2000:]}"))
                pids = harness.children(proc.pid)
                check({"kairosd", "cometbft"} <= set(pids.values()),
                      f"kairos-node's children: {pids}")
                if round_ == "kill kairosd":
                    kairosd = next(p for p, n in pids.items() if n == "kairosd")
                    os.kill(kairosd, signal.SIGKILL)
                    rc = proc.wait(timeout=40)
                    check(rc == 1, f"kairos-node exited {rc} after kairosd died, expected 1")
                    text = read(log_path)
                    check("a process exited" in text, f"no exit message:\n{text[-2000:]}")
                else:
                    proc.send_signal(signal.SIGTERM)
                    rc = proc.wait(timeout=40)
                    check(rc == 0, f"kairos-node exited {rc} on SIGTERM, expected 0")
                for pid, name in pids.items():
                    harness.poll(lambda: not harness.alive(pid), 20,
                                 f"{name} (pid {pid}) to be gone")
                log(f"kairos-node, {round_}: exit {rc}, kairosd and cometbft gone")
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def read(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def status_ok(rpc):
    """CometBFT's RPC answers /abci_info (it starts after the ABCI handshake with kairosd)."""
    try:
        with urllib.request.urlopen(rpc + "/abci_info", timeout=2) as r:
            return "response" in json.load(r)["result"]
    except (OSError, ValueError, KeyError):
        return False


def test_docker_scripts_without_an_engine():
    """The offline image script and the compose localnet test parse, and on a machine where no
    Docker engine answers (this one) they say so and exit 2 before doing anything."""
    env = dict(os.environ, DOCKER_HOST="unix:///nonexistent/kairos-test-docker.sock")
    for script in ("docker-image-offline.sh", "docker-localnet-test.sh"):
        path = os.path.join(REPO, "scripts", script)
        harness.run(["bash", "-n", path])
        p = subprocess.run(["bash", path], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=60)
        check(p.returncode == 2 and "no Docker engine" in p.stdout,
              f"{script} without an engine: rc {p.returncode}, {p.stdout!r}")
        log(f"{script}: {p.stdout.strip().splitlines()[0]}")


if __name__ == "__main__":
    harness.main(test_compose_matches_localnet, test_compose_works_with_1_29_and_v2,
                 test_dockerfile, test_kairos_node_supervises_the_pair,
                 test_docker_scripts_without_an_engine)
