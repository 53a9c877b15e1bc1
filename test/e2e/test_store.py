#!/usr/bin/env python3
"""The authenticated store through a real CometBFT: the app hash in every header is the store's
root (its ICS-23 proofs, fetched over RPC, verify against it with the Go reference verifier,
test/ics23/verify), a crash and a replay from scratch give the same app hash at every height,
and store queries answer bad heights and bad keys with the right codes.

The state is written by signed MsgSend txs (the kairosd CLI, or test/e2e/cosmos_tx.py for a
stream); the keys proved are balances `bank/bal/<len><address><denom>` (a decimal value, absent
when zero), accounts `auth/acc/<address>` (a BaseAccount), an unordered nonce, and
meta/initial_height, written by InitChain. Proofs come from `/store/<hex key>` and from the module
query paths with prove=true. KAIROS_E2E_SEED=N repeats a run's random choices (the seed is
logged)."""

import base64
import os
import random
import threading
import time

import cosmos_tx
import harness
from harness import CODE_INVALID_REQUEST, check, log

SEED = int(os.environ.get("KAIROS_E2E_SEED") or time.time_ns() % 1_000_000_007)
PROOF_OP_TYPE = "ics23:smt"
CODE_INVALID_HEIGHT = 26
CODE_KEY_NOT_FOUND = 22
FEE = int(harness.FEES.removesuffix("stake"))
START = int(harness.GENESIS_COINS.removesuffix("stake"))


def raw_address(bech32):
    return cosmos_tx.bech32_decode(bech32)[1]


def balance_key(address, denom=harness.DENOM):
    raw = raw_address(address)
    return b"bank/bal/" + bytes([len(raw)]) + raw + denom.encode()


def account_key(address):
    return b"auth/acc/" + raw_address(address)


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
    return at, value, proof_of(q, key)


def proof_of(q, key):
    """The one ics23:smt proof op of a query response, which must be for `key`."""
    ops = (q.get("proofOps") or {}).get("ops") or []
    check(len(ops) == 1 and ops[0].get("type") == PROOF_OP_TYPE,
          f"query of {key!r}: expected one {PROOF_OP_TYPE} proof op, got {ops}")
    check(base64.b64decode(ops[0].get("key") or "") == key, f"proof op key: {ops[0]}")
    return base64.b64decode(ops[0]["data"])


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


def decimal(n):
    """A balance as the store holds it: decimal bytes, absent (None) when zero."""
    return str(n).encode() if n else None


def test_app_hash_is_store_root_and_proofs_verify():
    """Transfers in early blocks, then more (one to an address that had no balance, one
    unordered) in later blocks; the balance and account keys of every party, at the latest
    height and at an earlier one, have proofs that verify with ics23-verify against the app hash
    in the next block's header, and tampered claims (value, root) do not; so do absence proofs
    (a balance never written, a balance not written yet), which must not prove an existing key
    absent; and the module query paths with prove=true give proofs of the same keys."""
    rng = random.Random(SEED)
    log(f"seed {SEED}")
    amounts = [rng.randint(1, 10_000) for _ in range(5)]
    accounts = {"alice": harness.GENESIS_COINS, "bob": harness.GENESIS_COINS,
                "carol": harness.GENESIS_COINS, "dave": None, "erin": None}
    with harness.Node("store", accounts=accounts) as node:
        node.start()
        node.wait_for_height(2)
        who = {name: node.address(name) for name in accounts}
        bal = {name: (START if coins else 0) for name, coins in accounts.items()}
        seq = {name: 0 for name in accounts}

        def send(frm, to, amount, unordered=False):
            res = node.send(frm, to, f"{amount}stake", unordered=unordered, timeout="300s")
            bal[frm] -= amount + FEE
            bal[to] += amount
            seq[frm] += not unordered
            return res

        send("alice", "bob", amounts[0])
        early = int(send("bob", "carol", amounts[1])["height"])  # every early write is <= early
        early_bal, early_seq = dict(bal), dict(seq)
        send("alice", "dave", amounts[2])  # a balance key that did not exist at `early`
        unordered = send("carol", "alice", amounts[3], unordered=True)
        last_tx = int(send("bob", "alice", amounts[4])["height"])
        log(f"5 transfers committed, the last in block {last_tx}; the earlier height queried "
            f"is {early}")
        fees_key = balance_key(harness.FEE_COLLECTOR)

        roots = Roots(node)
        items = []
        # (store key, value expected at the latest height, value expected at `early`)
        cases = [(balance_key(who[n]), decimal(bal[n]), decimal(early_bal[n]))
                 for n in ("alice", "bob", "carol", "dave")]
        cases.append((fees_key, decimal(5 * FEE), decimal(2 * FEE)))
        for key, latest_value, early_value in cases:
            at, value, proof = query_store(node, key)
            check(at >= last_tx, f"latest query of {key!r} answered at {at}, before {last_tx}")
            check(value == latest_value, f"{key!r} at {at}: {value!r} != {latest_value!r}")
            items += proof_items(f"{key!r}@{at}", roots(at), key, value, proof)
            _, value, proof = query_store(node, key, height=early)
            check(value == early_value, f"{key!r} at {early}: {value!r} != {early_value!r}")
            items += proof_items(f"{key!r}@{early}", roots(early), key, value, proof)
        must_verify = 2 * len(cases)

        # Accounts: a BaseAccount whose sequence moved between the two heights.
        for name in ("alice", "bob"):
            key = account_key(who[name])
            for height, want_seq in ((0, seq[name]), (early, early_seq[name])):
                at, value, proof = query_store(node, key, height=height)
                acc = cosmos_tx.decode_fields(value)
                check(acc[1][0].decode() == who[name] and acc.get(4, [0])[0] == want_seq,
                      f"{name}'s account at {at}: {acc}, expected sequence {want_seq}")
                items += proof_items(f"account {name}@{at}", roots(at), key, value, proof)
                must_verify += 1

        # meta/initial_height, written by InitChain, holds the chain's first height (1).
        at, value, proof = query_store(node, b"meta/initial_height")
        check(value == (1).to_bytes(8, "big"), f"meta/initial_height at {at} is {value!r}")
        items += proof_items(f"meta/initial_height@{at}", roots(at), b"meta/initial_height",
                             value, proof)
        must_verify += 1

        # Absence: erin's balance was never written; the same proof must not prove alice's
        # balance absent.
        never = balance_key(who["erin"])
        at, value, proof = query_store(node, never)
        check(value is None, f"{never!r} has a value at {at}: {value!r}")
        items += proof_items(f"erin's balance@{at}", roots(at), never, None, proof)
        existing = balance_key(who["alice"])
        items.append(dict(name=f"erin's proof for alice's balance", root=roots(at),
                          key=existing, value=None, proof=proof, expect=False))
        must_verify += 1

        # /store with the key in data answers exactly as /store/<hex key>.
        by_data = store_answer(node.abci_query("/store", data=existing, height=early, prove=True),
                               existing, early, True)
        by_path = query_store(node, existing, height=early)
        check(by_data == by_path, f"/store with data: {by_data}; {store_path(existing)}: {by_path}")

        # Module query paths with prove=true: the proof is of the store key behind the answer.
        q = node.abci_query("/cosmos.bank.v1beta1.Query/Balance", height=early, prove=True,
                            data=cosmos_tx.query_balance_request(who["bob"], harness.DENOM))
        check(q.get("code", 0) == 0 and int(q["height"]) == early, f"Balance query: {q}")
        denom, amount = cosmos_tx.decode_balance_response(base64.b64decode(q["value"]))
        check((denom, amount) == (harness.DENOM, early_bal["bob"]), f"Balance: {denom} {amount}")
        items += proof_items(f"Query/Balance bob@{early}", roots(early), balance_key(who["bob"]),
                             decimal(amount), proof_of(q, balance_key(who["bob"])))
        q = node.abci_query("/cosmos.auth.v1beta1.Query/Account", prove=True,
                            data=cosmos_tx.query_account_request(who["alice"]))
        check(q.get("code", 0) == 0, f"Account query: {q}")
        at = int(q["height"])
        any_ = cosmos_tx.decode_fields(cosmos_tx.decode_fields(base64.b64decode(q["value"]))[1][0])
        check(any_[1][0] == b"/cosmos.auth.v1beta1.BaseAccount", f"Account type: {any_}")
        items += proof_items(f"Query/Account alice@{at}", roots(at), account_key(who["alice"]),
                             any_[2][0], proof_of(q, account_key(who["alice"])))
        q = node.abci_query("/cosmos.auth.v1beta1.Query/Account", prove=True,
                            data=cosmos_tx.query_account_request(who["erin"]))
        check(q.get("code") == CODE_KEY_NOT_FOUND and
              "rpc error: code = NotFound" in q.get("log", ""), f"a missing account: {q}")
        at = int(q["height"])
        items += proof_items(f"Query/Account erin (absent)@{at}", roots(at),
                             account_key(who["erin"]), None, proof_of(q, account_key(who["erin"])))
        timeout = cosmos_tx.decode_tx(node.tx_bytes(unordered["txhash"]))["timeout_unix_nanos"]
        q = node.abci_query("/kairos.auth.v1.Query/UnorderedNonce", prove=True,
                            data=cosmos_tx.query_unordered_nonce_request(who["carol"], timeout))
        check(q.get("code", 0) == 0 and cosmos_tx.decode_fields(base64.b64decode(q["value"])) ==
              {1: [1]}, f"UnorderedNonce of carol's tx: {q}")
        at = int(q["height"])
        nonce_key = (b"auth/unordered/" + ((timeout ^ (1 << 63)) & (2**64 - 1)).to_bytes(8, "big")
                     + raw_address(who["carol"]))
        items += proof_items(f"Query/UnorderedNonce carol@{at}", roots(at), nonce_key, b"\x01",
                             proof_of(q, nonce_key))
        must_verify += 4

        check(sum(1 for it in items if it["expect"]) == must_verify,
              f"{sum(1 for it in items if it['expect'])} proofs must verify, expected "
              f"{must_verify}")
        verified = harness.ics23_verify(items)
        log(f"{verified} claims checked against header app hashes at heights {sorted(roots.cache)}")
        node.check_app_hash()


class TxStream(threading.Thread):
    """While its `with` block runs, sends signed transfers (cosmos_tx.py) with broadcast_tx_sync:
    unordered ones from `streamer-u` (a fresh timeout each) and ordered ones from `streamer-o`
    (sequences counted here from the account's at the start), to random recipients. A CheckTx
    rejection is kept in `rejected`; the first exception (expected once the node is killed) ends
    the stream and is kept in `errors`."""

    SENDERS = {"streamer-u": harness.GENESIS_COINS, "streamer-o": harness.GENESIS_COINS,
               "sink": None}

    def __init__(self, node, tag, seed=0):
        super().__init__(daemon=True)
        self.node, self.tag = node, tag
        self.rng = random.Random(seed)
        self.accepted = 0
        self.rejected = []
        self.errors = []
        self._stop_event = threading.Event()
        numbers = {n: int(node.account(n)["account"]["account_number"])
                   for n in ("streamer-u", "streamer-o")}
        self.numbers = numbers
        self.sequence = int(node.account("streamer-o")["account"]["sequence"])
        self.recipients = [node.address(n) for n in self.SENDERS]

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self._stop_event.set()
        self.join(timeout=30)
        return False

    def next_tx(self, i):
        to = self.rng.choice(self.recipients)
        amount = f"{self.rng.randint(1, 1000)}stake"
        if i % 2:
            return self.node.build_send("streamer-u", to, amount, self.numbers["streamer-u"],
                                        unordered=True, memo=self.tag,
                                        timeout_unix_nanos=time.time_ns() + 60 * 10**9), False
        return self.node.build_send("streamer-o", to, amount, self.numbers["streamer-o"],
                                    sequence=self.sequence, memo=self.tag), True

    def run(self):
        i = 0
        while not self._stop_event.wait(0.02):
            i += 1
            tx, ordered = self.next_tx(i)
            try:
                res = self.node.rpc("broadcast_tx_sync", timeout=5, tx="0x" + tx.hex())
            except Exception as e:  # noqa: BLE001 (the node was killed, or is restarting)
                self.errors.append(e)
                return
            if res.get("code", 0) == 0:
                self.accepted += 1
                self.sequence += ordered
            else:
                self.rejected.append(res)


def test_crash_restart_same_app_hashes():
    """kill -9 of both processes mid-stream at a random height >= 5, restart, 6 more blocks; then a
    fresh kairosd replays the whole chain from block 1 and must compute the same app hash at every
    height (kairosd's logs, and the headers where a kill cut a log line off)."""
    rng = random.Random(SEED + 1)
    crash_at = rng.randint(5, 8)
    log(f"seed {SEED}: crash at height >= {crash_at}")
    with harness.Node("crash-replay", accounts=TxStream.SENDERS) as node:
        node.start()
        node.wait_for_height(2)
        with TxStream(node, "before", SEED) as stream:
            # Blocks come fast on an idle chain: let txs flow first, then let two blocks take
            # them, so the crash always comes after some block with txs (CI once saw the chain
            # reach crash_at with its only accepted tx still in the mempool).
            harness.poll(lambda: stream.accepted >= 3 or stream.errors or stream.rejected, 60,
                         "txs accepted before the crash")
            node.wait_for_height(max(crash_at, node.height() + 2))
            time.sleep(rng.uniform(0, 0.3))  # a random instant inside the block cycle
            chain_height = node.height()
            node.cometbft.kill9()
            node.kairosd.kill9()
        log(f"killed both at chain height >= {chain_height} after {stream.accepted} txs")
        check(stream.accepted > 0 and not stream.rejected,
              f"txs before the crash: {stream.accepted} accepted, rejected {stream.rejected[:3]}, "
              f"errors {stream.errors}")

        harness.restart_and_check_resume(node, chain_height)
        with TxStream(node, "after", SEED + 2) as stream:  # ordered: from the reloaded sequence
            # The chain may already be past chain_height + 6 (the restart checks take blocks):
            # wait for txs to flow first, then for blocks to take them.
            harness.poll(lambda: stream.accepted >= 3 or stream.errors or stream.rejected, 60,
                         "txs accepted after the restart")
            node.wait_for_height(max(chain_height, node.height()) + 3)
        check(stream.accepted > 0 and not stream.errors and not stream.rejected,
              f"txs after the restart: {stream.accepted} accepted, rejected "
              f"{stream.rejected[:3]}, errors {stream.errors}")
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
    with harness.Node("store-queries", accounts=TxStream.SENDERS) as node:
        node.configure_kairosd({"store.keep_recent": str(keep_recent), "store.prune_interval": "1"})
        node.start()
        node.wait_for_height(2)
        with TxStream(node, "prune", SEED) as stream:  # writes: pruning has stale pages to delete
            node.wait_for_height(12)
        check(stream.accepted > 0 and not stream.errors and not stream.rejected,
              f"txs: {stream.accepted} accepted, rejected {stream.rejected[:3]}, errors "
              f"{stream.errors}")
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
        # and a key the txs kept rewriting (a sender's balance). A retry only when the chain
        # moved past the window.
        keys = (key, balance_key(node.address("streamer-u")))

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
    with harness.Node("idle", accounts={"alice": harness.GENESIS_COINS, "bob": None}) as node:
        harness.set_toml_keys(os.path.join(node.cmt_home, "config", "config.toml"),
                              {"consensus.create_empty_blocks": "false"})
        node.start()
        node.wait_for_height(1)
        time.sleep(3)  # with 200 ms commits, a chain that did not idle would be far past 2
        idle = node.height()
        check(idle <= 2, f"an idle chain made {idle} blocks")
        time.sleep(2)
        check(node.height() == idle, f"an idle chain went on from {idle} to {node.height()}")
        tx_height = int(node.send("alice", "bob", "5stake")["height"])
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
    harness.main(test_app_hash_is_store_root_and_proofs_verify,
                 test_idle_chain_makes_no_empty_blocks, test_crash_restart_same_app_hashes,
                 test_query_errors_over_rpc)
