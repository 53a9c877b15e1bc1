#!/usr/bin/env python3
"""Crash recovery: kill -9 both kairosd and CometBFT mid-chain, restart both on the same homes and
ports. kairosd must reload its committed state, the handshake must succeed (replaying what the app
missed), and the chain must go on with Info's app hash matching the next block header."""

import os
import shutil
import time

import harness
from harness import check, log


def test_restart_both():
    with harness.Node("restart-both") as node:
        node.start()
        node.wait_for_height(5)
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

        # Another app-hash check further on, then a clean stop of both.
        node.check_app_hash()
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()


def test_replay_after_app_falls_behind():
    """kairosd's data is rolled back to an earlier height (a copy taken during a clean stop), so
    at the handshake CometBFT must replay many blocks through FinalizeBlock + Commit, checking
    each app hash against the stored headers; replay must reproduce them exactly."""
    with harness.Node("replay") as node:
        node.start()
        node.wait_for_height(3)
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()
        data = os.path.join(node.kairos_home, "data")
        saved = data + ".saved"
        shutil.copytree(data, saved)
        saved_height = harness.last_committed_height(node.kairosd.text())

        node.start()
        for i in range(3):  # blocks with txs, so the replayed hashes depend on tx bytes too
            res = node.broadcast_tx_commit(f"replay-{i}-{time.time_ns()}".encode())
            check(res["tx_result"].get("code", 0) == 0, f"tx {i}: {res}")
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
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()


if __name__ == "__main__":
    harness.main(test_restart_both, test_replay_after_app_falls_behind)
