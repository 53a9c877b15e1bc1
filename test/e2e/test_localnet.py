#!/usr/bin/env python3
"""scripts/localnet.sh: four validators (kairosd + CometBFT v0.38.25 each) on loopback, in a temp
KAIROS_LOCALNET_DIR on free ports.

Agreement: every node passes height 20 with the same block (header hash via block_id) and the same
app hash at every height 1..20, and each node's /abci_info app hash is the one the next header
carries on every node. Proofs across nodes: a transfer sent to node 0 (CLI, the localnet keyring)
is queried on node 3 with prove=true, and the proof verifies (ics23-verify) against node 3's
header app hash; a wrong root must not verify. Also: start refuses while running, status lists
four nodes, stop ends every process and reset deletes the directory."""

import os
import subprocess
import tempfile
import time
import urllib.request

import harness
from harness import check, log
from test_store import balance_key, proof_items, store_answer

LOCALNET = os.path.join(harness.REPO, "scripts", "localnet.sh")
NODES = 4
HEIGHT = 20
PORTS_PER_NODE = 10  # localnet.sh: node i uses base + 10 i + {0: p2p, 1: rpc, 2: abci, 3: prom}


def free_port_base():
    """A base port with the 40 ports localnet.sh uses all free on 127.0.0.1, below the kernel's
    ephemeral range: the nodes dial each other, and an outgoing connection once took node 3's
    RPC port between this check and CometBFT's bind (CI, 2026-11-21)."""
    return harness.free_port_run(NODES * PORTS_PER_NODE)


def localnet(env, *args, expect_rc=0, timeout=120):
    p = subprocess.run(["bash", LOCALNET, *args], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, errors="replace")
    check(p.returncode == expect_rc,
          f"localnet.sh {' '.join(args)} exited {p.returncode} (expected {expect_rc}):\n{p.stdout}")
    return p.stdout


def pids(net_dir):
    out = {}
    for name in os.listdir(os.path.join(net_dir, "pids")):
        with open(os.path.join(net_dir, "pids", name)) as f:
            out[name.removesuffix(".pid")] = int(f.read())
    return out


def alive(pid):
    """Running (a zombie, exited but not reaped yet, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def dump_logs(net_dir, lines=40):
    logs = os.path.join(net_dir, "logs")
    for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        with open(os.path.join(logs, name), errors="replace") as f:
            tail = f.read().splitlines()[-lines:]
        print(f"----- {name}, last {lines} lines -----\n" + "\n".join(tail))
    print("----- end of logs -----", flush=True)


def test_four_validators_agree_and_prove_across_nodes():
    tmp = tempfile.mkdtemp(prefix="kairos-e2e-localnet-")
    net_dir = os.path.join(tmp, "net")
    base = free_port_base()
    env = dict(os.environ, KAIROS_LOCALNET_DIR=net_dir, KAIROS_LOCALNET_PORT=str(base),
               KAIROSD=harness.KAIROSD, COMETBFT=harness.COMETBFT,
               KAIROS_KEYRING_PASSPHRASE=harness.KEYRING_PASSPHRASE)
    log(f"localnet in {net_dir}, ports {base}..{base + NODES * PORTS_PER_NODE - 1}")
    started = {}
    ok = False
    try:
        t0 = time.monotonic()
        log(localnet(env, "start").rstrip())
        started = pids(net_dir)
        check(sorted(started) == sorted([f"{p}{i}" for p in ("cometbft", "kairosd")
                                         for i in range(NODES)]), f"pid files: {started}")
        out = localnet(env, "start", expect_rc=1)
        check("already running" in out, f"a second start did not refuse: {out}")
        check(pids(net_dir) == started, "a refused start changed the pid files")

        keyring = os.path.join(net_dir, "keyring")
        nodes = [harness.RunningNode(f"node{i}", base + PORTS_PER_NODE * i + 1, keyring)
                 for i in range(NODES)]
        for node in nodes:
            node.wait_for_height(2, timeout=120)
        log(f"all {NODES} nodes at height 2 after {time.monotonic() - t0:.1f}s")

        # A transfer sent to node 0, then its balance with a proof from node 3.
        sender, receiver = "user0", "user1"
        to = nodes[0].cli("keys", "show", receiver, "--output", "json").json()["address"]
        before = nodes[3].balance(to)
        res = nodes[0].send(sender, to, "12345stake", timeout="120s")
        tx_height = int(res["height"])
        nodes[3].wait_for_height(tx_height + 1, timeout=60)
        key = balance_key(to)
        q = nodes[3].abci_query("/store/" + key.hex(), height=tx_height, prove=True)
        at, value, proof = store_answer(q, key, tx_height, prove=True)
        check(value == str(before + 12345).encode(),
              f"node 3: balance of {to} at {at} is {value!r}, expected {before + 12345}")
        root = bytes.fromhex(nodes[3].app_hash_after(tx_height))
        harness.ics23_verify(proof_items(f"node3 {receiver}@{tx_height}", root, key, value,
                                         proof))
        log(f"tx in block {tx_height} on node 0; node 3 proves {receiver}'s balance {value!r}")

        # Agreement: every node past HEIGHT, the same block and app hash at every height.
        for node in nodes:
            node.wait_for_height(max(HEIGHT, tx_height + 2), timeout=120)
        log(f"all {NODES} nodes past height {HEIGHT} after {time.monotonic() - t0:.1f}s")
        last = min(node.height() for node in nodes)
        hashes = set()
        for h in range(1, last + 1):
            seen = {}
            for node in nodes:
                b = node.rpc("block", height=h)
                seen[node.name] = (b["block_id"]["hash"], b["block"]["header"]["app_hash"])
            check(len(set(seen.values())) == 1, f"nodes disagree at height {h}: {seen}")
            hashes.add(seen["node0"][1])
        check(len(hashes) >= 2, f"the app hash never changed over {last} heights: {hashes}")
        log(f"heights 1..{last}: one block and one app hash per height on all {NODES} nodes "
            f"({len(hashes)} distinct app hashes)")
        for node in nodes:
            info = node.abci_info()
            h = int(info["last_block_height"])
            app_hash = harness.b64_to_hex(info["last_block_app_hash"])
            for other in nodes:
                header = other.app_hash_after(h)
                check(header == app_hash, f"{node.name} abci_info at {h}: {app_hash}, "
                                          f"{other.name} header {h + 1}: {header}")
        log("abci_info of every node matches the next header on every node")

        # Each kairosd serves its metrics on base + 10 i + 4 (docs/metrics.md): every node
        # counted the blocks it executed, and node 0 counts the CheckTx of the transfer.
        for i, node in enumerate(nodes):
            text = scrape_metrics(base + PORTS_PER_NODE * i + 4)
            height = metric_value(text, "kairos_block_height")
            check(height is not None and height >= HEIGHT,
                  f"{node.name} metrics: kairos_block_height {height}, expected >= {HEIGHT}")
            blocks = metric_value(text, 'kairos_abci_requests_total{method="finalize_block"}')
            check(blocks is not None and blocks >= HEIGHT,
                  f"{node.name} metrics: {blocks} finalize_block requests")
        checks = metric_value(scrape_metrics(base + 4),
                              'kairos_abci_requests_total{method="check_tx"}')
        check(checks is not None and checks >= 1, f"node0 metrics: {checks} check_tx requests")
        log("metrics: every kairosd counts its blocks (kairos_block_height, finalize_block), "
            "node 0 its CheckTx")

        status = localnet(env, "status")
        log("status:\n" + status.rstrip())
        rows = [ln.split() for ln in status.splitlines()[1:]]  # node, 2 pids, height, hash, peers
        check(len(rows) == NODES and all(int(r[3]) >= HEIGHT and r[5] == str(NODES - 1)
                                         for r in rows), f"status: {status}")
        ok = True
    finally:
        if not ok and os.path.isdir(net_dir):
            dump_logs(net_dir)
        out = localnet(env, "stop", timeout=180)
        log(out.rstrip())
        still = {name: pid for name, pid in started.items() if alive(pid)}
        for pid in still.values():  # never leave them behind, even after a failed stop
            os.kill(pid, 9)
        check(not still, f"alive after localnet.sh stop: {still}")
        for i in range(NODES if started else 0):
            with open(os.path.join(net_dir, "logs", f"kairosd{i}.log"), errors="replace") as f:
                text = f.read()
            for pat in harness.SANITIZER_PATTERNS:
                check(pat not in text, f"kairosd{i}.log has a sanitizer report ({pat!r})")
            if ok:
                check("stopped cleanly" in text, f"kairosd{i} did not stop cleanly")
        if harness.KEEP:
            log(f"kept {net_dir}")
        else:
            localnet(env, "reset")
            check(not os.path.exists(net_dir), f"reset left {net_dir}")
            os.rmdir(tmp)


def scrape_metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def metric_value(text, series):
    """The value of one series ('name' or 'name{label="x"}') in Prometheus text format."""
    name, _, labels = series.partition("{")
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        key, _, value = line.rpartition(" ")
        if key == series or (labels and key.startswith(name + "{") and
                             all(part in key for part in labels.rstrip("}").split(","))):
            return float(value)
    return None


if __name__ == "__main__":
    harness.main(test_four_validators_agree_and_prove_across_nodes)
