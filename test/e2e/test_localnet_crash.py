#!/usr/bin/env python3
"""Crash under load on the 4-validator localnet (scripts/localnet.sh, ctest labels e2e and
localnet).

`kairosd bench load` sends transfers (30% unordered) at a modest rate for 60 s. Meanwhile, at
random moments, one validator's kairosd AND CometBFT get kill -9 and are restarted 10 s later,
three times, each time another of nodes 1..3 in random order. After each restart the node must
catch up: pass the height the others had, with its /abci_info app hash equal to the next
header's on node 0.

The load goes to node 0 only, which is never killed: an accepted tx that sits in a killed node's
mempool before it gossiped it is lost by CometBFT's design (the mempool is not durable), and an
ordered tx lost that way would strand its sender's later sequences; neither is what this test is
about. Every validator still crashes while txs flow to it by gossip and while it proposes.

After the run, with all four nodes up:
- the generator sent every tx, node 0 accepted every one, and every accepted tx was included;
- scanning every block from height 1 on every node: one block hash and one app hash per height on
  all four nodes, and every accepted tx hash is in exactly one block, at exactly one position
  (checked on node 0's blocks, which equal the others' by their hashes);
- each node's /abci_info app hash is the one the next header carries on every node.
"""

import base64
import collections
import os
import random
import subprocess
import time

import harness
from harness import check, log
from localnet_cluster import LocalnetCluster, wait_file_text

RATE = 15            # txs per second
DURATION = 60        # seconds of load
ACCOUNTS = 16
UNORDERED_SHARE = 0.3
DOWN_SECONDS = 10    # a killed node is restarted this long after the kill (the scenario)
KILLS = 3


def catch_up(net, i, timeout=90):
    """Waits until node i passes the height node 0 had when it restarted, then checks its
    /abci_info app hash against node 0's next header. Returns the height compared."""
    target = net.nodes[0].height() + 1
    node = net.nodes[i]
    harness.poll(lambda: (_height_or_none(node) or 0) >= target, timeout,
                 f"node{i} to reach height {target} after its restart", interval=0.2)
    info = node.abci_info()
    h = int(info["last_block_height"])
    mine = harness.b64_to_hex(info["last_block_app_hash"])
    theirs = net.nodes[0].app_hash_after(h)
    check(mine == theirs, f"node{i} after restart: app hash {mine} at height {h}, node0's header "
                          f"{h + 1} has {theirs}")
    log(f"node{i} caught up: height {h}, app hash {mine} = node0's")
    return h


def _height_or_none(node):
    try:
        return int(node.rpc("status", timeout=2)["sync_info"]["latest_block_height"])
    except (harness.E2EError, harness.RpcError, KeyError, ValueError):
        return None


def scan_blocks(net, top):
    """Every block 1..top on every node: one block hash and app hash per height. Returns
    {tx hash: [(height, position), ...]} from node 0's blocks."""
    conns = [harness.RpcConnection(net.rpc_port(i)) for i in range(len(net.nodes))]
    where = collections.defaultdict(list)
    app_hashes = set()
    try:
        for h in range(1, top + 1):
            seen = {}
            for i, c in enumerate(conns):
                b = c.call("block", height=h)
                seen[i] = (b["block_id"]["hash"], b["block"]["header"]["app_hash"])
                if i == 0:
                    for pos, tx in enumerate(b["block"]["data"].get("txs") or []):
                        where[harness.tx_hash(base64.b64decode(tx))].append((h, pos))
            check(len(set(seen.values())) == 1, f"nodes disagree at height {h}: {seen}")
            app_hashes.add(seen[0][1])
    finally:
        for c in conns:
            c.close()
    log(f"heights 1..{top}: one block hash and one app hash per height on all "
        f"{len(net.nodes)} nodes ({len(app_hashes)} distinct app hashes, "
        f"{sum(len(v) for v in where.values())} txs)")
    return where


def test_crash_under_load():
    rng = random.Random()
    with LocalnetCluster("crash") as net:
        t_start = time.monotonic()
        for node in net.nodes:
            node.wait_for_height(2, timeout=120)
        out_path = os.path.join(net.tmp, "bench.json")
        err_path = os.path.join(net.tmp, "bench.err")
        tx_log = os.path.join(net.tmp, "bench.txs")
        argv = net.bench_load_argv(
            "--rate", str(RATE), "--duration", f"{DURATION}s", "--accounts", str(ACCOUNTS),
            "--unordered-share", str(UNORDERED_SHARE), "--node", net.url(0),
            "--fund-from", "user0", "--drain", "60s", "--tx-log", tx_log, "--output", "json")
        log("load: " + " ".join(argv))
        with open(out_path, "w") as out, open(err_path, "w") as err:
            gen = subprocess.Popen(argv, env=net.env, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=err, preexec_fn=harness._die_with_parent)
        try:
            wait_file_text(err_path, "bench: sending", 120, gen)
            t_load = time.monotonic()
            log("the load runs; the crashes begin")
            victims = rng.sample(range(1, len(net.nodes)), KILLS)
            for i in victims:
                pause = rng.uniform(1, 6)
                log(f"next: node{i} in {pause:.1f}s")
                time.sleep(pause)  # a random moment: the scenario, not a wait for a condition
                net.kill_node(i)
                killed_at = time.monotonic()
                others = [n for k, n in enumerate(net.nodes) if k != i]
                h = others[0].height()
                others[0].wait_for_height(h + 2, timeout=60)  # 3 of 4 validators go on
                time.sleep(max(0.0, killed_at + DOWN_SECONDS - time.monotonic()))
                net.start_node(i)
                catch_up(net, i)
            log(f"{KILLS} crashes done {time.monotonic() - t_load:.0f}s into the load")
            rc = gen.wait(timeout=DURATION + 180)
        finally:
            if gen.poll() is None:
                gen.kill()
                gen.wait()
        with open(err_path) as f:
            err_text = f.read()
        with open(out_path) as f:
            out_text = f.read()
        log("generator stderr:\n" + err_text.rstrip())
        check(rc == 0, f"bench load exited {rc}:\n{out_text}")
        res = harness.Completed(argv, subprocess.CompletedProcess(argv, rc, out_text,
                                                                  err_text)).json()
        log(f"generator: {res}")
        planned = RATE * DURATION
        check(res["planned"] == planned and res["sent"] == planned,
              f"sent {res['sent']} of {res['planned']} (expected {planned})")
        check(res["accepted"] == res["sent"] and not res["rejections"],
              f"node 0 did not accept every tx: {res['rejections']}")
        check(res["included"] == res["accepted"] and res["accepted_not_included"] == 0,
              f"{res['accepted_not_included']} accepted txs never seen in a block")
        check(res["duplicate_inclusions"] == 0 and res["included_failed"] == 0,
              f"duplicates {res['duplicate_inclusions']}, failed in block "
              f"{res['included_failed_codes']}")
        check(res["included_result_unknown"] == 0,
              f"{res['included_result_unknown']} included txs with no result code")
        check(res["unordered"] == int(planned * UNORDERED_SHARE), f"unordered: {res['unordered']}")

        # All four up: scan every block on every node.
        for node in net.nodes:
            node.wait_for_height(res["last_height"] + 1, timeout=60)
        top = min(node.height() for node in net.nodes)
        where = scan_blocks(net, top)
        accepted = []
        with open(tx_log) as f:
            for line in f:
                tx_hash, _account, _kind, _node, code, height = line.split()
                if int(code) == 0:
                    accepted.append((tx_hash, int(height)))
        check(len(accepted) == res["accepted"], f"tx log: {len(accepted)} accepted lines")
        lost = [h for h, _ in accepted if not where.get(h)]
        twice = {h: where[h] for h, _ in accepted if len(where.get(h, [])) > 1}
        wrong = [(h, height, where[h]) for h, height in accepted
                 if len(where.get(h, [])) == 1 and where[h][0][0] != height]
        check(not lost, f"{len(lost)} accepted txs are in no block, e.g. {lost[:5]}")
        check(not twice, f"{len(twice)} accepted txs are in more than one block: "
                         f"{list(twice.items())[:5]}")
        check(not wrong, f"the generator saw txs at other heights than the scan: {wrong[:5]}")
        dups = {h: w for h, w in where.items() if len(w) > 1}
        check(not dups, f"txs in more than one block: {list(dups.items())[:5]}")
        log(f"every one of the {len(accepted)} accepted txs is in exactly one block")

        for node in net.nodes:
            info = node.abci_info()
            h = int(info["last_block_height"])
            app_hash = harness.b64_to_hex(info["last_block_app_hash"])
            for other in net.nodes:
                header = other.app_hash_after(h)
                check(header == app_hash, f"{node.name} abci_info at {h}: {app_hash}, "
                                          f"{other.name} header {h + 1}: {header}")
        log("abci_info of every node matches the next header on every node; "
            f"test body took {time.monotonic() - t_start:.0f}s")


if __name__ == "__main__":
    harness.main(test_crash_under_load)
