#!/usr/bin/env python3
"""kairosd alone, driven by CometBFT's own abci-cli (v0.38.25) over the socket protocol: echo,
info, check_tx, finalize_block + commit, queries (known, unknown, wrong height), a clean SIGTERM
stop, a restart that reloads the committed block, and garbage bytes on a raw connection."""

import re
import socket

import harness
from harness import check, log


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


def finalize_abc_def(node):
    """FinalizeBlock with txs "abc" and "def"; returns the app hash (0x hex)."""
    pairs = expect_ok(abci_cli(node, "finalize_block", '"abc"', '"def"'))
    check(len([k for k, _ in pairs if k == "code"]) == 3, f"2 tx results + the block: {pairs}")
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
        expect_ok(abci_cli(node, "check_tx", "0x00"))
        pairs = expect_ok(abci_cli(node, "query", "--path", "/app/height", '""'))
        check(field(pairs, "value") == "0", f"/app/height before any block: {pairs}")

        # A block of two txs. Sent twice before Commit (as after a crash): same app hash.
        app_hash = finalize_abc_def(node)
        check(finalize_abc_def(node) == app_hash, "FinalizeBlock re-sent gave another app hash")
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
