#!/usr/bin/env python3
"""The app-side priority mempool end to end, with CometBFT v0.38's flood mempool in front of it
(default) or CometBFT v0.40's `mempool.type = "app"` (KAIROS_E2E_APP_MEMPOOL=1: ctest runs this
script a second time as e2e.app_mempool.mempool).

Txs are signed here by cosmos_tx.py (explicit sequence, fee and gas) with a gas limit of GAS, so
a fee of p * GAS stake pays p per gas: the priority, compared exactly (Q64.64 fixed point, not an
integer division, so gas prices below 1 per gas, the usual Cosmos fee levels, order too).
Prices below are mostly such realistic ones ("0.025" per gas), and some large whole ones.
Scenarios:
- fees: 30 senders, gas prices 0.0225..0.045 in random order, blocks of 3 txs (genesis
  block.max_gas): a tx with a higher fee per gas is never in a later block than a lower one that
  it was in the pool with when that block was proposed, and a block lists its txs by fee per gas.
- nonces: one sender's 50 txs (sequences 0..49, whole prices 1..10) broadcast shuffled are all
  accepted (those behind a gap parked, with max_parked_per_sender = 64), and land in sequence
  order.
- full: a pool of max_txs = 5 refuses a fee per gas that is not above its lowest (code 20, the log
  names the fee that would do for the tx's gas limit) and takes a higher one by evicting the
  lowest, which never lands.
- sender cap: max_txs_per_sender = 3 refuses a sender's fourth tx (code 20), not another
  sender's; once the three land, the fourth is accepted.
- replacement: same sender and sequence at +10% (0.025 -> 0.0275 per gas) replaces (the old tx
  never lands), +5% is refused with code 13 naming the fee needed.
- duplicate: what a client sees when it sends a tx that is in the pool again.

The full, sender cap, replacement and duplicate scenarios need the pool to keep its txs while they run: their
chain has timeout_commit = STALL, so block 1 comes STALL after CometBFT starts, and every step runs
before it (CheckTx and queries see the genesis state). `before_first_block` checks that this held.
"""

import random
import re
from decimal import Decimal

import harness
from harness import (CODE_INSUFFICIENT_FEE, CODE_MEMPOOL_FULL, CODE_TX_IN_MEMPOOL, DENOM, check,
                     log, tx_hash)

GAS = 100_000  # every tx's gas limit: a fee of p * GAS pays p per gas
COINS = 1_000_000_000
# timeout_commit of the chains whose first block must wait for the test steps. The steps take
# about 1.5 s from CometBFT's start (measured with ASan on the 2-core machine at a load of 8);
# before_first_block fails the scenario, rather than pass it unproved, if they ever take longer.
STALL = "5s"

# Every reason the Stats query lists (proto/kairos/mempool/v1/query.proto), even at zero.
REASONS = {
    "rejections": {"duplicate", "full", "replacement_underpriced", "sender_cap", "too_large",
                   "nonce_too_low", "parked_cap"},
    "evictions": {"evicted", "replaced"},
    "expiries": {"expired_blocks", "expired_time", "expired_parked"},
    "removals": {"included", "recheck_failed", "stale_nonce"},
}


def fee_amount(price):
    """The fee paying `price` (an int, a Decimal, or a decimal string like "0.025") per gas for
    GAS."""
    amount = Decimal(price) * GAS
    check(amount == amount.to_integral_value(), f"{price} per gas is not a whole fee for {GAS} gas")
    return int(amount)


def fee(price):
    return f"{fee_amount(price)}{DENOM}"


def start_node(node, senders, block_txs=None, timeout_commit=None, kairos_mempool=None,
               cometbft=None):
    """Local keys for `senders` (funded with COINS) and "sink" (no account), genesis
    block.max_gas = block_txs * GAS, kairosd [mempool] keys, then starts both processes."""
    for s in senders:
        node.add_local_key(s)
        node.add_genesis_account(s, f"{COINS}{DENOM}")
    node.add_local_key("sink")
    if block_txs:
        node.set_consensus_params({"block.max_gas": block_txs * GAS})
    values = dict(cometbft or {})
    if timeout_commit:
        values["consensus.timeout_commit"] = timeout_commit
    if values:
        node.configure_cometbft(values)
    if kairos_mempool:
        node.configure_kairosd({f"mempool.{k}": str(v) for k, v in kairos_mempool.items()})
    node.start()


def account_numbers(node, senders):
    """{sender: account number} as the genesis gives them (no query answers before block 1),
    once CometBFT's RPC answers."""
    node.rpc_eventually("status", timeout=30)
    return {s: node.genesis_account_number(s) for s in senders}


def check_account(node, who, numbers, sequence):
    """The Account query agrees with the account number the txs were signed with, and has
    `sequence`."""
    acc = node.query_account(who)
    check(acc is not None, f"{who} has no account")
    check(acc["account_number"] == numbers[who],
          f"{who}: account number {acc['account_number']}, the genesis order gave "
          f"{numbers[who]}")
    check(acc["sequence"] == sequence, f"{who}: sequence {acc['sequence']}, expected {sequence}")


def send(node, numbers, frm, sequence, price, amount=1, memo=""):
    """A signed MsgSend of `amount` stake from `frm` to the sink with the given sequence, paying
    `price` per gas (fee = price * GAS, gas limit GAS)."""
    return node.build_send(frm, "sink", f"{amount}{DENOM}", account_number=numbers[frm],
                           fee=fee(price), gas_limit=GAS, sequence=sequence, memo=memo)


def expect_code(res, code, what, log_has=None):
    """res: a broadcast_tx_sync / check_tx answer (dict). Checks its code (and log)."""
    got = res.get("code", 0)
    check(got == code, f"{what}: expected code {code}, got {got}: {res}")
    if code != 0:
        check(res.get("codespace") == "sdk", f"{what}: codespace {res.get('codespace')!r}: {res}")
    if log_has is not None:
        check(log_has in res.get("log", ""), f"{what}: log lacks {log_has!r}: {res}")
    log(f"{what}: code {got}" + (f" ({res.get('log')})" if got else ""))
    return res


def before_first_block(node, what):
    """The steps that need a stalled pool ran before block 1 (timeout_commit = STALL)."""
    h = node.height()
    check(h == 0, f"{what}: block {h} was committed while the steps ran (they must finish "
                  f"within timeout_commit = {STALL} of the start): the results above are not "
                  f"conclusive")


def check_stats_reasons(stats):
    for kind, reasons in REASONS.items():
        missing = reasons - set(stats[kind])
        check(not missing, f"Stats {kind} lacks the reasons {sorted(missing)}: {stats}")


def wait_pool_empty(node, timeout=60):
    return harness.poll(lambda: (lambda s: s if s["size"] == 0 else None)(node.mempool_stats()),
                        timeout, "an empty app mempool", interval=0.3, alive=node.ensure_alive)


def test_higher_fees_first():
    n = 30
    senders = [f"s{i:02d}" for i in range(n)]
    with harness.Node("mp-fees") as node:
        # 3 txs a block; 1.5 s between blocks so a burst waits in the pool for several blocks.
        start_node(node, senders, block_txs=3, timeout_commit="1500ms")
        numbers = account_numbers(node, senders)
        rng = random.Random(70)
        # 0.0225 .. 0.045 per gas: every one of them was priority 0 as an integer division.
        priorities = [Decimal("0.02") + Decimal("0.0025") * (1 + i % 10) for i in range(n)]
        rng.shuffle(priorities)
        txs = [send(node, numbers, s, 0, p, amount=1 + i)
               for i, (s, p) in enumerate(zip(senders, priorities))]
        prio = {tx_hash(tx): p for tx, p in zip(txs, priorities)}

        node.wait_for_height(node.height() + 1)  # the burst starts right after a block
        results = node.broadcast_many(txs, workers=8, heights=True)
        for r in results:
            check(r["code"] == 0, f"tx of priority {prio[r['hash']]} refused: {r}")
        where = {r["hash"]: node.wait_tx(r["tx"]) for r in results}
        for h, w in where.items():
            check(w["code"] == 0, f"tx {h} failed in block {w['height']}: {w}")

        first = min(w["height"] for w in where.values())
        last = max(w["height"] for w in where.values())
        by_block = {}
        for h in range(first, last + 1):
            block = node.block_txs(h)
            check(len(block) <= 3, f"block {h} has {len(block)} txs: block.max_gas = 3 * {GAS} "
                                   f"allows 3")
            ours = [prio[tx_hash(t)] for t in block if tx_hash(t) in prio]
            by_block[h] = ours
            check(ours == sorted(ours, reverse=True),
                  f"block {h} lists its txs out of priority order: {ours}")
        log("priorities per block: " + ", ".join(f"{h}: {p}" for h, p in by_block.items()))

        # hi was in the pool when every block above hi.height_after + 1 was proposed, so if such
        # a block took lo while hi had a higher priority, hi must be in that block or earlier.
        compared, wrong = 0, []
        for hi in results:
            for lo in results:
                if prio[hi["hash"]] <= prio[lo["hash"]]:
                    continue
                lo_height = where[lo["hash"]]["height"]
                if hi["height_after"] + 2 > lo_height:
                    continue  # hi may have arrived after that block was proposed
                compared += 1
                if where[hi["hash"]]["height"] > lo_height:
                    wrong.append(f"priority {prio[hi['hash']]} in block "
                                 f"{where[hi['hash']]['height']} after priority "
                                 f"{prio[lo['hash']]} in block {lo_height} (the first was in "
                                 f"the pool from block {hi['height_after'] + 2})")
        check(not wrong, f"{len(wrong)} of {compared} pairs broke priority order:\n" +
              "\n".join(wrong[:20]))
        # The assertion above only means something if txs waited: a burst of 30 arriving within
        # one block interval gives hundreds of pairs.
        check(compared >= 50, f"only {compared} (higher, lower) pairs were in the pool together "
                              f"at a proposal: the pool never held a backlog")
        log(f"{compared} (higher fee, lower fee) pairs in the pool together at a proposal: none "
            f"left the higher one for a later block")

        for s, p, i in zip(senders, priorities, range(n)):
            want = COINS - (1 + i) - fee_amount(p)
            got = node.query_balance(s)
            check(got == want, f"{s}: balance {got}, expected {want}")
            check_account(node, s, numbers, 1)
        stats = wait_pool_empty(node)
        check(stats["removals"].get("included", 0) >= n,
              f"Stats counts {stats['removals'].get('included')} included txs, expected >= {n}: "
              f"{stats}")
        log(f"Stats after the burst: {stats}")


def test_sender_nonce_order():
    n = 50
    with harness.Node("mp-nonces") as node:
        # 50 txs take at least 5 blocks. Shuffled, up to 49 wait parked at once: above the
        # default mempool.max_parked_per_sender (16), which refuses the excess with code 20.
        start_node(node, ["alice"], block_txs=10, kairos_mempool={"max_parked_per_sender": 64})
        numbers = account_numbers(node, ["alice"])
        priorities = [1 + (seq * 7) % 10 for seq in range(n)]  # fees do not follow sequences
        txs = [send(node, numbers, "alice", seq, priorities[seq], amount=100 + seq)
               for seq in range(n)]
        order = list(range(n))
        random.Random(50).shuffle(order)
        log(f"broadcast order of the sequences: {order}")
        results = node.broadcast_many([txs[seq] for seq in order], workers=1)
        for seq, r in zip(order, results):
            check(r["code"] == 0, f"sequence {seq} refused (a tx behind a nonce gap must be "
                                  f"accepted and parked): {r}")

        where = [node.wait_tx(tx) for tx in txs]
        for seq, w in enumerate(where):
            check(w["code"] == 0, f"sequence {seq} failed in block {w['height']}: {w}")
        positions = [(w["height"], w["index"]) for w in where]
        check(positions == sorted(positions),
              "the txs did not land in sequence order: (height, index) by sequence: " +
              ", ".join(f"{seq}: {p}" for seq, p in enumerate(positions)))
        heights = sorted({h for h, _ in positions})
        check(len(heights) >= 5, f"50 txs in blocks of at most 10 landed in {heights}")
        for h in heights:
            block = node.block_txs(h)
            check(len(block) <= 10, f"block {h} has {len(block)} txs, block.max_gas allows 10")
        log(f"50 txs landed in sequence order in blocks {heights}")

        check_account(node, "alice", numbers, n)
        want = COINS - sum(100 + seq for seq in range(n)) - sum(fee_amount(p) for p in priorities)
        check(node.query_balance("alice") == want,
              f"alice's balance {node.query_balance('alice')}, expected {want}")
        check(node.query_balance("sink") == sum(100 + seq for seq in range(n)), "sink balance")
        stats = wait_pool_empty(node)
        check(stats["parked"] == 0, f"Stats after all landed: {stats}")


def test_full_pool_evicts_lowest():
    # f<k> sends one tx paying 0.02 + k * 0.0025 per gas (f2: 0.025); "high" pays 0.05.
    fill = ["f2", "f3", "f4", "f5", "f6"]
    price = {s: Decimal("0.02") + Decimal("0.0025") * int(s[1:]) for s in fill}
    with harness.Node("mp-full") as node:
        start_node(node, fill + ["low", "high"], timeout_commit=STALL,
                   kairos_mempool={"max_txs": 5})
        numbers = account_numbers(node, fill + ["low", "high"])
        fill_txs = {s: send(node, numbers, s, 0, price[s]) for s in fill}
        at_lowest = send(node, numbers, "low", 0, "0.025")
        below = send(node, numbers, "low", 0, "0.02499", memo="lower still")
        high = send(node, numbers, "high", 0, "0.05")

        for s, tx in fill_txs.items():
            expect_code(node.broadcast_sync(tx), 0, f"fill tx of {price[s]} per gas")
        stats = node.mempool_stats()
        check(stats["size"] == 5 and stats["senders"] == 5, f"Stats of a full pool: {stats}")
        check_stats_reasons(stats)

        for tx, p in ((at_lowest, "0.025"), (below, "0.02499")):
            res = expect_code(node.broadcast_sync(tx), CODE_MEMPOOL_FULL,
                              f"{p} per gas into a full pool whose lowest is 0.025",
                              log_has="a tx needs a fee per gas above 0.025 to evict")
            m = re.search(r"that is a fee of at least (\d+)" + DENOM, res.get("log", ""))
            want = fee_amount("0.025") + 1
            check(m and int(m.group(1)) == want,
                  f"{p} per gas: the log must name the fee needed ({want}{DENOM}): {res}")
        expect_code(node.broadcast_sync(high), 0, "0.05 per gas into the full pool")
        stats = node.mempool_stats()
        before_first_block(node, "full pool")
        check(stats["size"] == 5, f"Stats after an eviction: size {stats['size']}: {stats}")
        check(stats["rejections"].get("full") == 2,
              f"Stats rejections 'full' {stats['rejections'].get('full')}, expected 2: {stats}")
        check(stats["evictions"].get("evicted") == 1,
              f"Stats evictions 'evicted' {stats['evictions'].get('evicted')}, expected 1: "
              f"{stats}")
        log(f"Stats with the pool full: {stats}")

        # Block 1 takes what the pool holds: the four other fill txs and the high one.
        for s in fill[1:]:
            check(node.wait_tx(fill_txs[s])["code"] == 0, f"fill tx {s} failed")
        check(node.wait_tx(high)["code"] == 0, "the 0.05 per gas tx failed")
        wait_pool_empty(node)
        for tx, what in ((fill_txs["f2"], "the evicted 0.025 tx"),
                         (at_lowest, "the refused 0.025 tx"), (below, "the refused 0.02499 tx")):
            check(node.find_tx(tx) is None, f"{what} landed: {node.find_tx(tx)}")
        check_account(node, "f2", numbers, 0)  # the evicted sender's sequence did not move
        check(node.query_balance("f2") == COINS, "the evicted sender paid a fee")
        log("the evicted and the refused txs never landed; the others did")


def test_sender_cap():
    with harness.Node("mp-cap") as node:
        start_node(node, ["carl", "other"], timeout_commit=STALL,
                   kairos_mempool={"max_txs_per_sender": 3})
        numbers = account_numbers(node, ["carl", "other"])
        txs = [send(node, numbers, "carl", seq, 5) for seq in range(4)]
        other = send(node, numbers, "other", 0, 1)
        for seq in range(3):
            expect_code(node.broadcast_sync(txs[seq]), 0, f"carl's sequence {seq}")
        expect_code(node.broadcast_sync(txs[3]), CODE_MEMPOOL_FULL,
                    "carl's fourth tx over max_txs_per_sender = 3")
        expect_code(node.broadcast_sync(other), 0, "another sender's tx (the cap is per sender)")
        stats = node.mempool_stats()
        before_first_block(node, "sender cap")
        check(stats["size"] == 4 and stats["senders"] == 2 and
              stats["rejections"].get("sender_cap") == 1,
              f"Stats: expected size 4, 2 senders, 1 sender_cap rejection: {stats}")

        for seq in range(3):
            check(node.wait_tx(txs[seq])["code"] == 0, f"carl's sequence {seq} failed")
        check(node.wait_tx(other)["code"] == 0, "the other sender's tx failed")
        # Room again: the refused tx, as the same bytes, is accepted and lands. (CometBFT v0.40
        # answers "tx already seen" until check_tx_retry_delay, 5 s, has passed since the refusal,
        # which may be after block 1: the poll waits for it.)
        def resend():
            try:
                return node.broadcast_sync(txs[3])
            except harness.RpcError as e:
                check(node.cache_error in str(e), f"resending carl's fourth tx: {e}")
                return None
        res = harness.poll(resend, 15, "CometBFT to forget the refused tx", interval=0.5)
        expect_code(res, 0, "carl's fourth tx once the first three landed")
        check(node.wait_tx(txs[3])["code"] == 0, "carl's fourth tx failed")
        check_account(node, "carl", numbers, 4)


def test_replacement():
    with harness.Node("mp-replace") as node:
        start_node(node, ["rita"], timeout_commit=STALL)
        numbers = account_numbers(node, ["rita"])
        old = send(node, numbers, "rita", 0, "0.025", amount=1)
        under = send(node, numbers, "rita", 0, "0.02625", amount=2)  # +5%
        new = send(node, numbers, "rita", 0, "0.0275", amount=3)  # +10%

        expect_code(node.broadcast_sync(old), 0, "sequence 0 at 0.025 per gas")
        expect_code(node.broadcast_sync(under), CODE_INSUFFICIENT_FEE,
                    "sequence 0 again at 0.02625 per gas (+5%)",
                    log_has="replacement of sequence 0 needs a fee per gas of at least 0.0275 "
                            "(+10%), got 0.02625; with its gas limit of 100000 that is a fee of "
                            "at least 2750" + DENOM)
        expect_code(node.broadcast_sync(new), 0, "sequence 0 again at 0.0275 per gas (+10%)")
        stats = node.mempool_stats()
        before_first_block(node, "replacement")
        check(stats["size"] == 1, f"Stats after a replacement: {stats}")
        check(stats["evictions"].get("replaced") == 1 and
              stats["rejections"].get("replacement_underpriced") == 1,
              f"Stats: expected 1 replaced and 1 replacement_underpriced: {stats}")

        w = node.wait_tx(new)
        check(w["code"] == 0, f"the replacement failed in block {w['height']}: {w}")
        wait_pool_empty(node)
        for tx, what in ((old, "the replaced tx"), (under, "the underpriced replacement")):
            check(node.find_tx(tx) is None, f"{what} landed too")
        check_account(node, "rita", numbers, 1)
        check(node.query_balance("rita") == COINS - 3 - fee_amount("0.0275"),
              f"rita paid {COINS - node.query_balance('rita')}, expected 3 + "
              f"{fee_amount('0.0275')}")
        log(f"the replacement landed in block {w['height']}; the old tx never did")


def test_duplicate():
    with harness.Node("mp-dup") as node:
        start_node(node, ["dora"], timeout_commit=STALL, cometbft={"rpc.unsafe": "true"})
        numbers = account_numbers(node, ["dora"])
        tx = send(node, numbers, "dora", 0, 5)
        expect_code(node.broadcast_sync(tx), 0, "a new tx")

        # broadcast_tx_sync of the same bytes: CometBFT's own cache answers, in both flavours,
        # with a JSON-RPC error; the app never sees it.
        try:
            res = node.broadcast_sync(tx)
            raise harness.E2EError(f"a duplicate broadcast passed CometBFT's cache: {res}")
        except harness.RpcError as e:
            check(node.cache_error in str(e), f"duplicate broadcast: {e}")
            log(f"duplicate broadcast_tx_sync: CometBFT answered {e.error}")

        # /check_tx goes to the app's CheckTx directly: code 19.
        expect_code(node.check_tx(tx), CODE_TX_IN_MEMPOOL, "the same tx through /check_tx",
                    log_has="tx already in mempool")
        duplicates = 1
        node.rpc("unsafe_flush_mempool")
        if node.app_mempool:
            # v0.40's app mempool has nothing to flush; its seen cache still answers.
            try:
                res = node.broadcast_sync(tx)
                raise harness.E2EError(f"after unsafe_flush_mempool the duplicate passed "
                                       f"CometBFT v0.40's seen cache: {res}")
            except harness.RpcError as e:
                check(node.cache_error in str(e), f"duplicate after the flush: {e}")
                log("after unsafe_flush_mempool CometBFT v0.40 still answers from its seen cache")
        else:
            # The flush empties v0.38's mempool and cache, not the app's pool: the app answers.
            expect_code(node.broadcast_sync(tx), CODE_TX_IN_MEMPOOL,
                        "the same tx after unsafe_flush_mempool", log_has="tx already in mempool")
            duplicates += 1
        stats = node.mempool_stats()
        before_first_block(node, "duplicate")
        check(stats["size"] == 1, f"Stats: expected size 1: {stats}")

        w = node.wait_tx(tx)
        check(w["code"] == 0, f"the tx failed: {w}")
        block = node.block_txs(w["height"])
        check(block.count(tx) == 1, f"block {w['height']} has the tx {block.count(tx)} times")
        stats = wait_pool_empty(node)
        check_account(node, "dora", numbers, 1)
        check(node.query_balance("dora") == COINS - 1 - 5 * GAS, "dora was charged once")
        log(f"the tx landed once, in block {w['height']}")
        check(stats["rejections"].get("duplicate") == duplicates,
              f"Stats: {duplicates} code 19 answers, but rejections 'duplicate' is "
              f"{stats['rejections'].get('duplicate')}: {stats}")


if __name__ == "__main__":
    harness.main(test_higher_fees_first, test_sender_nonce_order, test_full_pool_evicts_lowest,
                 test_sender_cap, test_replacement, test_duplicate)
