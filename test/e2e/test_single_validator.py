#!/usr/bin/env python3
"""One CometBFT validator on kairosd: blocks, Info, signed MsgSend txs (from the kairosd CLI, and
through broadcast_tx_commit) that change balances and the app hash, a non-tx refused with code 2,
queries, the app hash in the next header, and a clean SIGTERM shutdown of both processes."""

import base64
import hashlib
import os

import harness
from harness import check, log


def test_single_validator():
    with harness.Node("single", accounts={"alice": harness.GENESIS_COINS,
                                           "bob": harness.GENESIS_COINS}) as node:
        node.start()
        node.wait_for_height(10)

        # Info through CometBFT's query connection.
        info = node.abci_info()
        check(info.get("data") == "kairos", f"abci_info data {info.get('data')!r} != 'kairos'")
        check(info.get("version") == "0.1.0", f"abci_info version {info.get('version')!r}")
        # CometBFT stores a block before the app commits it: Info may be one behind /status.
        check(int(info.get("last_block_height", "0")) >= 9, f"abci_info height: {info}")
        # The node adopted Info's app_version at the handshake: every header carries it.
        header = node.block(2)["header"]
        check(header["version"].get("app", "0") == info.get("app_version", "0"),
              f"header version.app {header['version']} != Info app_version {info}")

        # A signed MsgSend from the kairosd CLI through CheckTx, PrepareProposal, FinalizeBlock and
        # Commit; then one built by test/e2e/cosmos_tx.py through broadcast_tx_commit.
        res = node.send("alice", "bob", "1234stake")
        tx_height = int(res["height"])
        tx = node.tx_bytes(res["txhash"])
        check(res["txhash"] == hashlib.sha256(tx).hexdigest().upper(), f"tx hash: {res}")
        txs = node.block(tx_height)["data"].get("txs") or []
        check(base64.b64encode(tx).decode() in txs,
              f"block {tx_height} txs {txs} lack {base64.b64encode(tx).decode()}")
        check(node.block(tx_height)["header"]["app_hash"] != node.app_hash_after(tx_height),
              f"block {tx_height} with a transfer did not change the app hash")

        tx = node.build_send("bob", "alice", "34stake", sequence=0)
        res = node.broadcast_tx_commit(tx)
        log(f"broadcast_tx_commit: {res.get('hash')} at height {res.get('height')}, check_tx "
            f"code {res['check_tx'].get('code', 0)}, tx_result code "
            f"{res['tx_result'].get('code', 0)} gas {res['tx_result'].get('gas_used')}")
        check(res["check_tx"].get("code", 0) == 0, f"check_tx code: {res['check_tx']}")
        check(res["tx_result"].get("code", 0) == 0, f"tx_result code: {res['tx_result']}")
        check(res["hash"] == hashlib.sha256(tx).hexdigest().upper(), f"tx hash: {res['hash']}")
        tx_height = int(res["height"])
        check(tx_height > 0, f"broadcast_tx_commit height {res['height']}")
        found = node.rpc_eventually("tx", hash="0x" + res["hash"])
        check(int(found["height"]) == tx_height and base64.b64decode(found["tx"]) == tx,
              f"/tx by hash: {found}")
        fee = int(harness.FEES.removesuffix("stake"))
        start = int(harness.GENESIS_COINS.removesuffix("stake"))
        check(node.balance("alice") == start - 1234 - fee + 34, "alice's balance")
        check(node.balance("bob") == start + 1234 - 34 - fee, "bob's balance")
        check(node.account("bob")["account"]["sequence"] == "1", "bob's sequence")

        # A non-tx: CheckTx answers the decode error.
        res = node.broadcast_sync(b"not a tx " + os.urandom(8).hex().encode())
        check(res.get("code") == harness.CODE_TX_DECODE and res.get("codespace") == "sdk",
              f"a non-tx: expected code {harness.CODE_TX_DECODE}: {res}")

        # Queries.
        q = node.abci_query("/app/height")
        check(q.get("code", 0) == 0, f"/app/height: {q}")
        value = base64.b64decode(q.get("value", "")).decode()
        check(value.isdigit() and int(value) >= tx_height,
              f"/app/height value {value!r} is not a number >= {tx_height}")
        check(int(q.get("height", "0")) == int(value), f"/app/height answered at {q.get('height')}")
        q = node.abci_query("/app/version")
        check(base64.b64decode(q.get("value", "")) == b"0.1.0", f"/app/version: {q}")
        q = node.abci_query("/no/such/path")
        check(q.get("code") == 6, f"unknown path: code {q.get('code')} (expected 6): {q}")
        check("/no/such/path" in q.get("log", ""), f"unknown path log does not name it: {q}")
        check(q.get("codespace") == "sdk", f"unknown path codespace: {q}")

        node.check_app_hash()

        # Clean shutdown: CometBFT first, then kairosd on SIGTERM exits 0 and says so.
        rc, forced = node.cometbft.terminate()
        log(f"cometbft stopped on SIGTERM: rc {rc}{' (needed SIGKILL)' if forced else ''}")
        check(not forced, "cometbft did not stop on SIGTERM")
        node.stop_kairosd_cleanly()


if __name__ == "__main__":
    harness.main(test_single_validator)
