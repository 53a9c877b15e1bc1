#!/usr/bin/env python3
"""Real Cosmos txs end to end on one validator: the kairosd CLI signs ordered and unordered
MsgSend transfers and the balances change by the amount plus the fee (which lands in the fee
collector); ordered txs back to back with explicit sequences; an unordered tx replayed is
rejected by our CheckTx with code 18 "has already used timeout", both (a) the same bytes again
(after CometBFT's cache is flushed with unsafe_flush_mempool, as the cache answers first; with
CometBFT v0.40's app mempool through /check_tx, as its seen cache cannot be flushed) and
(b) another tx with the same signer and timeout (signed by test/e2e/cosmos_tx.py, as the CLI's
timeout is always "now + --timeout"); a sequence below the account's gets code 32 "expected X,
got Y", one above it is accepted and parked in the app mempool and does not land over the gap."""

import base64
import hashlib
import os

import cosmos_tx
import harness
from harness import CODE_INVALID_REQUEST, CODE_WRONG_SEQUENCE, FEES, check, log

FEE = int(FEES.removesuffix("stake"))
FEE_COLLECTOR = harness.FEE_COLLECTOR


class Ledger:
    """The balances the test expects, checked against `kairosd query balance`."""

    def __init__(self, node, names):
        self.node = node
        self.expected = {n: node.balance(n) for n in names}
        self.fees = node.balance(FEE_COLLECTOR)

    def transfer(self, frm, to, amount, fee=FEE):
        self.expected[frm] -= amount + fee
        self.expected[to] += amount
        self.fees += fee

    def verify(self, what):
        got = {n: self.node.balance(n) for n in self.expected}
        check(got == self.expected, f"{what}: balances {got}, expected {self.expected}")
        fees = self.node.balance(FEE_COLLECTOR)
        check(fees == self.fees, f"{what}: fee collector has {fees}, expected {self.fees}")
        log(f"{what}: balances as expected {got}, fees collected {fees}")


def wait_included(node, tx):
    """Polls /tx until tx (bytes) is in a block; returns its DeliverTx result."""
    found = node.rpc_eventually("tx", timeout=30, hash="0x" + hashlib.sha256(tx).hexdigest())
    return found["tx_result"], int(found["height"])


def check_rejected_as_used_nonce(res, signer, timeout, what):
    check(res.get("code") == CODE_INVALID_REQUEST and res.get("codespace") == "sdk",
          f"{what}: expected code {CODE_INVALID_REQUEST} (sdk), got {res}")
    expected = f"sender {signer} has already used timeout {timeout}"
    check(expected in res.get("log", ""), f"{what}: log lacks {expected!r}: {res}")
    log(f"{what}: rejected by CheckTx, code {res['code']}: {res['log']}")


def nonce_used(node, signer, timeout):
    q = node.abci_query("/kairos.auth.v1.Query/UnorderedNonce",
                        data=cosmos_tx.query_unordered_nonce_request(signer, timeout))
    check(q.get("code", 0) == 0, f"UnorderedNonce query: {q}")
    fields = cosmos_tx.decode_fields(base64.b64decode(q.get("value") or ""))
    return bool(fields.get(1, [0])[0])


def test_transfers():
    with harness.Node("transfers", accounts={"alice": harness.GENESIS_COINS,
                                             "bob": harness.GENESIS_COINS,
                                             "carol": None}) as node:
        harness.set_toml_keys(os.path.join(node.cmt_home, "config", "config.toml"),
                              {"rpc.unsafe": "true"})  # for unsafe_flush_mempool
        # The parked tx below must outlive bob's four txs however slowly they land (CI once
        # took 18 blocks for them, and the default TTL of 20 blocks dropped it): e2e.mempool
        # tests the TTL itself.
        node.configure_kairosd({"mempool.parked_ttl_blocks": "1000"})
        node.start()
        node.wait_for_height(2)
        alice, carol = node.address("alice"), node.address("carol")

        # carol has a key but no account yet: the query says NotFound.
        done = node.account("carol", expect_rc=1)
        check("NotFound" in done.err, f"query account of a new address: {done.err}")
        ledger = Ledger(node, ["alice", "bob", "carol"])
        check(ledger.expected["alice"] == 1_000_000_000 and ledger.expected["carol"] == 0,
              f"genesis balances: {ledger.expected}")

        # --- an ordered transfer: the sequence goes 0 -> 1, the key is stored on first use,
        # and the block's app hash changes.
        res = node.send("alice", "carol", "1000stake")
        ledger.transfer("alice", "carol", 1000)
        ledger.verify("after an ordered transfer")
        acc = node.account("alice")["account"]
        check(acc["sequence"] == "1" and acc["address"] == alice, f"alice's account: {acc}")
        check(acc["pub_key"] and base64.b64decode(acc["pub_key"]["key"]) ==
              node.keys["alice"]["pub_key"], f"alice's stored public key: {acc}")
        h = int(res["height"])
        before, after = node.block(h)["header"]["app_hash"], node.app_hash_after(h)
        check(before != after, f"block {h} with a transfer left the app hash at {before}")
        node.rpc_eventually("tx", hash="0x" + res["txhash"])

        # --- an unordered transfer: sequence unchanged, its nonce recorded.
        res = node.send("alice", "carol", "500stake", unordered=True, timeout="300s")
        ledger.transfer("alice", "carol", 500)
        ledger.verify("after an unordered transfer")
        acc = node.account("alice")["account"]
        check(acc["sequence"] == "1", f"an unordered tx changed alice's sequence: {acc}")
        raw = node.tx_bytes(res["txhash"])
        tx = cosmos_tx.decode_tx(raw)
        timeout = tx["timeout_unix_nanos"]
        check(tx["unordered"] and timeout and tx["sequence"] == 0 and tx["from"] == alice,
              f"the CLI's unordered tx: {tx}")
        check(nonce_used(node, alice, timeout), f"nonce ({alice}, {timeout}) not recorded")
        check(not nonce_used(node, alice, timeout + 1), "an unused nonce reads as used")

        # --- (a) the same bytes again. CometBFT's cache may answer first; flush it so the tx
        # reaches our CheckTx. CometBFT v0.40's app mempool (e2e.app_mempool.transfers) keeps
        # every accepted tx in a seen cache that unsafe_flush_mempool does not clear: there the
        # /check_tx RPC takes the bytes to our CheckTx.
        try:
            replay = node.broadcast_sync(raw)
            log("the replayed bytes went past CometBFT's cache")
        except harness.RpcError as e:
            check(node.cache_error in str(e), f"replay: unexpected RPC error {e}")
            if node.app_mempool:
                log(f"CometBFT's seen cache answered the replay ({e.error.get('data')}); "
                    f"sending it with /check_tx")
                replay = node.check_tx(raw)
            else:
                log(f"CometBFT's cache answered the replay ({e.error.get('data')}); flushing it")
                node.rpc("unsafe_flush_mempool")
                replay = node.broadcast_sync(raw)
        check_rejected_as_used_nonce(replay, alice, timeout, "(a) the unordered tx replayed")

        # --- (b) a different tx (amount 501) with the same signer and timeout.
        other = node.build_send("alice", "carol", "501stake", unordered=True,
                                timeout_unix_nanos=timeout)
        check(other != raw, "the (b) tx has the same bytes as the original")
        check_rejected_as_used_nonce(node.broadcast_sync(other), alice, timeout,
                                     "(b) another tx with the same nonce")

        # Control: the same builder with the next nanosecond passes; and a second tx on that new
        # nonce is refused whether or not the first is in a block yet.
        fresh = node.build_send("alice", "carol", "501stake", unordered=True,
                                timeout_unix_nanos=timeout + 1)
        res = node.broadcast_sync(fresh)
        check(res.get("code", 0) == 0, f"the control tx (timeout + 1 ns) was rejected: {res}")
        twin = node.build_send("alice", "carol", "502stake", unordered=True,
                               timeout_unix_nanos=timeout + 1)
        check_rejected_as_used_nonce(node.broadcast_sync(twin), alice, timeout + 1,
                                     "a second tx on a nonce taken in the mempool or a block")
        result, _ = wait_included(node, fresh)
        check(result.get("code", 0) == 0, f"the control tx failed in its block: {result}")
        ledger.transfer("alice", "carol", 501)
        ledger.verify("after the replays")

        # --- a sequence too low: code 32, "expected X, got Y". Too high: the app mempool takes
        # it (code 0) and parks it behind the gap; it cannot land while the gap stays (checked
        # after bob's txs below, several blocks later).
        seq = int(node.account("alice")["account"]["sequence"])
        res = node.send("alice", "carol", "7stake", sequence=seq - 1, wait=False,
                        expect_code=CODE_WRONG_SEQUENCE)
        want = f"account sequence mismatch, expected {seq}, got {seq - 1}"
        check(want in res.get("log", ""), f"sequence {seq - 1}: log lacks {want!r}: {res}")
        parked = node.send("alice", "carol", "7stake", sequence=seq + 5, wait=False)["txhash"]
        stats = node.mempool_stats()
        check(stats["parked"] == 1, f"sequence {seq + 5} (account at {seq}) is not parked: {stats}")

        # --- ordered txs back to back (explicit sequences, none waited for): all included, in
        # order, however the blocks cut them.
        bob_seq = int(node.account("bob")["account"]["sequence"])
        hashes = []
        for i in range(4):
            res = node.send("bob", "carol", f"{10 + i}stake", sequence=bob_seq + i, wait=False)
            hashes.append(res["txhash"])
            ledger.transfer("bob", "carol", 10 + i)
        heights = []
        for tx_hash in hashes:
            found = node.rpc_eventually("tx", timeout=30, hash="0x" + tx_hash)
            check(found["tx_result"].get("code", 0) == 0, f"bob's tx {tx_hash}: {found}")
            heights.append(int(found["height"]))
        check(heights == sorted(heights), f"bob's txs included out of order: {heights}")
        check(node.account("bob")["account"]["sequence"] == str(bob_seq + 4),
              "bob's sequence after 4 txs")
        ledger.verify(f"after 4 txs from bob in blocks {heights}")
        check(node.find_tx(parked) is None, f"alice's tx at sequence {seq + 5} landed over a gap")
        check(node.account("alice")["account"]["sequence"] == str(seq),
              "alice's sequence moved with only a parked tx")
        check(node.mempool_stats()["parked"] == 1, "alice's parked tx left the mempool")

        node.check_app_hash()


if __name__ == "__main__":
    harness.main(test_transfers)
