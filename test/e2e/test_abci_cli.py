#!/usr/bin/env python3
"""kairosd alone, driven by CometBFT's own abci-cli (v0.38.25) over the socket protocol: echo,
info, check_tx, finalize_block + commit, queries (known, unknown, wrong height), a clean SIGTERM
stop, a restart that reloads the committed block, and garbage bytes on a raw connection.

abci-cli has no InitChain command, so the chain has no accounts: a real signed MsgSend (built by
test/e2e/cosmos_tx.py) decodes and is refused by the ante with code 9 (its fee payer does not
exist), and a non-tx gets the decode error, code 2."""

import re
import socket

import cosmos_tx
import harness
from harness import check, log

# A signed MsgSend from a key no genesis knows (private key 0x...07, chain id "").
SIGNER_KEY = bytes(31) + b"\x07"
SIGNER = cosmos_tx.address_of_pubkey(cosmos_tx.pubkey_of(SIGNER_KEY))
SIGNED_TX = cosmos_tx.signed_send(SIGNER_KEY, "", 0, SIGNER, SIGNER, "5stake")
CODE_UNKNOWN_ADDRESS = 9


def abci_cli(node, *args):
    """Runs abci-cli against the node; returns its '-> key: value' lines as a list of pairs.

    abci-cli takes byte arguments as "quoted" strings or 0x hex, and exits 0 whatever the code."""
    out = harness.run([harness.ABCI_CLI, "--address", node.abci_address, "--log_level", "error",
                       *args], timeout=30)
    pairs = re.findall(r"^-> ([\w.]+): ?(.*)$", out, flags=re.M)
    log(f"abci-cli {' '.join(args)} -> {pairs}")
    check(pairs, f"abci-cli {' '.join(args)} printed no '-> ' lines:\n{out}")
    return pairs


def field(pairs, key):
    values = [v for k, v in pairs if k == key]
    check(len(values) == 1, f"expected one '-> {key}:' line in {pairs}")
    return values[0]


def expect_ok(pairs):
    codes = [v for k, v in pairs if k == "code"]
    check(codes and all(c == "OK" for c in codes), f"expected '-> code: OK' in {pairs}")
    return pairs


def codes_and_logs(pairs):
    return [v for k, v in pairs if k == "code"], [v for k, v in pairs if k == "log"]


def finalize_block(node):
    """FinalizeBlock with the non-tx "abc" and SIGNED_TX; returns the app hash (0x hex)."""
    pairs = abci_cli(node, "finalize_block", '"abc"', "0x" + SIGNED_TX.hex())
    codes, logs = codes_and_logs(pairs)
    check(codes == [str(harness.CODE_TX_DECODE), str(CODE_UNKNOWN_ADDRESS), "OK"] and
          len(logs) == 2, f"expected tx codes 2 and 9, then the block's OK: {pairs}")
    check("tx parse error" in logs[0], f"the non-tx's log: {logs[0]}")
    check(f"{SIGNER} does not exist" in logs[1], f"the signed tx's log: {logs[1]}")
    app_hash = field(pairs, "data.hex")
    check(re.fullmatch(r"0x[0-9A-F]{64}", app_hash), f"app hash {app_hash!r}: not 32 bytes")
    return app_hash


def test_abci_cli():
    with harness.Node("abci-cli", with_cometbft=False) as node:
        node.start_kairosd()
        pairs = expect_ok(abci_cli(node, "echo", "hello"))
        check(field(pairs, "data") == "hello", f"echo: {pairs}")
        pairs = expect_ok(abci_cli(node, "info"))
        check(field(pairs, "data") == "kairos", f"info: {pairs}")
        codes, logs = codes_and_logs(abci_cli(node, "check_tx", "0x00"))
        check(codes == [str(harness.CODE_TX_DECODE)] and "tx parse error" in logs[0],
              f"check_tx of a non-tx: codes {codes}, logs {logs}")
        codes, logs = codes_and_logs(abci_cli(node, "check_tx", "0x" + SIGNED_TX.hex()))
        check(codes == [str(CODE_UNKNOWN_ADDRESS)] and f"{SIGNER} does not exist" in logs[0],
              f"check_tx of a tx from an unknown account: codes {codes}, logs {logs}")
        pairs = expect_ok(abci_cli(node, "query", "--path", "/app/height", '""'))
        check(field(pairs, "value") == "0", f"/app/height before any block: {pairs}")

        # A block of two txs. Sent twice before Commit (as after a crash): same app hash.
        app_hash = finalize_block(node)
        check(finalize_block(node) == app_hash, "FinalizeBlock re-sent gave another app hash")
        expect_ok(abci_cli(node, "commit"))

        pairs = expect_ok(abci_cli(node, "query", "--path", "/app/height", '""'))
        check(field(pairs, "value") == "1" and field(pairs, "height") == "1",
              f"/app/height after one block: {pairs}")
        pairs = expect_ok(abci_cli(node, "query", "--path", "/app/version", '""'))
        check(field(pairs, "value") == "0.1.0", f"/app/version: {pairs}")

        # Rejected queries: a code and a log, and the server goes on.
        pairs = abci_cli(node, "query", "--path", "/nope", '""')
        check(field(pairs, "code") == "6", f"unknown path: {pairs}")
        check("/nope" in field(pairs, "log"), f"the log does not name the path: {pairs}")
        pairs = abci_cli(node, "query", "--path", "/app/height", "--height", "5", '""')
        check(field(pairs, "code") == "26", f"query at a height not kept: {pairs}")
        check("5" in field(pairs, "log"), f"the log does not name the height: {pairs}")
        node.kairosd.ensure_alive()
        expect_ok(abci_cli(node, "echo", "still-there"))

        node.stop_kairosd_cleanly()

        # Restart on the same home: block 1 and its app hash were committed durably.
        node.start_kairosd()
        loaded = harness.committed_state_line(node.kairosd.text())
        check(loaded is not None and loaded[1] == 1 and "0x" + loaded[2] == app_hash,
              f"after restart kairosd loaded {loaded}, expected height 1 app hash {app_hash}")
        pairs = expect_ok(abci_cli(node, "query", "--path", "/app/height", '""'))
        check(field(pairs, "value") == "1", f"/app/height after restart: {pairs}")
        node.stop_kairosd_cleanly()


def test_garbage_bytes():
    """Untrusted bytes close that one connection (with a logged reason), never the process."""
    with harness.Node("garbage", with_cometbft=False) as node:
        node.start_kairosd()
        payloads = {
            "unterminated varint": b"\xff" * 11,
            "frame longer than max_frame_bytes": b"\xff\xff\xff\xff\x0f",
            "not a protobuf Request": b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
        }
        for what, data in payloads.items():
            with socket.create_connection(("127.0.0.1", node.abci_port), timeout=10) as s:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
                reply = b""
                while chunk := s.recv(4096):  # the server closes: recv returns b""
                    reply += chunk
            log(f"{what}: connection closed by kairosd after {len(reply)} reply bytes")
            node.kairosd.ensure_alive()
        expect_ok(abci_cli(node, "echo", "after-garbage"))

        def rejected():  # the close lines naming why, not "peer closed the connection"
            lines = re.findall(r"closed after 0 requests: (.*)", node.kairosd.text())
            return [r for r in lines if "peer closed" not in r]

        reasons = harness.poll(lambda: len(rejected()) >= len(payloads) and rejected(), 10,
                               "kairosd to log why it closed each garbage connection")
        log("kairosd's reasons:\n  " + "\n  ".join(reasons))
        check(any("varint" in r for r in reasons), f"no reason names the bad varint: {reasons}")
        check(any("max_frame_bytes" in r for r in reasons), f"no reason names the cap: {reasons}")
        node.stop_kairosd_cleanly()


if __name__ == "__main__":
    harness.main(test_abci_cli, test_garbage_bytes)
