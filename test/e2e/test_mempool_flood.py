#!/usr/bin/env python3
"""Parked txs cannot flood the app mempool (issue 20, item 2), end to end with CometBFT v0.38's
flood mempool in front of kairosd (default) or v0.40's `mempool.type = "app"`
(KAIROS_E2E_APP_MEMPOOL=1: ctest runs it again as e2e.app_mempool.mempool_flood).

The issue's numbers: a pool of 320 (`[mempool] max_txs = 320`) holding 300 honest ready txs
(30 senders x 10 sequences, 0.025 per gas); 5 accounts send 64 txs each behind a sequence gap
(sequence 0 never comes), each offering the whole balance as its fee. Before the fix each was
checked against the balance alone, each evicted a ready tx, all 300 went, the next honest tx got
code 20 and the next block held nothing, for free. Now a tx is admitted only if its payer's
committed balance covers it after its pooled txs (ready and parked): one parked tx per attacker,
code 5 for the other 63; a parked tx never evicts a ready one. Then:
- the pool holds the 300 honest txs and 5 parked ones; nothing was evicted;
- a parked tx's answer is code 0 with the log "parked: waiting for sequence 0 ..."; the
  SenderTxs query and `kairosd query mempool` list it as parked, and `kairosd tx send` with a
  sequence gap reports "parked" and the sequence it waits for;
- the next honest tx is accepted, and every honest tx lands (block.max_gas takes them all).
The flood runs before block 1 (timeout_commit = STALL), so the pool is full of ready txs when it
comes; `before_first_block` checks that this held.
"""

import base64

import harness
from harness import CODE_INSUFFICIENT_FUNDS, DENOM, check, log, tx_hash
import cosmos_tx

GAS = 100_000
HONEST, SEQUENCES, ATTACKERS, PARKED_EACH = 30, 10, 5, 64
ATTACKER_COINS = 1_000_000
# The flood's steps take about 2 s from CometBFT's start (ASan, the 2-core machine at a load of
# 8); the check before block 1 fails the test, rather than pass it unproved, if they ever take
# longer than STALL.
STALL = "8s"


def setup_flood(node, stall=STALL):
    """Configures the node (not started) for the flood: genesis accounts, a pool of 320,
    block.max_gas for every honest tx, timeout_commit = stall. Returns the signed txs (good: the
    300 honest ones, flood: the 5 x 64 parked ones, late: the next honest tx). Also used by
    scripts/mempool_figures.py, which measures the same flood on any kairosd."""
    honest = [f"h{i:02d}" for i in range(HONEST)]
    attackers = [f"a{i}" for i in range(ATTACKERS)]
    for who in honest + ["late"]:
        node.add_local_key(who)
        node.add_genesis_account(who, f"1000000000{DENOM}")
    for who in attackers:
        node.add_local_key(who)
        node.add_genesis_account(who, f"{ATTACKER_COINS}{DENOM}")
    node.add_local_key("sink")
    # Room for every honest tx in block 1.
    node.set_consensus_params({"block.max_gas": (HONEST * SEQUENCES + 10) * GAS})
    node.configure_cometbft({"consensus.timeout_commit": stall})
    node.configure_kairosd({"mempool.max_txs": "320"})
    numbers = {w: node.genesis_account_number(w) for w in honest + attackers + ["late"]}

    def send(frm, sequence, fee):
        return node.build_send(frm, "sink", f"1{DENOM}", account_number=numbers[frm],
                               fee=f"{fee}{DENOM}", gas_limit=GAS, sequence=sequence)

    good = [send(h, seq, 2500) for seq in range(SEQUENCES) for h in honest]
    flood = [send(a, seq, ATTACKER_COINS - 1) for a in attackers
             for seq in range(1, PARKED_EACH + 1)]
    return good, flood, send("late", 0, 2500)


def test_parked_flood():
    attackers = [f"a{i}" for i in range(ATTACKERS)]
    with harness.Node("mp-flood") as node:
        node.add_key("kim")
        node.add_genesis_account("kim", f"1000000000{DENOM}")
        good, flood, late = setup_flood(node)
        # Signed before the start: the steps must fit in timeout_commit before block 1.
        node.start()
        node.rpc_eventually("status", timeout=30)

        for r in node.broadcast_many(good, workers=4):
            check(r["code"] == 0, f"honest tx refused: {r}")
        stats = node.mempool_stats()
        check(stats["size"] == 300 and stats["parked"] == 0, f"Stats after the honest txs: {stats}")

        results = node.broadcast_many(flood, workers=4)
        parked = [r for r in results if r["code"] == 0]
        refused = [r for r in results if r["code"] == CODE_INSUFFICIENT_FUNDS]
        check(len(parked) == ATTACKERS and len(refused) == len(flood) - ATTACKERS,
              f"flood: {len(parked)} accepted, {len(refused)} refused with code 5, expected "
              f"{ATTACKERS} and {len(flood) - ATTACKERS}: "
              f"{[r for r in results if r['code'] not in (0, CODE_INSUFFICIENT_FUNDS)][:3]}")
        for r in parked:
            check(r["log"].startswith("parked: waiting for sequence 0 of "),
                  f"a parked tx's answer must say so: {r}")
        check("reserve" in refused[0]["log"], f"a refused flood tx's log: {refused[0]}")
        log(f"flood: {len(parked)} parked, {len(refused)} refused, e.g. {refused[0]['log']}")

        # SenderTxs through abci_query, and `kairosd query mempool`.
        q = node.abci_query("/kairos.mempool.v1.Query/SenderTxs",
                            data=cosmos_tx.query_account_request(node.address(attackers[0])))
        check(q.get("code", 0) == 0, f"SenderTxs: {q}")
        fields = cosmos_tx.decode_fields(base64.b64decode(q.get("value") or ""))
        txs = [cosmos_tx.decode_fields(t) for t in fields.get(3, [])]
        check(fields.get(2, [0])[0] == 0 and len(txs) == 1 and txs[0].get(5) == [2],
              f"SenderTxs of an attacker: next_sequence 0 and one PARKED tx: {fields}")
        out = node.cli("query", "mempool", node.address(attackers[0]), "--node", node.node_url,
                       "--output", "json").json()
        check(out["next_sequence"] == "0" and [t["state"] for t in out["txs"]] == ["parked"] and
              out["txs"][0]["sequence"] != "0",
              f"kairosd query mempool of an attacker: {out}")

        stats = node.mempool_stats()
        check(stats["size"] == 300 + ATTACKERS and stats["parked"] == ATTACKERS,
              f"Stats after the flood: {stats}")
        check(stats["evictions"].get("evicted", 0) == 0, f"the flood evicted txs: {stats}")
        expect_late = node.broadcast_sync(late)
        check(expect_late.get("code", 0) == 0, f"the next honest tx: {expect_late}")
        harness_before = node.height()
        check(harness_before == 0, f"block {harness_before} came while the flood ran (it must "
                                   f"finish within timeout_commit = {STALL})")
        log(f"Stats with the pool under the flood: {stats}")

        for tx in good + [late]:
            w = node.wait_tx(tx, timeout=90)
            check(w["code"] == 0, f"honest tx {tx_hash(tx)} failed in block {w['height']}: {w}")
        for r in parked:
            check(node.find_tx(r["tx"]) is None, f"a parked flood tx landed: {r}")
        log("every honest tx landed; no flood tx did")

        # `kairosd tx send` with a gap (the CLI needs block 1 for the account) reports it parked.
        res = node.send("kim", "sink", f"1{DENOM}", fees=f"2500{DENOM}", sequence=4, wait=False)
        check(res.get("parked") is True and res.get("waiting_for_sequence") == "0",
              f"tx send with a sequence gap: {res}")


if __name__ == "__main__":
    harness.main(test_parked_flood)
