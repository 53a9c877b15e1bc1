#!/usr/bin/env python3
"""Proves that two kairosd builds compute the same app hash for the same blocks, with real
CometBFT v0.38.25 (issue 22: "the app hash of the same blocks is byte-identical before and
after"). Called by scripts/replay_check.sh; usage: replay_check.py OLD_KAIROSD NEW_KAIROSD [BLOCKS].

How:
 1. Record. A fresh single-validator chain (CometBFT v0.38.25 + OLD, test/e2e/harness.py, loopback
    ports picked at random) runs a mixed workload until height BLOCKS: MsgSends from six
    accounts built by test/e2e/cosmos_tx.py (ordered, unordered, two-message txs, sends into the
    locks escrow that fail in the block), and the locks module through OLD's CLI (register,
    acquire, write set/add, release, refund-registration; contended, unregistered, unauthorized
    and over-the-limit ones sent with --no-simulate so that they fail in the block), with short
    locks periods so that sessions expire, EndBlock ends them and bonds come back within the
    run. The txs' timing makes every run's blocks different (REPLAY_SEED fixes only the
    choices); what matters is that both builds run the same recorded blocks. Then both stop,
    the validator key is
    swapped for a key outside the validator set (so no node can add blocks), and OLD is started
    again on its data: the recorded chain is frozen at N. Recorded from CometBFT's RPC: the
    header app hash of every block (header h+1 = the app hash after block h, header 1 = the genesis
    app hash), every tx's result (its kind and code), and /abci_info (the app hash after N).
 2. Replay. Both stop; kairosd's home (config and data) is moved aside and NEW makes a fresh one
    (`NEW init`); CometBFT's home is kept. At NEW's start CometBFT's handshake sees the app at
    height 0 and (consensus/replay.go, ReplayBlocksWithContext + replayBlocks) sends InitChain
    with the same genesis, then FinalizeBlock + Commit for every stored block 1..N
    (state.ExecCommitBlock), asserting before each block i that the app hash it got equals block
    i's header AppHash (assertAppHashEqualsOneFromBlock, which covers InitChain's hash at i = 1),
    and after block N that it equals the saved state's (assertAppHashEqualsOneFromState); a
    mismatch panics and CometBFT exits.
 3. Compare, height by height: NEW's logged genesis hash and "committed block h: T txs (F failed),
    app hash H" lines, and CometBFT's "executed block height=h app_hash=H" lines, against the
    recording (and T, F against OLD's own log of the same block); then NEW's /abci_info against
    OLD's. One line per height; exit 1 on any difference (a height CometBFT never replayed,
    because it stopped at an earlier mismatch, counts as different).

Not compared, because CometBFT's replay does not keep them: the replayed txs' events, logs and gas
(replayBlocks drops the FinalizeBlock response; only the count of failed txs is in NEW's log).
"""

import base64
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))

import cosmos_tx  # noqa: E402
import harness  # noqa: E402
from harness import FEES, E2EError, log  # noqa: E402

SEED = int(os.environ.get("REPLAY_SEED", "22"))
COINS = "1000000000stake"
BANK_SENDERS = [f"s{i}" for i in range(6)]  # s0..s3 ordered, s4 unordered, s5 multi/out-of-gas
RECIPIENTS = [f"r{i}" for i in range(4)]    # no genesis account: the first send creates it
LOCK_USERS = ["alice", "bob", "carol", "dave"]  # CLI keys; dave never registers
# Short periods, so that sessions expire, EndBlock cleans them up (at most 2 a block), cool-off
# deposits grow, registrations expire and their bonds are refunded within a few hundred blocks.
LOCKS_PARAMS = {"session_period": "12", "cooloff_period": "6", "whitelist_period": "150",
                "refund_holding_period": "10", "base_deposit": "1000", "whitelist_fee": "100000",
                "max_locks_per_session": "3", "scale_refund": True, "release_bounty_bps": 500,
                "forfeit_sink": "burn", "end_block_cleanup_limit": "2"}
# The locks module's escrow account (docs/locks.md): MsgSend may not pay into it.
ESCROW = cosmos_tx.bech32_encode("kairos", hashlib.sha256(b"locks").digest()[:20])


# ---- the workload

class BankLoad(threading.Thread):
    """Rounds of raw txs (cosmos_tx.py, broadcast in order over one connection) until stopped:
    s0..s3 one ordered send each, s4 two unordered sends, and every few rounds from s5 a
    two-message tx, or one that fails in the block (code 4: a send into the locks escrow, alone or
    after a good send). A send above the balance or a gas limit below the send's cost never
    reaches a block (CheckTx refuses both), so they are not sent."""

    def __init__(self, node):
        super().__init__(daemon=True)
        self.node, self.rng = node, random.Random(SEED)
        self.stop_event = threading.Event()
        self.numbers = {s: node.genesis_account_number(s) for s in BANK_SENDERS}
        self.sequence = {s: 0 for s in BANK_SENDERS}
        self.targets = [node.address(n) for n in RECIPIENTS + BANK_SENDERS + LOCK_USERS]
        self.accepted, self.refused, self.errors = 0, {}, []
        self.conn = harness.RpcConnection(node.rpc_port)

    def signed(self, who, messages, sequence, gas=200000, unordered=False):
        key, pub = self.node.private_key(who), self.node.keys[who]["pub_key"]
        timeout = time.time_ns() + 60 * 10**9 if unordered else None
        body = cosmos_tx.tx_body(messages, memo=f"replay {who}", unordered=unordered,
                                 timeout_unix_nanos=timeout)
        info = cosmos_tx.auth_info(pub, 0 if unordered else sequence, FEES, gas)
        sig = cosmos_tx.sign(key, cosmos_tx.sign_doc(body, info, self.node.cached_chain_id(),
                                                     self.numbers[who]))
        return cosmos_tx.tx_raw(body, info, [sig])

    def send_msg(self, who, amount=None):
        amount = amount or f"{self.rng.randint(1, 5000)}stake"
        return cosmos_tx.any_msg(cosmos_tx.MSG_SEND, cosmos_tx.msg_send(
            self.node.address(who), self.rng.choice(self.targets), amount))

    def escrow_msg(self):
        return cosmos_tx.any_msg(cosmos_tx.MSG_SEND, cosmos_tx.msg_send(
            self.node.address("s5"), ESCROW, "10stake"))

    def round(self, i):
        txs = []  # (tx, ordered sender or None)
        for s in BANK_SENDERS[:4]:
            txs.append((self.signed(s, [self.send_msg(s)], self.sequence[s]), s))
        for _ in range(2):
            txs.append((self.signed("s4", [self.send_msg("s4")], 0, unordered=True), None))
        if i % 5 == 0:
            txs.append((self.signed("s5", [self.send_msg("s5"), self.send_msg("s5")],
                                    self.sequence["s5"]), "s5"))
        elif i % 13 == 0:  # into the locks escrow: the fee is paid, the send fails in the block
            txs.append((self.signed("s5", [self.escrow_msg()], self.sequence["s5"]), "s5"))
        elif i % 17 == 0:  # a good send, then one into the escrow: the tx fails, both undone
            txs.append((self.signed("s5", [self.send_msg("s5"), self.escrow_msg()],
                                    self.sequence["s5"]), "s5"))
        for tx, sender in txs:
            try:
                res = self.conn.call("broadcast_tx_sync", tx="0x" + tx.hex())
                code, why = res.get("code", 0), f"code {res.get('code', 0)}: {res.get('log')}"
            except harness.RpcError as e:  # CometBFT's own refusal (its cache, a full pool)
                code, why = None, str(e.error.get("data"))[:40]
            if code == 0:
                self.accepted += 1
                if sender:
                    self.sequence[sender] += 1
            else:
                self.refused[why] = self.refused.get(why, 0) + 1

    def run(self):
        i = 0
        try:
            while not self.stop_event.wait(0.25):
                i += 1
                self.round(i)
        except Exception as e:  # noqa: BLE001 (reported by the main thread)
            self.errors.append(e)
        finally:
            self.conn.close()


class LocksLoad(threading.Thread):
    """The locks module through OLD's CLI (`kairosd tx locks ... --wait`), one tx at a time, in
    rounds until stopped. The ones meant to fail in the block skip the CLI's simulation."""

    def __init__(self, node):
        super().__init__(daemon=True)
        self.node, self.rng = node, random.Random(SEED + 1)
        self.stop_event = threading.Event()
        self.sent, self.unsent, self.errors = 0, 0, []

    def tx(self, who, *args, no_simulate=False, unordered=False):
        if self.stop_event.is_set():
            return None
        extra = ["--no-simulate"] if no_simulate else []
        if unordered:
            extra += ["--unordered", "--timeout", "60s"]
        done = self.node.cli("tx", "locks", *args, "--fees", FEES, "--node", self.node.node_url,
                             "--wait", "--output", "json", *extra, expect_rc=None)
        res = json.loads(done.out) if done.out.strip() else None
        if res and int(res.get("height", 0)) > 0:
            self.sent += 1
        else:  # refused by the simulation or CheckTx: nothing reached a block
            self.unsent += 1
        return res

    def round(self, j):
        r = self.rng
        for who in ("alice", "bob", "carol") if j % 3 == 1 else ():
            # Each fails in the simulation (nothing is sent) while the registration is live or
            # its bond is held, and goes through once it has expired or can be refunded.
            self.tx(who, "refund-registration", who)
            self.tx(who, "register", who)
        self.tx("alice", "write", "alice", "counter", "add", str(r.randint(1, 9)))
        if j % 3 == 0:  # alice's session is active: only she may end it (code 4)
            self.tx("bob", "release", "bob", "alice", no_simulate=True)
        self.tx("bob", "write", "bob", "counter", "add", "2", no_simulate=True)  # often locked
        if j % 2 == 0:
            self.tx("alice", "release", "alice")  # early: a decayed refund
        self.tx("carol", "acquire", "carol", f"book[k{j % 4}]", f"book[k{(j + 1) % 4}]")
        self.tx("carol", "write", "carol", f"book[k{j % 4}]", "set", str(r.randint(-99, 99)),
                unordered=True)
        self.tx("dave", "acquire", "dave", "counter", no_simulate=True)  # not whitelisted
        if j % 4 == 1:
            self.tx("bob", "acquire", "bob", "ledger", "book[k9]", "flag", unordered=True)
        if j % 5 == 0:  # over max_locks_per_session (3)
            self.tx("bob", "acquire", "bob", "a", "b", "c", "d", no_simulate=True)
        if j % 3 == 2:  # carol's session may have expired: then anyone may end it (a bounty)
            self.tx("bob", "release", "bob", "carol", no_simulate=True)

    def run(self):
        j = 0
        try:
            while not self.stop_event.is_set():
                j += 1
                self.round(j)
        except Exception as e:  # noqa: BLE001
            self.errors.append(e)


# ---- reading the chain

def msg_kinds(raw):
    """'MsgSend', 'MsgSend+MsgSend', 'MsgWrite unordered', ... of TxRaw bytes."""
    tx = cosmos_tx.decode_fields(raw)
    body = cosmos_tx.decode_fields(tx[1][0])
    names = []
    for any_bytes in body.get(1, []):
        url = cosmos_tx.decode_fields(any_bytes)[1][0].decode()
        names.append(url.rsplit(".", 1)[-1])
    return "+".join(names) + (" unordered" if body.get(4, [0])[0] else "")


def executed_hashes(text):
    """{height: app hash} from CometBFT's replay lines 'executed block ... height=h app_hash=H'."""
    out = {}
    for line in text.splitlines():
        if "executed block" in line:
            h = re.search(r"height=(\d+)", line)
            a = re.search(r"app_hash=([0-9A-F]*)", line)
            if h and a:
                out[int(h.group(1))] = a.group(1)
    return out


def committed_counts(text):
    """{height: (txs, failed)} from kairosd's 'committed block h: T txs (F failed)' lines."""
    return {int(h): (int(t), int(f)) for h, t, f in
            re.findall(r"committed block (\d+): (\d+) txs \((\d+) failed\)", text)}


def genesis_hash(text):
    m = re.search(r"genesis app hash ([0-9A-F]+)", text)
    return m.group(1) if m else None


def freeze(node):
    """Replaces CometBFT's validator key with one outside the validator set: a started node
    replays and serves RPC but never proposes or signs, so the chain stays at its height."""
    with tempfile.TemporaryDirectory(prefix="kairos-replay-key-") as tmp:
        harness.run([node.cometbft_bin, "init", "--home", tmp])
        key = os.path.join(node.cmt_home, "config", "priv_validator_key.json")
        shutil.move(key, key + ".validator")
        shutil.copy2(os.path.join(tmp, "config", "priv_validator_key.json"), key)
    log("validator key swapped for one outside the set: no more blocks on this home")


def wait_rpc(node, timeout):
    """Polls /status until CometBFT answers (its RPC starts after the handshake)."""
    return harness.poll(lambda: node.rpc("status", timeout=5), timeout,
                        "CometBFT's RPC (after the handshake)", interval=0.5,
                        alive=node.ensure_alive)


# ---- the two runs

def record(node, blocks):
    with open(node.genesis_path()) as f:
        genesis = json.load(f)
    genesis["app_state"]["locks"] = {"params": LOCKS_PARAMS}
    with open(node.genesis_path(), "w") as f:
        json.dump(genesis, f, indent=2)
    node.start()
    node.wait_for_height(2)
    bank, locks = BankLoad(node), LocksLoad(node)
    bank.start()
    locks.start()
    t0 = time.monotonic()
    while node.height() < blocks:
        if bank.errors or locks.errors:
            raise E2EError(f"workload failed: {bank.errors + locks.errors}")
        node.ensure_alive()
        time.sleep(1)
    bank.stop_event.set()
    locks.stop_event.set()
    bank.join(60)
    locks.join(120)
    if bank.errors or locks.errors:
        raise E2EError(f"workload failed: {bank.errors + locks.errors}")
    node.wait_for_height(node.height() + 3)  # the last accepted txs land
    log(f"workload done in {time.monotonic() - t0:.0f}s: bank {bank.accepted} accepted, refused "
        f"{bank.refused}; locks CLI {locks.sent} in blocks, {locks.unsent} not sent")
    node.cometbft.terminate()
    node.stop_kairosd_cleanly()

    # Frozen: OLD again on its own data, CometBFT unable to add blocks.
    freeze(node)
    node.start_kairosd()
    node.start_cometbft()
    wait_rpc(node, 60)
    n = node.height()
    time.sleep(2)
    if node.height() != n:
        raise E2EError(f"the frozen chain moved from {n} to {node.height()}")
    info = node.abci_info()
    if int(info.get("last_block_height", 0)) != n:
        raise E2EError(f"OLD's abci_info is at {info.get('last_block_height')}, the store at {n}")
    headers, kinds = {}, {}
    for h in range(1, n + 1):
        block = node.block(h)
        headers[h - 1] = block["header"]["app_hash"]
        txs = [base64.b64decode(t) for t in block["data"].get("txs") or []]
        results = node.rpc("block_results", height=h).get("txs_results") or []
        if len(results) != len(txs):
            raise E2EError(f"block {h}: {len(txs)} txs, {len(results)} results")
        for raw, res in zip(txs, results):
            k = kinds.setdefault(msg_kinds(raw), {})
            code = (f"{res.get('codespace') or 'sdk'} {res.get('code', 0)}"
                    if res.get("code", 0) else "ok")
            k[code] = k.get(code, 0) + 1
    headers[n] = harness.b64_to_hex(info.get("last_block_app_hash"))
    old_log = node.proc("kairosd.1").text()
    old_counts = committed_counts(old_log)
    logged = {**harness.committed_hashes(old_log), 0: genesis_hash(old_log)}
    for h in range(0, n + 1):  # OLD's own log agrees with the chain it made
        if logged.get(h) != headers[h]:
            raise E2EError(f"height {h}: OLD logged {logged.get(h)}, the chain has {headers[h]}")
    node.cometbft.terminate()
    node.stop_kairosd_cleanly()
    log(f"recorded heights 0..{n}; final app hash {headers[n]}")
    return n, headers, old_counts, kinds, info


def replay(node, n, new):
    """NEW on an empty home under the kept CometBFT home; returns (replayed hashes by height,
    CometBFT's, NEW's counts, NEW's abci_info or None, the error if CometBFT stopped)."""
    harness.KAIROSD = new
    node.reset_kairosd_home()
    kairosd = node.start_kairosd()
    if "waiting for InitChain" not in kairosd.text():
        raise E2EError(f"NEW did not start empty:\n{kairosd.tail(20)}")
    node.start_cometbft()
    t0 = time.monotonic()
    info, failure = None, None
    try:
        wait_rpc(node, 60 + n)
        info = node.abci_info()
        log(f"handshake and replay of {n} blocks took {time.monotonic() - t0:.1f}s")
    except E2EError as e:  # CometBFT panicked on a mismatch
        failure = str(e)
        log(f"CometBFT stopped during the replay: {failure.splitlines()[0]}")
    cmt = node.cometbft.text()
    if not re.search(rf"ABCI Replay Blocks.*appHeight=0 .*storeHeight={n}\b", cmt):
        raise E2EError(f"CometBFT did not log a replay from app height 0 to {n}:\n"
                       f"{node.cometbft.tail(30)}")
    text = kairosd.text()
    got = {**harness.committed_hashes(text), 0: genesis_hash(text)}
    panic = next((ln for ln in cmt.splitlines() if "AppHash" in ln and "match" in ln), None)
    return got, executed_hashes(cmt), committed_counts(text), info, panic or failure


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: replay_check.py OLD_KAIROSD NEW_KAIROSD [BLOCKS]")
    old, new = (os.path.abspath(p) for p in sys.argv[1:3])
    blocks = int(sys.argv[3]) if len(sys.argv) == 4 else 200
    for b in (old, new):
        if not os.access(b, os.X_OK):
            sys.exit(f"{b} is not an executable")
    harness.KAIROSD = old
    accounts = {u: COINS for u in LOCK_USERS}
    with harness.Node("replay", kairos_log_level="info", accounts=accounts,
                      app_mempool=False) as node:
        for name in BANK_SENDERS:
            node.add_local_key(name)
            node.add_genesis_account(name, COINS)
        for name in RECIPIENTS:
            node.add_local_key(name)
        n, want, old_counts, kinds, old_info = record(node, blocks)
        got, executed, new_counts, new_info, failure = replay(node, n, new)
        node.stop_all()

    print(f"\nOLD {old}\nNEW {new}\nCometBFT {harness.COMETBFT}; seed {SEED}\n")
    different = 0
    for h in range(0, n + 1):
        what = "genesis (InitChain)" if h == 0 else (
            "block %d: %d txs (%d failed)" % ((h,) + old_counts.get(h, (-1, -1))))
        seen = {got.get(h)} | ({executed.get(h)} if h else set())
        same = seen == {want[h]} and (h == 0 or new_counts.get(h) == old_counts.get(h))
        different += not same
        if same:
            print(f"height {h:4d} {what}: equal {want[h]}")
        else:
            print(f"height {h:4d} {what}: DIFFERENT recorded {want[h]}, NEW logged "
                  f"{got.get(h)} {new_counts.get(h)}, CometBFT executed {executed.get(h)}")
    keys = ("last_block_height", "last_block_app_hash")
    info_same = new_info is not None and all(new_info.get(k) == old_info.get(k) for k in keys)
    print(f"\nabci_info OLD: height {old_info.get('last_block_height')} app hash "
          f"{harness.b64_to_hex(old_info.get('last_block_app_hash'))} ({old_info.get('version')})")
    if new_info is None:
        print("abci_info NEW: none (CometBFT did not finish the handshake)")
    else:
        print(f"abci_info NEW: height {new_info.get('last_block_height')} app hash "
              f"{harness.b64_to_hex(new_info.get('last_block_app_hash'))} "
              f"({new_info.get('version')}): {'equal' if info_same else 'DIFFERENT'}")
    total = sum(sum(c.values()) for c in kinds.values())
    print(f"\n{total} txs in {n} blocks, by kind and result:")
    for kind in sorted(kinds):
        print(f"  {kind}: " + ", ".join(f"{c} {code}" for code, c in sorted(kinds[kind].items())))
    if failure:
        print(f"\nCometBFT stopped the replay: {failure.splitlines()[0][:300]}")
    ok = different == 0 and info_same
    print(f"\n{'SAME' if ok else 'DIFFERENT'}: {n + 1 - different} of {n + 1} heights (genesis and "
          f"blocks 1..{n}) equal; recorded final app hash {want[n]}")
    return 0 if ok else 1


if __name__ == "__main__":
    # A SIGTERM unwinds through the `with Node` block, which stops every process it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        sys.exit(main())
    except (E2EError, harness.RpcError, subprocess.SubprocessError) as e:
        print(f"replay_check: setup failed: {e}", file=sys.stderr)
        sys.exit(2)
