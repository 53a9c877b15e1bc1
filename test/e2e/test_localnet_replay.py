#!/usr/bin/env python3
"""Replay across nodes on the 4-validator localnet (scripts/localnet.sh, ctest labels e2e and
localnet).

An unordered transfer (ADR-070, signed with cosmos_tx.py: sequence 0, an exact timeout) is sent to
node 0 and waited for in a block. Then, on other nodes:
- the same bytes through node 2's broadcast_tx_sync: CometBFT answers from its cache (the block
  put the tx there), an RPC error "tx already exists in cache";
- the same bytes through node 2's /check_tx (straight to kairosd's CheckTx, past that cache):
  code 18 (sdk) "sender <addr> has already used timeout <t>";
- another tx on the same signer and timeout (another amount, so other bytes and hash) through
  node 3's broadcast_tx_sync: the same code 18 and log; it is in no block afterwards.
The receiver's balance went up by the first amount only, on every node.
"""

import harness
from harness import check, log
from localnet_cluster import LocalnetCluster, load_key
from test_transfers import check_rejected_as_used_nonce as check_used_nonce


def test_unordered_replay_across_nodes():
    with LocalnetCluster("replay") as net:
        n0, n2, n3 = net.nodes[0], net.nodes[2], net.nodes[3]
        for node in net.nodes:
            node.wait_for_height(2, timeout=120)
        sender, receiver = load_key(n0, "user0"), load_key(n0, "user1")
        for node in (n2, n3):
            node.keys.update(n0.keys)
        n0._chain_id = n0.chain_id()  # build_send's chain id (a RunningNode has no genesis path)
        before = [node.query_balance(receiver) for node in net.nodes]
        account_number = int(n0.account("user0")["account"]["account_number"])
        timeout = harness.now_unix_nanos() + 120 * 10**9
        tx = n0.build_send("user0", receiver, "7stake", account_number=account_number,
                           unordered=True, timeout_unix_nanos=timeout, sequence=0)
        res = n0.broadcast_sync(tx)
        check(res.get("code") == 0, f"node0 refused the unordered tx: {res}")
        found = n2.wait_tx(tx, timeout=60)
        check(found["code"] == 0, f"the unordered tx failed in block {found['height']}: {found}")
        log(f"unordered tx {harness.tx_hash(tx)} (timeout {timeout}) sent to node0, in block "
            f"{found['height']} seen on node2")

        # (a) the same bytes to node 2: its CometBFT knows the tx from the block.
        try:
            again = n2.broadcast_sync(tx)
            check(False, f"node2 accepted the same bytes again: {again}")
        except harness.RpcError as e:
            data = e.error.get("data") or ""
            check(harness.CACHE_ERROR_FLOOD in data, f"node2 broadcast of the same bytes: {e}")
            log(f"node2 broadcast_tx_sync of the same bytes: RPC error {data!r}")
        # ... and past CometBFT's cache, kairosd's own answer on node 2.
        check_used_nonce(n2.check_tx(tx), sender, timeout, "node2 /check_tx of the same bytes")

        # (b) another tx on the same nonce (signer + timeout) to node 3.
        other = n0.build_send("user0", receiver, "8stake", account_number=account_number,
                              unordered=True, timeout_unix_nanos=timeout, sequence=0)
        check(other != tx, "the second tx has the same bytes")
        check_used_nonce(n3.broadcast_sync(other), sender, timeout,
                         "node3 broadcast_tx_sync of another tx on the same nonce")

        # Some blocks later: the second tx in no block, the receiver richer by 7 on every node.
        top = max(node.height() for node in net.nodes) + 2
        for node in net.nodes:
            node.wait_for_height(top, timeout=60)
        check(n3.find_tx(other) is None and n0.find_tx(other) is None,
              "the replayed tx is in a block")
        after = [node.query_balance(receiver) for node in net.nodes]
        check(after == [b + 7 for b in before], f"receiver balances {before} -> {after}")
        log(f"receiver's balance +7 on all nodes ({after[0]}); the replay is in no block")


if __name__ == "__main__":
    harness.main(test_unordered_replay_across_nodes)
