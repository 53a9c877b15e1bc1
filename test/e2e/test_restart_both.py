#!/usr/bin/env python3
"""Crash recovery: kill -9 both kairosd and CometBFT mid-chain, restart both on the same homes and
ports. kairosd must reload its committed state, the handshake must succeed (replaying what the app
missed), and the chain must go on with Info's app hash matching the next block header. Signed
transfers before the crash must survive it: balances, sequences and unordered nonces (a replay of
a pre-crash unordered tx is still refused), and the next ordered tx continues the sequence."""

import os
import shutil

import harness
from harness import check, log

ACCOUNTS = {"alice": harness.GENESIS_COINS, "bob": harness.GENESIS_COINS}
FEE = int(harness.FEES.removesuffix("stake"))
START = int(harness.GENESIS_COINS.removesuffix("stake"))


def test_restart_both():
    with harness.Node("restart-both", accounts=ACCOUNTS) as node:
        node.start()
        node.wait_for_height(2)
        node.send("alice", "bob", "100stake")
        unordered = node.send("alice", "bob", "200stake", unordered=True, timeout="300s")
        unordered_tx = node.tx_bytes(unordered["txhash"])
        node.wait_for_height(int(unordered["height"]) + 2)
        genesis_chain = node.chain_id()
        chain_height = node.height()
        # Kill both at once, CometBFT first so it cannot react to kairosd's death.
        node.cometbft.kill9()
        node.kairosd.kill9()
        before = node.kairosd.text()
        logged = harness.last_committed_height(before)
        log(f"killed both at chain height >= {chain_height}; kairosd logged commit {logged} last")

        chain, app_height, app_hash = harness.restart_and_check_resume(node, chain_height)
        check(chain == genesis_chain,
              f"kairosd reloaded chain {chain}, the node runs {genesis_chain}")
        # The log line follows the durable write, so the crash may fall between the two.
        check(app_height in (logged, logged + 1),
              f"kairosd reloaded height {app_height}, but its last logged commit was {logged}")
        check(app_hash in before,
              f"reloaded app hash {app_hash} is not one kairosd computed before the crash")

        harness.check_logged_hashes_match_headers(node, "kairosd.1", "kairosd.2")

        # The transfers survived: balances, alice's sequence 1, the unordered nonce (CometBFT's
        # cache died with it, so the replay reaches our CheckTx).
        check(node.balance("alice") == START - 300 - 2 * FEE, "alice's balance after the crash")
        check(node.balance("bob") == START + 300, "bob's balance after the crash")
        check(node.account("alice")["account"]["sequence"] == "1", "alice's sequence")
        res = node.broadcast_sync(unordered_tx)
        check(res.get("code") == harness.CODE_INVALID_REQUEST and
              "has already used timeout" in res.get("log", ""),
              f"a pre-crash unordered tx replayed after the restart: {res}")
        node.send("alice", "bob", "1stake")
        check(node.account("alice")["account"]["sequence"] == "2", "alice's sequence")

        # Another app-hash check further on, then a clean stop of both.
        node.check_app_hash()
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()


def test_replay_after_app_falls_behind():
    """kairosd's data is rolled back to an earlier height (a copy taken during a clean stop), so
    at the handshake CometBFT must replay many blocks through FinalizeBlock + Commit, checking
    each app hash against the stored headers; replay must reproduce them exactly."""
    with harness.Node("replay", accounts=ACCOUNTS) as node:
        node.start()
        node.wait_for_height(3)
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()
        data = os.path.join(node.kairos_home, "data")
        saved = data + ".saved"
        shutil.copytree(data, saved)
        saved_height = harness.last_committed_height(node.kairosd.text())

        node.start()
        node.wait_for_height(saved_height + 1)
        # Blocks with transfers, so the replayed hashes depend on tx bytes and state too.
        for i in range(3):
            node.send("alice", "bob", f"{i + 1}stake", unordered=i == 1)
        node.send("bob", "alice", "10stake")
        balances = {who: node.balance(who) for who in ACCOUNTS}
        chain_height = node.wait_for_height(saved_height + 10)
        node.cometbft.kill9()
        node.kairosd.kill9()
        shutil.rmtree(data)
        shutil.move(saved, data)
        log(f"rolled kairosd back to height {saved_height}; CometBFT is at >= {chain_height}")

        _, app_height, _ = harness.restart_and_check_resume(node, chain_height, saved_height)
        check(app_height == saved_height,
              f"kairosd reloaded height {app_height}, expected the rolled-back {saved_height}")
        # Every replayed block gives exactly the app hash kairosd computed the first time.
        first = harness.committed_hashes(node.proc("kairosd.2").text())  # before the rollback
        again = harness.committed_hashes(node.kairosd.text())
        for h in range(saved_height + 1, chain_height):
            check(h in first and again.get(h) == first[h],
                  f"block {h}: app hash {again.get(h)} on replay, {first.get(h)} the first time")
        cmt = node.cometbft.text()
        check(f"appHeight={saved_height}" in cmt and "ABCI Replay Blocks" in cmt,
              f"CometBFT did not log a replay from app height {saved_height}")
        after = {who: node.balance(who) for who in ACCOUNTS}
        check(after == balances, f"balances after the replay {after}, before {balances}")
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()


if __name__ == "__main__":
    harness.main(test_restart_both, test_replay_after_app_falls_behind)
