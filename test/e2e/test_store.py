#!/usr/bin/env python3
"""The authenticated store through a real CometBFT: the app hash in every header is the store's
root (its ICS-23 proofs, fetched over RPC, verify against it with the Go reference verifier,
test/ics23/verify), a crash and a replay from scratch give the same app hash at every height,
and store queries answer bad heights and bad keys with the right codes.

Txs are "key=value" (stored at kv/<key>) or anything else (stored at tx/<sha256 hex>); InitChain
writes meta/chain_id and meta/initial_height. KAIROS_E2E_SEED=N repeats a run's random choices (the seed is logged)."""

import base64
import hashlib
import os
import random
import threading
import time

import harness
from harness import check, log

SEED = int(os.environ.get("KAIROS_E2E_SEED") or time.time_ns() % 1_000_000_007)
PROOF_OP_TYPE = "ics23:smt"
CODE_INVALID_REQUEST = 18
CODE_INVALID_HEIGHT = 26


def store_path(key):
    return "/store/" + key.hex()


def query_store(node, key, height=0, prove=True):
    """Queries key at height (0: the latest); must answer code 0. Returns (height answered, value
    or None when absent, proof bytes or None without prove)."""
    q = node.abci_query(store_path(key), height=height, prove=prove)
    return store_answer(q, key, height, prove)


def store_answer(q, key, height, prove):
    """query_store's checks and result for the Query response q."""
    check(q.get("code", 0) == 0, f"query {key!r} at height {height}: {q}")
    at = int(q["height"])
    check(height in (0, at), f"query {key!r} at height {height} was answered at {at}")
    check(base64.b64decode(q.get("key") or "") == key, f"query {key!r}: response key {q}")
    value = base64.b64decode(q["value"]) if q.get("value") else None
    if value is None:
        check(q.get("log") == "key not found", f"query {key!r} at {at}: no value but log {q}")
    if not prove:
        check(not q.get("proofOps"), f"query {key!r} without prove has proofOps: {q}")
        return at, value, None
    ops = (q.get("proofOps") or {}).get("ops") or []
    check(len(ops) == 1 and ops[0].get("type") == PROOF_OP_TYPE,
          f"query {key!r} at {at}: expected one {PROOF_OP_TYPE} proof op, got {ops}")
    check(base64.b64decode(ops[0].get("key") or "") == key, f"proof op key: {ops[0]}")
    return at, value, base64.b64decode(ops[0]["data"])


def flip_bit(b):
    return b[:-1] + bytes([b[-1] ^ 0x01])


def proof_items(name, root, key, value, proof):
    """The proof of key (= value, or absent when value is None) under root, which must verify,
    and tampered claims with the same proof that must not: another value, another root."""
    items = [dict(name=name, root=root, key=key, value=value, proof=proof, expect=True),
             dict(name=name + "/wrong-root", root=flip_bit(root), key=key, value=value,
                  proof=proof, expect=False)]
    if value is not None:
        items.append(dict(name=name + "/wrong-value", root=root, key=key, value=value + b"x",
                          proof=proof, expect=False))
    return items


class Roots:
    """The app hash after each height (block h+1's header app_hash), fetched once each."""

    def __init__(self, node):
        self.node = node
        self.cache = {}

    def __call__(self, h):
        if h not in self.cache:
            self.cache[h] = bytes.fromhex(self.node.app_hash_after(h))
        return self.cache[h]


def send_kv(node, key, value):
    """key=value through broadcast_tx_commit (hex-encoded, so any bytes); returns its height."""
    res = node.broadcast_tx_commit(key + b"=" + value)
    check(res["check_tx"].get("code", 0) == 0 and res["tx_result"].get("code", 0) == 0,
          f"tx {key!r}={value!r}: {res}")
    return int(res["height"])


def test_app_hash_is_store_root_and_proofs_verify():
    """key=value txs (odd bytes, overwrites in later blocks) and one plain tx; every key's proof,
    at the latest height and at an earlier one, verifies with ics23-verify against the app hash in
    the next block's header, and tampered claims (value, root) do not; so does an absence proof,
    which must not prove an existing key absent."""
    rng = random.Random(SEED)
    log(f"seed {SEED}")
    nonce = rng.getrandbits(32).to_bytes(4, "big").hex().encode()
    odd_key = b"odd\x00\x01\x7f\x80\xff key " + nonce  # any byte but '=' may be in a key
    first = {  # kv/<key> -> value, written in early blocks
        b"alpha-" + nonce: b"one",
        b"beta-" + nonce: b"\x00\xff\x00==\n\r\"\\ \xc3\xa9 binary",
        b"gamma-" + nonce: b"stays",
        odd_key: bytes(range(256)),
    }
    later = {  # overwrites in later blocks, and a key that did not exist early on
        b"alpha-" + nonce: b"two\x00",
        b"beta-" + nonce: rng.randbytes(3000),
        odd_key: b"=",
        b"delta-" + nonce: b"new later",
    }
    plain_tx = b"no equals sign: " + rng.randbytes(40).replace(b"=", b"-")
    with harness.Node("store") as node:
        node.start()
        node.wait_for_height(2)
        for key, value in first.items():
            send_kv(node, key, value)
        res = node.broadcast_tx_commit(plain_tx)
        check(res["tx_result"].get("code", 0) == 0, f"plain tx: {res}")
        early = int(res["height"])  # every write in `first` is in a block <= early
        for key, value in later.items():
            last_tx = send_kv(node, key, value)
        log(f"{len(first) + len(later) + 1} txs committed, the last in block {last_tx}; the "
            f"earlier height queried is {early}")

        roots = Roots(node)
        items = []
        # (store key, value expected at the latest height, value expected at `early`)
        cases = [(b"kv/" + k, later.get(k, first.get(k)), first.get(k))
                 for k in dict.fromkeys([*first, *later])]
        cases.append((b"tx/" + hashlib.sha256(plain_tx).hexdigest().encode(), plain_tx, plain_tx))
        for key, latest_value, early_value in cases:
            at, value, proof = query_store(node, key)
            check(at >= last_tx, f"latest query of {key!r} answered at {at}, before {last_tx}")
            check(value == latest_value, f"{key!r} at {at}: {value!r} != {latest_value!r}")
            items += proof_items(f"{key!r}@{at}", roots(at), key, value, proof)
            _, value, proof = query_store(node, key, height=early)
            check(value == early_value, f"{key!r} at {early}: {value!r} != {early_value!r}")
            items += proof_items(f"{key!r}@{early}", roots(early), key, value, proof)

        # meta/initial_height, written by InitChain, holds the chain's first height (1).
        at, value, proof = query_store(node, b"meta/initial_height")
        check(value == (1).to_bytes(8, "big"), f"meta/initial_height at {at} is {value!r}")
        items += proof_items(f"meta/initial_height@{at}", roots(at), b"meta/initial_height",
                             value, proof)

        # Absence: a key never written; the same proof must not prove an existing key absent.
        never = b"kv/never-written-" + nonce
        at, value, proof = query_store(node, never)
        check(value is None, f"{never!r} has a value at {at}: {value!r}")
        items += proof_items(f"{never!r}@{at}", roots(at), never, None, proof)
        existing = b"kv/gamma-" + nonce
        items.append(dict(name=f"{never!r}-proof-for-{existing!r}", root=roots(at), key=existing,
                          value=None, proof=proof, expect=False))

        # /store with the key in data answers exactly as /store/<hex key>.
        by_data = store_answer(node.abci_query("/store", data=existing, height=early, prove=True),
                               existing, early, True)
        by_path = query_store(node, existing, height=early)
        check(by_data == by_path, f"/store with data: {by_data}; {store_path(existing)}: {by_path}")

        must_verify = sum(1 for it in items if it["expect"])
        check(must_verify == 2 * len(cases) + 2,
              f"{must_verify} proofs must verify, expected {2 * len(cases) + 2}")
        verified = harness.ics23_verify(items)
        log(f"{verified} claims checked against header app hashes at heights {sorted(roots.cache)}")
        node.check_app_hash()


class TxStream(threading.Thread):
    """Sends unique txs <tag>-<0..6>=... with broadcast_tx_sync while its `with` block runs. The
    first failure (expected once the node is killed) ends the stream and is kept in `errors`."""

    def __init__(self, node, tag):
        super().__init__(daemon=True)
        self.node, self.tag = node, tag
        self.accepted = 0
        self.errors = []
        self._stop_event = threading.Event()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self._stop_event.set()
        self.join(timeout=30)
        return False

    def run(self):
        i = 0
        while not self._stop_event.wait(0.02):
            i += 1
            tx = f"{self.tag}-{i % 7}={self.tag} {i} {time.time_ns()}".encode()
            try:
                res = self.node.rpc("broadcast_tx_sync", timeout=5, tx="0x" + tx.hex())
                self.accepted += res.get("code", 0) == 0
            except Exception as e:  # noqa: BLE001 (the node was killed, or is restarting)
                self.errors.append(e)
                return


def test_crash_restart_same_app_hashes():
    """kill -9 of both processes mid-stream at a random height >= 5, restart, 6 more blocks; then a
    fresh kairosd replays the whole chain from block 1 and must compute the same app hash at every
    height (kairosd's logs, and the headers where a kill cut a log line off)."""
    rng = random.Random(SEED + 1)
    crash_at = rng.randint(5, 8)
    log(f"seed {SEED}: crash at height >= {crash_at}")
    with harness.Node("crash-replay") as node:
        node.start()
        with TxStream(node, "before") as stream:
            node.wait_for_height(crash_at)
            time.sleep(rng.uniform(0, 0.3))  # a random instant inside the block cycle
            chain_height = node.height()
            node.cometbft.kill9()
            node.kairosd.kill9()
        log(f"killed both at chain height >= {chain_height} after {stream.accepted} txs")
        check(stream.accepted > 0, f"no tx was accepted before the crash: {stream.errors}")

        harness.restart_and_check_resume(node, chain_height)
        with TxStream(node, "after") as stream:
            node.wait_for_height(chain_height + 6)
        check(stream.accepted > 0 and not stream.errors,
              f"txs after the restart: {stream.accepted} accepted, errors {stream.errors}")
        node.check_app_hash()
        blocks = {h: node.block(h) for h in range(2, node.height() + 1)}
        headers = {h - 1: b["header"]["app_hash"] for h, b in blocks.items()}
        with_txs = [h for h, b in blocks.items() if b["data"].get("txs")]
        check(any(h <= chain_height for h in with_txs) and any(h > chain_height for h in with_txs),
              f"blocks with txs: {with_txs}; expected some before and after {chain_height}")
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()

        # The first run's app hashes: what kairosd logged, before and after the crash (a commit
        # whose log line the kill cut off is in a header), consistent with the headers.
        before = harness.committed_hashes(node.proc("kairosd.1").text())
        after = harness.committed_hashes(node.proc("kairosd.2").text())
        for h in before.keys() & after.keys():
            check(before[h] == after[h], f"block {h} committed twice: {before[h]}, {after[h]}")
        first_run = {**before, **after}
        end = max(first_run)
        for h in range(1, end + 1):
            check(h in first_run or h in headers, f"block {h}: no app hash in logs or headers")
            check(h not in first_run or h not in headers or first_run[h] == headers[h],
                  f"block {h}: kairosd logged app hash {first_run.get(h)}, the header of block "
                  f"{h + 1} has {headers.get(h)}")
        expected = {h: first_run.get(h) or headers[h] for h in range(1, end + 1)}
        log(f"first run: app hashes for blocks 1..{end} ({len(before)} logged before the crash, "
            f"{len(after)} after)")

        # A fresh kairosd: CometBFT's handshake replays every block from 1, checking each app hash
        # against the next header (it panics on a mismatch).
        node.reset_kairosd_home()
        kairosd = node.start_kairosd()
        check("waiting for InitChain" in kairosd.text(),
              f"the fresh kairosd did not start empty:\n{kairosd.tail(20)}")
        node.start_cometbft()
        node.wait_for_height(end + 1)
        cmt = node.cometbft.text()
        check("ABCI Replay Blocks" in cmt and "appHeight=0" in cmt,
              f"CometBFT did not log a replay from app height 0:\n{node.cometbft.tail(30)}")
        replay = harness.poll(lambda: committed_through(node, end), 30,
                              f"kairosd's commit of block {end}", alive=node.ensure_alive)
        for h in range(1, end + 1):
            check(replay.get(h) == expected[h],
                  f"block {h}: app hash {replay.get(h)} on replay, {expected[h]} the first time")
        log(f"replay from scratch gave the same app hash at all {end} heights")
        node.check_app_hash()
        node.cometbft.terminate()
        node.stop_kairosd_cleanly()


def committed_through(node, height):
    """The running kairosd's logged {height: app hash} once it has committed `height`, else None."""
    committed = harness.committed_hashes(node.kairosd.text())
    return committed if height in committed else None


def test_query_errors_over_rpc():
    """Store queries over RPC: a future height (26, "not committed yet"), a key that is not hex
    (18), and with keep_recent = 5 pruned at every block: height 2 (26, "not kept", naming the
    earliest kept height), and proofs that verify at the latest - 3 and at the oldest kept
    height."""
    keep_recent = 5
    with harness.Node("store-queries") as node:
        node.configure_kairosd({"store.keep_recent": str(keep_recent), "store.prune_interval": "1"})
        node.start()
        with TxStream(node, "prune") as stream:  # writes, so pruning has stale pages to delete
            node.wait_for_height(12)
        check(stream.accepted > 0 and not stream.errors,
              f"txs: {stream.accepted} accepted, errors {stream.errors}")
        key = b"meta/initial_height"

        q = node.abci_query(store_path(key), height=10**9, prove=True)
        check(q.get("code") == CODE_INVALID_HEIGHT and q.get("codespace") == "sdk" and
              "not committed yet" in q.get("log", ""),
              f"a future height: expected code {CODE_INVALID_HEIGHT}, 'not committed yet': {q}")

        for path in ("/store/zz", "/store/abc", "/store/" + key.hex() + "g0"):
            q = node.abci_query(path, prove=True)
            check(q.get("code") == CODE_INVALID_REQUEST and q.get("codespace") == "sdk" and
                  "hex key" in q.get("log", ""),
                  f"{path}: expected code {CODE_INVALID_REQUEST} naming the hex key: {q}")

        # keep_recent 5, pruned at every block: after block L only L-4..L are kept.
        low = int(node.abci_info()["last_block_height"])
        q = node.abci_query(store_path(key), height=2, prove=True)
        high = int(node.abci_info()["last_block_height"])
        check(q.get("code") == CODE_INVALID_HEIGHT and "not kept" in q.get("log", ""),
              f"a pruned height: expected code {CODE_INVALID_HEIGHT}, 'not kept': {q}")
        earliest = int(q["log"].rsplit(" ", 1)[-1])
        check(low - keep_recent + 1 <= earliest <= high - keep_recent + 1,
              f"earliest kept version {earliest}, expected the last {keep_recent} of {low}..{high}")
        log(f"height 2 is pruned; the earliest kept is {earliest} at latest {low}..{high}")

        # Proofs at the latest - 3 and at the oldest kept height (latest - 4), for a genesis key
        # and a key the txs kept rewriting. A retry only when the chain moved past the window.
        keys = (key, b"kv/prune-0")

        def proofs_at(offset):
            latest = int(node.abci_info()["last_block_height"])
            at = latest - offset
            answers = [node.abci_query(store_path(k), height=at, prove=True) for k in keys]
            if any(q.get("code", 0) != 0 for q in answers):
                now = int(node.abci_info()["last_block_height"])
                check(now >= at + keep_recent,
                      f"height {at} should be kept at latest {now} (keep_recent {keep_recent}): "
                      f"{answers}")
                return None
            root = bytes.fromhex(node.app_hash_after(at))
            items = []
            for k, q in zip(keys, answers):
                _, value, proof = store_answer(q, k, at, True)
                check(value is not None, f"{k!r} has no value at {at}: {q}")
                items += proof_items(f"{k!r}@{at}", root, k, value, proof)
            check(items[0]["value"] == (1).to_bytes(8, "big"),
                  f"meta/initial_height at {at} is {items[0]['value']!r}")
            return items

        items = []
        for offset in (3, keep_recent - 1):
            items += harness.poll(lambda o=offset: proofs_at(o), 20, f"proofs at latest - {offset}")
        harness.ics23_verify(items)
        node.check_app_hash()


def test_idle_chain_makes_no_empty_blocks():
    """An empty block leaves the app hash as it was, so with CometBFT's create_empty_blocks =
    false the chain idles until a tx arrives (CometBFT makes a block without txs only to commit a
    changed app hash). A tx then makes its block plus one proof block, and the chain idles again.
    The waits only give a busy chain time to show itself; nothing is timed."""
    with harness.Node("idle") as node:
        harness.set_toml_keys(os.path.join(node.cmt_home, "config", "config.toml"),
                              {"consensus.create_empty_blocks": "false"})
        node.start()
        node.wait_for_height(1)
        time.sleep(3)  # with 200 ms commits, a chain that did not idle would be far past 2
        idle = node.height()
        check(idle <= 2, f"an idle chain made {idle} blocks")
        time.sleep(2)
        check(node.height() == idle, f"an idle chain went on from {idle} to {node.height()}")
        res = node.broadcast_tx_commit(b"idle=" + os.urandom(8).hex().encode())
        tx_height = int(res["height"])
        node.wait_for_height(tx_height + 1)  # the block committing the tx's app hash
        time.sleep(3)
        after = node.height()
        check(after == tx_height + 1, f"after the tx at {tx_height} the chain went on to {after}")
        # The last block changed nothing, so its header already carries the current app hash.
        info_hash = harness.b64_to_hex(node.abci_info()["last_block_app_hash"])
        header_hash = node.block(after)["header"]["app_hash"]
        check(info_hash == header_hash, f"Info app hash {info_hash} != header {after} {header_hash}")
        log(f"idle at {idle}; tx at {tx_height}; idle again at {after}")


if __name__ == "__main__":
    harness.main(test_app_hash_is_store_root_and_proofs_verify, test_idle_chain_makes_no_empty_blocks, test_crash_restart_same_app_hashes,
                 test_query_errors_over_rpc)
