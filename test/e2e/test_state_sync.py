#!/usr/bin/env python3
"""State sync on the 4-validator localnet (ctest labels e2e and localnet).

Two validators serve snapshots (kairosd state_sync.snapshot_interval, chunks of 1 KiB so that
the state is cut into many): node2 honestly, node3 with state_sync.corrupt_chunks_unsafe (every
chunk it serves has one byte changed). `kairosd bench load` accounts and transfers to new
accounts give the state some size (~25 chunks: the chance that CometBFT fetches none of them
from node3 is ~2^-25). Then
a new full node (localnet.sh add-node) joins with CometBFT's statesync.enable, rpc_servers two of
the nodes, trust_height and trust_hash from node0. It must:
- restore a snapshot (its kairosd log says "restored height H") without InitChain or any block
  at or below H (its CometBFT's first block is above H): it did not replay from genesis;
- reject node3 by name: its log names node3's node ID as a bad sender of a chunk, and the
  restore still completes, from node2;
- agree with node0 on the app hash at every height from H + 1 to a later one;
- answer a proven query of a balance moved before the snapshot, which the ICS-23 reference
  verifier accepts against the app hash of its height.
"""

import hashlib
import os
import re
import subprocess

import cosmos_tx
import harness
from harness import check, log
from localnet_cluster import LocalnetCluster, load_key, run_bench
from test_store import Roots, balance_key, proof_items, query_store

INTERVAL = 5
KEEP = 60  # snapshots kept: the test's blocks come every ~0.6 s, so a snapshot lives ~3 min
CHUNK_BYTES = 1024
RECIPIENTS = 12
BENCH_ACCOUNTS = 120  # funded by `bench load`: ~400 keys, ~25 chunks of 1 KiB


def fresh_address(seed):
    return cosmos_tx.bech32_encode("kairos", hashlib.sha256(seed.encode()).digest()[:20])


def kairos_config(net, i):
    return os.path.join(net.dir, f"node{i}", "kairos", "config.toml")


def node_id(net, i):
    return subprocess.run([harness.COMETBFT, "show-node-id", "--home",
                           os.path.join(net.dir, f"node{i}")], check=True, text=True,
                          stdout=subprocess.PIPE).stdout.strip()


def kairosd_log(net, i):
    with open(os.path.join(net.dir, "logs", f"kairosd{i}.log"), errors="replace") as f:
        return f.read()


def test_state_sync_join():
    net = LocalnetCluster("statesync", room=5)
    with net:
        n0 = net.nodes[0]
        for node in net.nodes:
            node.wait_for_height(2, timeout=120)
        # node2 serves honest snapshots, node3 corrupt ones; node0 and node1 none.
        for i, corrupt in ((2, "false"), (3, "true")):
            net.kill_node(i)
            harness.set_toml_keys(kairos_config(net, i), {
                "state_sync.snapshot_interval": str(INTERVAL),
                "state_sync.chunk_bytes": str(CHUNK_BYTES),
                "state_sync.snapshot_keep_recent": str(KEEP),
                "state_sync.corrupt_chunks_unsafe": corrupt})
            net.start_node(i)

        # State worth cutting into many chunks: bench accounts funded and trading, and transfers
        # to new accounts.
        out = run_bench(net, ["--rate", "20", "--duration", "3s", "--accounts",
                              str(BENCH_ACCOUNTS), "--node", net.url(0), "--fund-from", "user1",
                              "--drain", "60s"])
        log(f"bench load: {out.get('included')} of {out.get('sent')} txs included")
        load_key(n0, "user0")
        n0._chain_id = n0.chain_id()
        recipients = [fresh_address(f"statesync-{k}") for k in range(RECIPIENTS)]
        account_number = int(n0.account("user0")["account"]["account_number"])
        sequence = int(n0.account("user0")["account"].get("sequence", 0))
        txs = [n0.build_send("user0", to, f"{k + 1}stake", account_number=account_number,
                             sequence=sequence + k) for k, to in enumerate(recipients)]
        for tx in txs:
            res = n0.broadcast_sync(tx)
            check(res.get("code") == 0, f"a transfer was refused: {res}")
        last = n0.wait_tx(txs[-1], timeout=90)
        check(last["code"] == 0, f"the last transfer failed: {last}")
        moved = recipients[0]
        log(f"{RECIPIENTS} transfers in by height {last['height']}")

        # Wait for a snapshot taken after the transfers, on both servers.
        want = (int(last["height"]) // INTERVAL + 1) * INTERVAL
        for i in (2, 3):
            manifest = os.path.join(net.dir, f"node{i}", "kairos", "snapshots", str(want),
                                    "manifest")
            harness.poll(lambda: os.path.exists(manifest), 90, f"node{i}'s snapshot at {want}")
        n0.wait_for_height(want + 3, timeout=60)

        trust_height = 2
        trust_hash = n0.rpc("block", height=trust_height)["block_id"]["hash"]
        net.env["KAIROS_LOCALNET_COMETBFT_CONFIG"] = " ".join([
            "statesync.enable=true",
            f"statesync.rpc_servers={net.url(0)},{net.url(1)}",
            f"statesync.trust_height={trust_height}",
            f"statesync.trust_hash={trust_hash}",
            "statesync.trust_period=168h0m0s",
            "statesync.discovery_time=5s",
            "statesync.chunk_request_timeout=5s"])
        joined = net.add_node()
        del net.env["KAIROS_LOCALNET_COMETBFT_CONFIG"]
        joined.wait_for_height(want + 6, timeout=180)

        text = kairosd_log(net, 4)
        restored = re.search(r"state sync: restored height (\d+)", text)
        check(restored, "the new node's kairosd never restored a snapshot")
        h = int(restored.group(1))
        check(h >= want and h % INTERVAL == 0, f"restored height {h}, expected >= {want}")
        check("InitChain:" not in text, "the new node's kairosd ran InitChain: it replayed")
        earliest = int(joined.rpc("status")["sync_info"]["earliest_block_height"])
        check(earliest > h, f"the new node's CometBFT holds blocks from {earliest}, not above "
                            f"the snapshot's height {h}: it did not state sync")
        bad = node_id(net, 3)
        check(f"from peer {bad} is not the one its manifest lists" in text,
              f"node3 ({bad}) was not rejected as a bad sender")
        log(f"node4 restored height {h} (its CometBFT's first block: {earliest}) and rejected "
            f"node3 {bad} as a bad sender")

        top = h + 8
        joined.wait_for_height(top + 1, timeout=60)
        for height in range(h + 1, top + 1):
            mine, theirs = joined.app_hash_after(height), n0.app_hash_after(height)
            check(mine == theirs, f"app hash after {height}: node4 {mine}, node0 {theirs}")
        log(f"node4 and node0 agree on the app hash after every height {h + 1}..{top}")

        key = balance_key(moved)
        at, value, proof = query_store(joined, key)
        check(value == b"1", f"node4: {moved}'s balance is {value!r}")
        harness.ics23_verify(proof_items(f"balance@{at}", Roots(joined)(at), key, value, proof))


if __name__ == "__main__":
    harness.main(test_state_sync_join)
