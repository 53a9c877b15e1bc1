#!/usr/bin/env python3
"""The mempool reproductions of issue 20 (items 2 and 7) as figures, on whatever kairosd
$KAIROSD names: run it against an old build and a new one and compare. It asserts nothing (the
e2e tests do: test_mempool_flood.py, test_mempool.py); it prints one JSON line per scenario.

  flood:       a pool of 320 (`[mempool] max_txs = 320`) holding 300 honest ready txs (30
               senders x 10 sequences, 2500stake for 100000 gas = 0.025 per gas); 5 accounts
               send 64 txs each behind a sequence gap, each offering the whole balance as fee.
               Printed: the flood's answers by code, honest txs evicted and kept (the pool's
               Stats), the next honest tx's code, and the size of block 1 (the next proposal;
               the flood runs before it).
  replacement: a tx at 5000stake for 200000 gas (0.025 per gas), then the same sequence at
               5600stake (+12%, over the default 10% bump): the replacement's code and log.

Usage: KAIROSD=/path/to/kairosd python3 scripts/mempool_figures.py [flood] [replacement]
(KAIROS_E2E_APP_MEMPOOL=1 for CometBFT v0.40's app mempool, as the e2e tests.)
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))

import harness  # noqa: E402
from harness import DENOM  # noqa: E402
import test_mempool_flood  # noqa: E402


def flood():
    with harness.Node("fig-flood", kairos_log_level="info") as node:
        # 25 s before block 1 (the test's STALL is shorter): room for a slower kairosd's CheckTx.
        good, bad, late = test_mempool_flood.setup_flood(node, stall="25s")
        node.start()
        node.rpc_eventually("status", timeout=30)
        honest_codes = {}
        for r in node.broadcast_many(good, workers=4):
            honest_codes[r["code"]] = honest_codes.get(r["code"], 0) + 1
        flood_codes = {}
        for r in node.broadcast_many(bad, workers=4):
            flood_codes[r["code"]] = flood_codes.get(r["code"], 0) + 1
        stats = node.mempool_stats()
        late_res = node.broadcast_sync(late)
        height_after_flood = node.height()
        node.wait_for_height(1, timeout=90)
        block1 = node.block_txs(1)
        good_set = set(good)
        print(json.dumps({
            "scenario": "flood", "kairosd": harness.KAIROSD,
            "app_mempool": node.app_mempool,
            "honest_answers_by_code": honest_codes, "flood_answers_by_code": flood_codes,
            "pool_size": stats["size"], "pool_parked": stats["parked"],
            "evicted": stats["evictions"].get("evicted", 0),
            # The pool holds only honest ready txs and parked flood txs.
            "honest_kept": stats["size"] - stats["parked"],
            "next_honest_code": late_res.get("code", 0),
            "next_honest_log": late_res.get("log", "")[:160],
            "height_when_flood_ended": height_after_flood,
            "block1_txs": len(block1),
            "block1_honest_txs": sum(1 for t in block1 if t in good_set),
        }), flush=True)


def replacement():
    with harness.Node("fig-replace", kairos_log_level="info") as node:
        node.add_local_key("alice")
        node.add_genesis_account("alice", f"1000000000{DENOM}")
        node.add_local_key("sink")
        node.configure_cometbft({"consensus.timeout_commit": "25s"})
        number = node.genesis_account_number("alice")

        def send(fee):
            return node.build_send("alice", "sink", f"1{DENOM}", account_number=number,
                                   fee=f"{fee}{DENOM}", gas_limit=200_000, sequence=0)

        first, bump = send(5000), send(5600)
        node.start()
        node.rpc_eventually("status", timeout=30)
        a = node.broadcast_sync(first)
        b = node.broadcast_sync(bump)
        print(json.dumps({
            "scenario": "replacement", "kairosd": harness.KAIROSD,
            "app_mempool": node.app_mempool,
            "first_code": a.get("code", 0), "replacement_code": b.get("code", 0),
            "replacement_log": b.get("log", "")[:200],
            "height": node.height(),
        }), flush=True)


if __name__ == "__main__":
    wanted = sys.argv[1:] or ["flood", "replacement"]
    for name in wanted:
        {"flood": flood, "replacement": replacement}[name]()
