"""Shared helpers for the Kairos end-to-end tests (stdlib only).

A `Node` is one kairosd and (optionally) one CometBFT validator in a fresh temp directory, on free
loopback ports picked at run time. The CometBFT flavour: v0.38.25 with its own (flood) mempool by
default; CometBFT v0.40.0 with `mempool.type = "app"` (kairosd keeps the only mempool) with
`Node(app_mempool=True)`, or for every Node of a run with KAIROS_E2E_APP_MEMPOOL=1, which is how
ctest registers the same script a second time (e2e.app_mempool.*). Every process it starts is stopped when the `with`
block ends, even on failure (and the kernel kills them if this Python process dies: PDEATHSIG).
On failure the tails of every log are printed. KAIROS_E2E_KEEP=1 keeps the temp directory.

Binaries come from the environment (set by ctest): KAIROSD, COMETBFT, COMETBFT_APP_MEMPOOL,
ABCI_CLI, ICS23_VERIFY. When unset they default to build/test/app/kairosd,
.tools/bin/{cometbft,abci-cli,ics23-verify} and .tools/cometbft-v0.40.0/cometbft in this
repository.

Accounts: `Node(accounts={"alice": "1000000000stake", "carol": None})` creates each key with
`kairosd keys add` in kairosd's home (the keyring passphrase comes from KAIROS_KEYRING_PASSPHRASE)
and funds those with coins in CometBFT's genesis with `kairosd genesis add-account`, before
anything starts. Txs go through the kairosd CLI (`node.send`: `kairosd tx send ... --output json`)
or, when a test needs exact control of a field (an unordered timeout, a sequence), through the
independent builder in cosmos_tx.py (`node.build_send`). Keys that only the test needs (many
funded senders) can be made in Python with `node.add_local_key`, which skips the CLI.

Mempool scenarios: `node.broadcast_many` sends many raw txs over keep-alive connections from a
thread pool, `node.wait_tx` gives a tx's block height and position, `node.block_txs` a block's
txs in order, `node.mempool_stats` the app mempool's counters (/kairos.mempool.v1.Query/Stats,
decoded here), `node.set_consensus_params` edits genesis consensus params (e.g. block.max_gas)
and `node.configure_cometbft` / `node.configure_kairosd` set config.toml keys before a start.

Tests are plain functions passed to `main()`, which runs them, prints a summary and exits non-zero
if any failed.
"""

import base64
import concurrent.futures
import ctypes
import fcntl
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KAIROSD = os.environ.get("KAIROSD") or os.path.join(REPO, "build", "test", "app", "kairosd")
COMETBFT = os.environ.get("COMETBFT") or os.path.join(REPO, ".tools", "bin", "cometbft")
ABCI_CLI = os.environ.get("ABCI_CLI") or os.path.join(REPO, ".tools", "bin", "abci-cli")
ICS23_VERIFY = (os.environ.get("ICS23_VERIFY") or
                os.path.join(REPO, ".tools", "bin", "ics23-verify"))
# CometBFT v0.40.0 for the app-mempool mode (scripts/setup.sh installs it there).
COMETBFT_APP_MEMPOOL = (os.environ.get("COMETBFT_APP_MEMPOOL") or
                        os.path.join(REPO, ".tools", "cometbft-v0.40.0", "cometbft"))
# The default flavour of every Node in this run (ctest sets it for the e2e.app_mempool.* tests).
APP_MEMPOOL = os.environ.get("KAIROS_E2E_APP_MEMPOOL") == "1"
KEEP = os.environ.get("KAIROS_E2E_KEEP") == "1"

sys.path.insert(0, os.path.join(REPO, "scripts"))
import cometbft_config  # noqa: E402  (scripts/cometbft_config.py: edits a config.toml in place)

import cosmos_tx  # noqa: E402  (test/e2e/cosmos_tx.py: an independent tx builder)

# Sanitizer reports in kairosd's output fail the test even if everything else passed.
SANITIZER_PATTERNS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                      "WARNING: ThreadSanitizer")

# Short consensus timeouts: a block every ~0.3 s on one validator.
CONSENSUS_TIMEOUTS = {
    "timeout_propose": "500ms",
    "timeout_propose_delta": "100ms",
    "timeout_prevote": "100ms",
    "timeout_prevote_delta": "100ms",
    "timeout_precommit": "100ms",
    "timeout_precommit_delta": "100ms",
    "timeout_commit": "200ms",
}


DENOM = "stake"
GENESIS_COINS = "1000000000stake"
FEES = "2000stake"  # the fee every test tx pays (no min gas price is set: any fee is enough)
KEYRING_PASSPHRASE = "kairos-e2e-passphrase"
# The SDK's fee collector module account: the first 20 bytes of SHA-256("fee_collector").
FEE_COLLECTOR = cosmos_tx.bech32_encode("kairos", hashlib.sha256(b"fee_collector").digest()[:20])

# Cosmos SDK codes (codespace sdk) the tests expect.
CODE_TX_DECODE = 2
CODE_INSUFFICIENT_FUNDS = 5  # also a tx its payer cannot cover after its pooled txs
CODE_INSUFFICIENT_FEE = 13  # also an underpriced replacement in the app mempool
CODE_INVALID_REQUEST = 18
CODE_TX_IN_MEMPOOL = 19
CODE_MEMPOOL_FULL = 20
CODE_TX_TOO_LARGE = 21
CODE_WRONG_SEQUENCE = 32

# What CometBFT itself answers (a JSON-RPC error, the app never sees the tx) when a tx it has seen
# is broadcast again: v0.38's flood mempool cache (mempool/errors.go ErrTxInCache), v0.40's app
# mempool seen cache (mempool/app_mempool.go ErrSeenTx).
CACHE_ERROR_FLOOD = "tx already exists in cache"
CACHE_ERROR_APP = "tx already seen"


def tx_hash(tx):
    """The hash CometBFT indexes a tx under: SHA-256 of its bytes, upper-case hex."""
    return hashlib.sha256(tx).hexdigest().upper()


class E2EError(AssertionError):
    """A failed expectation; the message says what was observed."""


class RpcError(Exception):
    """CometBFT answered with a JSON-RPC error."""

    def __init__(self, method, error):
        super().__init__(f"{method}: RPC error {json.dumps(error)}")
        self.error = error


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def check(cond, msg):
    if not cond:
        raise E2EError(msg)


def poll(fn, timeout, what, interval=0.2, alive=None):
    """Calls fn() until it returns a truthy value (returned) or `timeout` seconds pass.

    `alive`, if given, is called each round and may raise to stop early (a dead process)."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if alive is not None:
            alive()
        if time.monotonic() >= deadline:
            raise E2EError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def _ephemeral_low():
    """The first port of the kernel's ephemeral range: outgoing connections take their local
    port from there, so a port picked below it cannot be taken by one between check and bind."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# Ports this process picked, and the file whose byte ranges reserve them against other e2e tests
# running at the same time (ctest runs the e2e tests that are not RUN_SERIAL two at a time): byte
# p of the file stands for port p, held by a POSIX record lock (fcntl.lockf) until this process
# exits. The lock alone does not guard against this process's own picks (record locks never
# conflict within one process), hence the set. The file stays open for the process's life: closing
# any descriptor of it would drop every lock.
_ports_reserved_here = set()
_ports_lock_file = None


def _reserve_ports(base, n):
    """Reserves base..base+n-1 for this process unless this or another e2e process holds any of
    them. True if it did."""
    global _ports_lock_file
    if not _ports_reserved_here.isdisjoint(range(base, base + n)):
        return False
    if _ports_lock_file is None:
        _ports_lock_file = open(os.path.join(tempfile.gettempdir(), "kairos-e2e-ports.lock"), "a")
    try:
        fcntl.lockf(_ports_lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB, n, base, os.SEEK_SET)
    except OSError:  # another e2e test holds some of them
        return False
    _ports_reserved_here.update(range(base, base + n))
    return True


def _release_ports(base, n):
    fcntl.lockf(_ports_lock_file, fcntl.LOCK_UN, n, base, os.SEEK_SET)
    _ports_reserved_here.difference_update(range(base, base + n))


def free_port_run(n, low=10000):
    """The first of n consecutive TCP ports, all free on 127.0.0.1 and all below the kernel's
    ephemeral range (a random start, checked by binding every port), and reserved for this
    process: no other pick of this process or of another e2e test running at the same time gets
    any of them, even before the processes they are meant for bind them."""
    import random
    high = _ephemeral_low() - n
    if high <= low:  # an odd ip_local_port_range: fall back to the whole unprivileged range
        high = 65536 - n
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(low, high)
        if not _reserve_ports(base, n):
            continue
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            _release_ports(base, n)
            continue
        finally:
            for s in socks:
                s.close()
    raise E2EError(f"no {n} consecutive free ports found on 127.0.0.1 in {low}..{high + n - 1}")


def free_ports(n):
    """n free TCP ports on 127.0.0.1 below the ephemeral range (see free_port_run)."""
    base = free_port_run(n)
    return list(range(base, base + n))


def children(pid):
    """{pid: command name} of the live direct children of `pid` (from /proc)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out[int(entry)] = name
    return out


def alive(pid):
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


def _die_with_parent():
    """preexec_fn: the child gets SIGKILL when this Python process dies (Linux prctl)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except Exception:  # not Linux: teardown still stops the process
        pass


def run(argv, timeout=60, expect_rc=0):
    """Runs a short command; returns its combined stdout+stderr. Raises unless rc == expect_rc."""
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout, text=True, errors="replace")
    if expect_rc is not None and p.returncode != expect_rc:
        raise E2EError(f"{' '.join(argv)} exited {p.returncode} (expected {expect_rc}):\n"
                       f"{p.stdout}")
    return p.stdout


class RpcConnection:
    """One keep-alive HTTP/1.1 connection to CometBFT's RPC (one per thread: not thread-safe).

    call() sends a URI request (GET /method?k=v, values sent as given) and returns the JSON-RPC
    `result`, or raises RpcError. A connection the server closed while idle is reopened once."""

    def __init__(self, port, timeout=30):
        self.port, self.timeout = port, timeout
        self.conn = None

    def call(self, method, **params):
        query = "&".join(f"{k}={urllib.parse.quote(str(v), safe='')}" for k, v in params.items())
        path = f"/{method}" + (f"?{query}" if query else "")
        for attempt in (1, 2):
            fresh = self.conn is None
            if fresh:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=self.timeout)
            try:
                self.conn.request("GET", path)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if fresh or attempt == 2:  # only a reused idle connection earns a retry
                    raise
        body = json.loads(raw or b"{}")
        if body.get("error"):
            raise RpcError(method, body["error"])
        return body["result"]

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Completed:
    """A finished command: rc, stdout and stderr apart (stdout carries --output json)."""

    def __init__(self, argv, p):
        self.argv, self.rc, self.out, self.err = argv, p.returncode, p.stdout, p.stderr

    def json(self):
        lines = [ln for ln in self.out.splitlines() if ln.strip()]
        try:
            return json.loads(lines[-1])
        except (IndexError, ValueError):
            raise E2EError(f"{' '.join(self.argv)} printed no JSON on stdout:\n"
                           f"stdout: {self.out}\nstderr: {self.err}") from None


def run_split(argv, timeout=60, expect_rc=0, env=None, input=None):
    """Runs a short command with stdout and stderr apart; returns a Completed. Raises unless
    rc == expect_rc (None: any)."""
    p = subprocess.run(argv, input=input, stdin=None if input is not None else subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       text=True, errors="replace", env=env)
    done = Completed(argv, p)
    if expect_rc is not None and p.returncode != expect_rc:
        raise E2EError(f"{' '.join(argv)} exited {p.returncode} (expected {expect_rc}):\n"
                       f"stdout: {p.stdout}\nstderr: {p.stderr}")
    return done


def run_json_script(argv, what, timeout=180):
    """Runs a client script (the Node.js ones of test/e2e/cosmjs and test/e2e/rest_clients) that
    prints one JSON object on its last stdout line, {"error": ...} when it failed; returns the
    object. Raises when it exited non-zero, printed no JSON or reported an error."""
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, text=True, errors="replace")
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    try:
        out = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise E2EError(f"{what} exited {p.returncode} without JSON:\n"
                       f"stdout: {p.stdout}\nstderr: {p.stderr}") from None
    check(p.returncode == 0 and isinstance(out, dict) and "error" not in out,
          f"{what} exited {p.returncode}: {out.get('error', out) if isinstance(out, dict) else out}"
          f"\nstderr: {p.stderr}")
    return out


def set_toml_keys(path, values):
    """Sets keys ("section.name": raw value, as scripts/cometbft_config.py takes them) in a
    config.toml (CometBFT's or kairosd's). A key missing from the file fails loudly instead of
    being ignored."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        text = cometbft_config.set_keys(text, values)
    except KeyError as e:
        raise E2EError(f"{path}: {e.args[0]}") from None
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def ics23_verify(items):
    """Checks proofs with ICS23_VERIFY (the Go ICS-23 reference verifier, test/ics23/verify).

    items: dicts {"name", "root", "key", "value" (None asks for non-membership), "proof",
    "expect"}, byte strings as bytes. Each must verify exactly when its "expect" is true; fails
    unless the verifier exits 0 having passed every item. Returns the number verified."""
    hexed = lambda b: b if b is None else b.hex()  # noqa: E731
    lines = [json.dumps({"name": it["name"], "root": hexed(it["root"]), "key": hexed(it["key"]),
                         "value": hexed(it["value"]), "proof": hexed(it["proof"]),
                         "expect": bool(it["expect"])}) for it in items]
    check(os.access(ICS23_VERIFY, os.X_OK),
          f"{ICS23_VERIFY} is not an executable (run scripts/setup.sh, or set ICS23_VERIFY)")
    p = subprocess.run([ICS23_VERIFY], input="".join(line + "\n" for line in lines),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60, text=True)
    last = (p.stdout.strip().splitlines() or [""])[-1]
    m = re.fullmatch(r"(\d+) passed, (\d+) failed", last)
    check(p.returncode == 0 and m and int(m.group(1)) == len(items) and m.group(2) == "0",
          f"ics23-verify exited {p.returncode} on {len(items)} proofs:\n{p.stdout}")
    log(f"ics23-verify: {last} ({sum(1 for it in items if it['expect'])} must verify, "
        f"{sum(1 for it in items if not it['expect'])} must not)")
    return len(items)


def b64_to_hex(b64):
    return base64.b64decode(b64 or "").hex().upper()


class Proc:
    """A long-running child process whose stdout and stderr go to one log file."""

    def __init__(self, name, argv, log_path):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._log,
                                      stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        self.pid = self.popen.pid
        log(f"started {name} (pid {self.pid}), log {log_path}")

    def alive(self):
        return self.popen.poll() is None

    @property
    def returncode(self):
        return self.popen.poll()

    def wait_exit(self, timeout):
        """The exit code, or None if still running after `timeout` seconds."""
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill9(self):
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
        rc = self.popen.wait()
        self._log.close()
        log(f"killed {self.name} with SIGKILL (rc {rc})")
        return rc

    def terminate(self, timeout=15):
        """SIGTERM, wait up to `timeout` s, then SIGKILL. Returns (exit code, SIGKILL needed)."""
        forced = False
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
            if self.wait_exit(timeout) is None:
                log(f"{self.name} ignored SIGTERM for {timeout}s: SIGKILL")
                os.kill(self.pid, signal.SIGKILL)
                forced = True
        rc = self.popen.wait()
        self._log.close()
        return rc, forced

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def tail(self, n=60):
        return "\n".join(self.text().splitlines()[-n:])

    def ensure_alive(self):
        if not self.alive():
            raise E2EError(f"{self.name} exited unexpectedly with code {self.returncode}; "
                           f"log tail:\n{self.tail(30)}")


class Node:
    """One kairosd plus (with_cometbft) one CometBFT validator, in a fresh temp directory."""

    def __init__(self, name, with_cometbft=True, kairos_log_level="debug", accounts=None,
                 app_mempool=None):
        """accounts: {key name: genesis coins, or None for a key without an account}.
        app_mempool: True runs CometBFT v0.40.0 with mempool.type = "app" (COMETBFT_APP_MEMPOOL),
        False v0.38.25 with its flood mempool (COMETBFT); None takes KAIROS_E2E_APP_MEMPOOL."""
        self.name = name
        self.with_cometbft = with_cometbft
        self.app_mempool = APP_MEMPOOL if app_mempool is None else bool(app_mempool)
        self.cometbft_bin = COMETBFT_APP_MEMPOOL if self.app_mempool else COMETBFT
        # What CometBFT answers to a broadcast of a tx it has seen (see CACHE_ERROR_*).
        self.cache_error = CACHE_ERROR_APP if self.app_mempool else CACHE_ERROR_FLOOD
        self.kairos_log_level = kairos_log_level
        self.accounts = dict(accounts or {})
        self.keys = {}  # key name -> {"address", "mnemonic", "pub_key" (bytes)}
        self._private_keys = {}
        self._chain_id = None
        self.dir = tempfile.mkdtemp(prefix=f"kairos-e2e-{name}-")
        self.kairos_home = os.path.join(self.dir, "kairos")
        self.cmt_home = os.path.join(self.dir, "cometbft")
        (self.abci_port, self.rpc_port, self.p2p_port, self.grpc_port,
         self.api_port) = free_ports(5)
        self.abci_address = f"tcp://127.0.0.1:{self.abci_port}"
        self.kairosd = None
        self.cometbft = None
        self.procs = []  # every process ever started, in order

    # ---- setup and teardown

    def __enter__(self):
        flavour = ("CometBFT v0.40 app mempool" if self.app_mempool else
                   "CometBFT v0.38 flood mempool")
        log(f"node {self.name}: dir {self.dir}, abci {self.abci_port}, rpc {self.rpc_port}, "
            f"p2p {self.p2p_port}" + (f", {flavour}" if self.with_cometbft else ""))
        for tool in (KAIROSD, self.cometbft_bin) if self.with_cometbft else (KAIROSD,):
            check(os.access(tool, os.X_OK), f"{tool} is not an executable (run scripts/setup.sh "
                                            f"and scripts/build.sh test, or set the env vars)")
        self._init_kairosd()
        if self.with_cometbft:
            run([self.cometbft_bin, "init", "--home", self.cmt_home])
            self._configure_cometbft()
        for name, coins in self.accounts.items():
            self.add_key(name)
            if coins:
                self.add_genesis_account(name, coins)
        return self

    def _init_kairosd(self):
        run([KAIROSD, "init", "--home", self.kairos_home])
        # Ports of this node's own: several nodes (and a developer's node) share the machine.
        self.configure_kairosd({"grpc.address": f'"127.0.0.1:{self.grpc_port}"',
                                "api.address": f'"127.0.0.1:{self.api_port}"',
                                "query.cometbft_rpc": f'"http://127.0.0.1:{self.rpc_port}"'})

    def configure_kairosd(self, values):
        """Sets keys ("section.name": raw value) in kairosd's config.toml; takes effect at the next
        start_kairosd."""
        set_toml_keys(os.path.join(self.kairos_home, "config.toml"), values)

    def reset_kairosd_home(self):
        """Moves kairosd's home (config and data) aside and writes a fresh one with `kairosd init`:
        the next kairosd starts from an empty store, on the same ABCI address, with the default
        config. REQUIRES: kairosd is stopped. Returns where the old home went."""
        check(self.kairosd is None or not self.kairosd.alive(), "kairosd is still running")
        n = 1
        while os.path.exists(f"{self.kairos_home}.old{n}"):
            n += 1
        moved = f"{self.kairos_home}.old{n}"
        shutil.move(self.kairos_home, moved)
        self._init_kairosd()
        keyring = os.path.join(moved, "keyring.json")
        if os.path.exists(keyring):  # the client's keys are not the node's state: keep them
            shutil.copy2(keyring, os.path.join(self.kairos_home, "keyring.json"))
        log(f"moved kairosd's home to {moved}; fresh home {self.kairos_home}")
        return moved

    def _configure_cometbft(self):
        values = {
            "proxy_app": self.abci_address,
            "abci": "socket",
            "moniker": f"kairos-e2e-{self.name}",
            "rpc.laddr": f"tcp://127.0.0.1:{self.rpc_port}",
            "rpc.grpc_laddr": "",
            "rpc.pprof_laddr": "",
            "p2p.laddr": f"tcp://127.0.0.1:{self.p2p_port}",
            "p2p.external_address": "",
            "p2p.seeds": "",
            "p2p.persistent_peers": "",
            "p2p.addr_book_strict": "false",
            "p2p.allow_duplicate_ip": "true",
            "p2p.pex": "false",
            "instrumentation.prometheus": "false",
        }
        values.update({f"consensus.{k}": v for k, v in CONSENSUS_TIMEOUTS.items()})
        if self.app_mempool:
            # v0.40.0 config/config.go MempoolTypeApp: RPC broadcasts go to the app's CheckTx,
            # peers' txs to InsertTx; CometBFT keeps no txs, never rechecks, and asks the app for
            # txs to gossip with ReapTxs every reap_interval.
            values["mempool.type"] = "app"
        self.configure_cometbft(values)

    def configure_cometbft(self, values):
        """Sets keys ("section.name": raw value) in CometBFT's config.toml, e.g.
        {"consensus.timeout_commit": "10s"}; takes effect at the next start_cometbft."""
        check(not (self.app_mempool and values.get("consensus.create_empty_blocks") == "false"),
              "create_empty_blocks = false stalls a chain with CometBFT's app mempool (it never "
              "signals txs to consensus): this test cannot run in app-mempool mode")
        set_toml_keys(os.path.join(self.cmt_home, "config", "config.toml"), values)

    def genesis_path(self):
        return os.path.join(self.cmt_home, "config", "genesis.json")

    def set_consensus_params(self, values):
        """Sets consensus params in CometBFT's genesis.json before the chain starts, e.g.
        {"block.max_gas": 300000} (int64s are written as JSON strings, as CometBFT does). A
        param missing from the file fails loudly."""
        path = self.genesis_path()
        with open(path, encoding="utf-8") as f:
            genesis = json.load(f)
        for key, value in values.items():
            section, _, name = key.partition(".")
            params = genesis.get("consensus_params", {}).get(section)
            check(isinstance(params, dict) and name in params,
                  f"{path}: no consensus_params.{key}")
            params[name] = str(value) if isinstance(value, int) else value
        with open(path, "w", encoding="utf-8") as f:
            json.dump(genesis, f, indent=2)
        log(f"genesis consensus params: {values}")

    def genesis_chain_id(self):
        with open(self.genesis_path(), encoding="utf-8") as f:
            return json.load(f)["chain_id"]

    def genesis_account_number(self, who):
        """The account number InitChain gives `who` (app/genesis.h: the accounts of
        app_state.auth.accounts get 0, 1, ... in the order listed, then each address that only
        has a balance, in order). Known before block 1, when no Account query can answer yet."""
        with open(self.genesis_path(), encoding="utf-8") as f:
            app_state = json.load(f).get("app_state") or {}
        order = [a["address"] for a in app_state.get("auth", {}).get("accounts", [])]
        for b in app_state.get("bank", {}).get("balances", []):
            if b["address"] not in order:
                order.append(b["address"])
        address = self.address(who)
        check(address in order, f"{who} ({address}) has no account in the genesis")
        return order.index(address)

    def __exit__(self, exc_type, exc, tb):
        failed = exc_type is not None
        if failed:
            log(f"node {self.name} failed: {exc_type.__name__}: {exc}")
            self.dump_logs()
        try:
            self.stop_all()
            if not failed:
                self.check_no_sanitizer_reports()
        finally:
            if KEEP:
                log(f"node {self.name}: kept {self.dir}")
            else:
                if failed:
                    log(f"node {self.name}: removing {self.dir} (KAIROS_E2E_KEEP=1 keeps it)")
                shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def stop_all(self):
        """Stops whatever still runs: CometBFT first (so kairosd sees no more requests)."""
        for proc in sorted(self.procs, key=lambda p: not p.name.startswith("cometbft")):
            if proc.alive():
                rc, forced = proc.terminate()
                how = " after SIGKILL" if forced else ""
                log(f"stopped {proc.name} (pid {proc.pid}): rc {rc}{how}")

    def dump_logs(self, lines=60):
        for proc in self.procs:
            print(f"----- {proc.name} pid {proc.pid} ({proc.log_path}), last {lines} lines -----")
            print(proc.tail(lines))
        print("----- end of logs -----", flush=True)

    def check_no_sanitizer_reports(self):
        for proc in self.procs:
            if proc.name.startswith("kairosd"):
                text = proc.text()
                for pat in SANITIZER_PATTERNS:
                    check(pat not in text, f"{proc.log_path} has a sanitizer report ({pat!r}):\n"
                                           f"{proc.tail(80)}")

    # ---- processes

    def _spawn(self, prog, argv):
        """Starts prog; its log is <dir>/<prog>.<n>.log, n counting the starts of prog."""
        n = sum(1 for p in self.procs if p.name.startswith(prog + ".")) + 1
        proc = Proc(f"{prog}.{n}", argv, os.path.join(self.dir, f"{prog}.{n}.log"))
        self.procs.append(proc)
        return proc

    def proc(self, name):
        """A process by its log name, e.g. "kairosd.2" (the second kairosd started)."""
        found = [p for p in self.procs if p.name == name]
        check(found, f"no process {name} was started")
        return found[0]

    def start_kairosd(self, timeout=30):
        check(self.kairosd is None or not self.kairosd.alive(), "kairosd is running already")
        self.kairosd = self._spawn("kairosd", [KAIROSD, "start", "--home", self.kairos_home,
                                               "--abci-address", self.abci_address,
                                               "--log-level", self.kairos_log_level])
        listening = f"ABCI server listening on {self.abci_address}"
        poll(lambda: listening in self.kairosd.text(), timeout, f"kairosd: '{listening}'",
             alive=self.kairosd.ensure_alive)
        return self.kairosd

    def start_cometbft(self):
        check(self.with_cometbft, "this node has no CometBFT")
        check(self.cometbft is None or not self.cometbft.alive(), "cometbft is running already")
        self.cometbft = self._spawn("cometbft", [self.cometbft_bin, "start",
                                                 "--home", self.cmt_home])
        return self.cometbft

    def start(self):
        self.start_kairosd()
        self.start_cometbft()

    def ensure_alive(self):
        for proc in (self.kairosd, self.cometbft):
            if proc is not None:
                proc.ensure_alive()

    def stop_kairosd_cleanly(self, timeout=15):
        """SIGTERM to kairosd: it must exit 0 by itself and log that it stopped cleanly."""
        proc = self.kairosd
        t0 = time.monotonic()
        rc, forced = proc.terminate(timeout)
        took = time.monotonic() - t0
        check(not forced, f"kairosd did not exit within {timeout}s of SIGTERM")
        check(rc == 0, f"kairosd exited {rc} after SIGTERM (expected 0):\n{proc.tail(30)}")
        check("stopped cleanly" in proc.text(),
              f"kairosd log has no 'stopped cleanly' after SIGTERM:\n{proc.tail(30)}")
        log(f"kairosd stopped cleanly on SIGTERM in {took:.2f}s (rc 0)")
        return took

    # ---- CometBFT RPC

    def rpc(self, method, timeout=20, **params):
        """GET /<method>?k=v... ; returns the JSON-RPC `result`. Values are sent as given (quote
        strings yourself: path='"/app/height"'); connection failures are retried until `timeout`."""
        query = "&".join(f"{k}={urllib.parse.quote(str(v), safe='')}" for k, v in params.items())
        url = f"http://127.0.0.1:{self.rpc_port}/{method}" + (f"?{query}" if query else "")
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:
                    body = json.load(resp)
                break
            except urllib.error.HTTPError as e:  # CometBFT sends RPC errors with HTTP 500
                body = json.loads(e.read() or b"{}")
                break
            except (urllib.error.URLError, ConnectionError, socket.timeout) as e:
                if self.cometbft is not None:
                    self.cometbft.ensure_alive()
                if time.monotonic() >= deadline:
                    raise E2EError(f"RPC {url}: no answer within {timeout}s: {e}")
                time.sleep(0.2)
        if body.get("error"):
            raise RpcError(method, body["error"])
        return body["result"]

    def rpc_eventually(self, method, timeout=10, **params):
        """rpc() retried while CometBFT answers with an RPC error (e.g. a tx not indexed yet)."""
        last = []

        def attempt():
            try:
                return self.rpc(method, **params)
            except RpcError as e:
                last[:] = [e]
                return None

        try:
            return poll(attempt, timeout, f"RPC {method} {params}", alive=self.ensure_alive)
        except E2EError as e:
            raise E2EError(f"{e}; last answer: {last[0] if last else None}") from None

    def height(self):
        return int(self.rpc("status")["sync_info"]["latest_block_height"])

    def wait_for_height(self, h, timeout=60):
        """Polls /status until the latest block height is >= h (h >= 1); returns that height."""
        def reached():
            now = self.height()
            return now if now >= h else None

        t0 = time.monotonic()
        got = poll(reached, timeout, f"block height {h} on {self.name}", interval=0.1,
                   alive=self.ensure_alive)
        log(f"height {got} (wanted {h}) after {time.monotonic() - t0:.1f}s")
        return got

    def abci_info(self):
        return self.rpc("abci_info")["response"]

    def abci_query(self, path, data=b"", height=0, prove=False):
        """The ABCI Query response (JSON, bytes in base64) at `height` (0: the latest)."""
        return self.rpc("abci_query", path=json.dumps(path), data="0x" + data.hex(), height=height,
                        prove="true" if prove else "false")["response"]

    def block(self, h):
        return self.rpc("block", height=h)["block"]

    def broadcast_tx_commit(self, tx):
        return self.rpc("broadcast_tx_commit", timeout=30, tx="0x" + tx.hex())

    def app_hash_after(self, h):
        """The app hash after block h (hex): the app_hash in block h+1's header, which is the root
        every proof at height h commits to. Waits for block h+1."""
        self.wait_for_height(h + 1)
        return self.block(h + 1)["header"]["app_hash"]

    def check_app_hash(self):
        """Info's last_block_app_hash must equal the app_hash in the header of the next block.

        Returns Info's last_block_height."""
        info = self.abci_info()
        h = int(info.get("last_block_height", "0"))
        app_hash = b64_to_hex(info.get("last_block_app_hash"))
        header_hash = self.app_hash_after(h)
        check(header_hash == app_hash,
              f"abci_info at height {h} has app hash {app_hash}, but block {h + 1}'s header has "
              f"{header_hash}")
        log(f"app hash at height {h} = header app hash of block {h + 1} = {app_hash}")
        return h

    def chain_id(self):
        return self.rpc("status")["node_info"]["network"]

    # ---- the kairosd client CLI (keys, genesis, tx, query)

    @property
    def node_url(self):
        return f"http://127.0.0.1:{self.rpc_port}"

    def cli(self, *args, expect_rc=0, input=None, timeout=60):
        """`kairosd ARGS --home <kairos home>` with the keyring passphrase in the environment;
        returns a Completed (stdout and stderr apart)."""
        env = dict(os.environ, KAIROS_KEYRING_PASSPHRASE=KEYRING_PASSPHRASE)
        return run_split([KAIROSD, *args, "--home", self.kairos_home], timeout=timeout,
                         expect_rc=expect_rc, env=env, input=input)

    def add_key(self, name, mnemonic=None):
        """`kairosd keys add NAME -o json` (with --recover when a mnemonic is given); returns the
        key's address."""
        if mnemonic is None:
            out = self.cli("keys", "add", name, "--output", "json").json()
            mnemonic = out["mnemonic"]
        else:
            out = self.cli("keys", "add", name, "--recover", "--output", "json",
                           input=mnemonic + "\n").json()
        check(out.get("name") == name and out.get("address", "").startswith("kairos1"),
              f"keys add {name}: {out}")
        self.keys[name] = {"address": out["address"], "mnemonic": mnemonic,
                           "pub_key": base64.b64decode(out["pub_key"]["key"])}
        log(f"key {name}: {out['address']}")
        return out["address"]

    def address(self, who):
        """A key name's address (an address is returned as it is)."""
        return self.keys[who]["address"] if who in self.keys else who

    def add_local_key(self, name):
        """A key made here, not in kairosd's keyring (no CLI call): a private key derived from the
        node's directory and `name`. build_send, address and add_genesis_account take its name;
        the kairosd CLI does not know it. Returns its address."""
        check(name not in self.keys, f"key {name} exists already")
        key = hashlib.sha256(f"{self.dir}/{name}".encode()).digest()
        pub = cosmos_tx.pubkey_of(key)
        self.keys[name] = {"address": cosmos_tx.address_of_pubkey(pub), "mnemonic": None,
                           "pub_key": pub}
        self._private_keys[name] = key
        return self.keys[name]["address"]

    def add_genesis_account(self, who, coins):
        genesis = os.path.join(self.cmt_home, "config", "genesis.json")
        self.cli("genesis", "add-account", self.address(who), coins, "--genesis", genesis)
        log(f"genesis: {self.address(who)} has {coins}")

    def send(self, frm, to, amount, fees=FEES, unordered=False, timeout="60s", sequence=None,
             wait=True, expect_code=0, extra=()):
        """`kairosd tx send FROM TO AMOUNT --fees F [--unordered --timeout T] [--sequence N]
        [--wait] --output json`; returns its JSON. expect_code 0: the tx must pass CheckTx (and
        the block, with wait); another code: CheckTx must reject it with that code (exit 1)."""
        args = ["tx", "send", frm, self.address(to), amount, "--fees", fees,
                "--node", self.node_url, "--output", "json", *extra]
        if unordered:
            args += ["--unordered", "--timeout", timeout]
        if sequence is not None:
            args += ["--sequence", str(sequence)]
        if wait:
            args.append("--wait")
        done = self.cli(*args, expect_rc=0 if expect_code == 0 else 1)
        res = done.json()
        what = f"tx send {frm} -> {to} {amount}{' unordered' if unordered else ''}"
        check(res.get("code") == expect_code,
              f"{what}: CheckTx code {res.get('code')} (expected {expect_code}): {res}; "
              f"stderr: {done.err}")
        if expect_code == 0 and wait:
            check(res.get("tx_result", {}).get("code") == 0 and int(res.get("height", 0)) > 0,
                  f"{what}: not included with code 0: {res}")
            log(f"{what}: {res['txhash']} in block {res['height']}")
        elif expect_code != 0:
            check(f"code {expect_code}" in done.err,
                  f"{what}: stderr does not carry code {expect_code}: {done.err}")
            log(f"{what}: rejected with code {expect_code}: {res.get('log')}")
        return res

    def balance(self, who, denom=DENOM, height=0):
        """`kairosd query balance ADDR --denom D -o json` as an int."""
        args = ["query", "balance", self.address(who), "--denom", denom, "--node", self.node_url,
                "--output", "json"]
        if height:
            args += ["--height", str(height)]
        res = self.cli(*args).json()
        check(res["balance"]["denom"] == denom, f"balance of {who}: {res}")
        return int(res["balance"]["amount"])

    def account(self, who, expect_rc=0):
        """`kairosd query account ADDR -o json`: {"account": {...}, "height"} (or the Completed
        when expect_rc is not 0)."""
        done = self.cli("query", "account", self.address(who), "--node", self.node_url,
                        "--output", "json", expect_rc=expect_rc)
        return done.json() if expect_rc == 0 else done

    def private_key(self, name):
        """`kairosd keys export NAME --hex` (cached)."""
        if name not in self._private_keys:
            key = bytes.fromhex(self.cli("keys", "export", name, "--hex").out.strip())
            check(cosmos_tx.pubkey_of(key) == self.keys[name]["pub_key"],
                  f"the exported key of {name} does not give its public key")
            self._private_keys[name] = key
        return self._private_keys[name]

    def cached_chain_id(self):
        """The chain id, from CometBFT's genesis.json (no RPC: it works before the start)."""
        if self._chain_id is None:
            self._chain_id = self.genesis_chain_id()
        return self._chain_id

    def build_send(self, frm, to, amount, account_number=None, **kw):
        """A MsgSend signed by key `frm` with cosmos_tx.signed_send (kw: fee, gas_limit,
        sequence, memo, unordered, timeout_unix_nanos). The account number is queried unless
        given."""
        if account_number is None:
            account_number = int(self.account(frm)["account"]["account_number"])
        return cosmos_tx.signed_send(self.private_key(frm), self.cached_chain_id(),
                                     account_number, self.address(frm), self.address(to),
                                     amount, **kw)

    def broadcast_sync(self, tx):
        """broadcast_tx_sync: CheckTx's answer {code, log, codespace, hash}, or RpcError (e.g.
        "tx already exists in cache"). In both flavours the RPC sends the app a CheckTx (v0.40's
        app mempool too: InsertTx is only for txs from peers)."""
        return self.rpc("broadcast_tx_sync", tx="0x" + tx.hex())

    def check_tx(self, tx):
        """The /check_tx RPC: CometBFT sends CheckTx straight to the app, past its own cache and
        mempool, and returns the app's answer {code, log, codespace, ...}. Kairos treats it like
        any new CheckTx: an accepted tx goes into the app mempool."""
        return self.rpc("check_tx", tx="0x" + tx.hex())

    def broadcast_many(self, txs, workers=8, heights=False):
        """broadcast_tx_sync of every tx in `txs` (bytes), from `workers` threads that each keep
        one HTTP connection open; with workers=1 they go one after another in list order.

        Returns one dict per tx, in the order of `txs`: "tx", "hash", "code", "log",
        "codespace" (CheckTx's answer) or "error" (an RPC error's data, e.g. CometBFT's cache),
        and with heights=True "height_after": the latest block height /status reported right
        after that answer came back. The app then held the tx (if accepted) before every block
        above height_after + 1 was proposed."""
        local = threading.local()
        conns = []
        lock = threading.Lock()

        def conn():
            if not hasattr(local, "conn"):
                local.conn = RpcConnection(self.rpc_port)
                with lock:
                    conns.append(local.conn)
            return local.conn

        def one(tx):
            out = {"tx": tx, "hash": tx_hash(tx), "code": None, "log": "", "codespace": "",
                   "error": None}
            try:
                res = conn().call("broadcast_tx_sync", tx="0x" + tx.hex())
                out.update(code=res.get("code", 0), log=res.get("log", ""),
                           codespace=res.get("codespace", ""))
            except RpcError as e:
                out["error"] = e.error.get("data") or e.error.get("message") or str(e.error)
            if heights:
                status = conn().call("status")
                out["height_after"] = int(status["sync_info"]["latest_block_height"])
            return out

        t0 = time.monotonic()
        try:
            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
                results = list(pool.map(one, txs))
        finally:
            for c in conns:
                c.close()
        accepted = sum(1 for r in results if r["code"] == 0)
        log(f"broadcast {len(txs)} txs with {workers} connections in "
            f"{time.monotonic() - t0:.2f}s: {accepted} accepted")
        return results

    def wait_tx(self, tx, timeout=60):
        """Waits until tx (bytes, or its hash) is indexed in a block; returns {"height",
        "index" (its position in the block), "code", "log", "gas_used"}."""
        h = tx if isinstance(tx, str) else tx_hash(tx)
        found = self.rpc_eventually("tx", timeout=timeout, hash="0x" + h)
        res = found.get("tx_result", {})
        return {"height": int(found["height"]), "index": int(found.get("index", 0)),
                "code": res.get("code", 0), "log": res.get("log", ""),
                "gas_used": int(res.get("gas_used", 0))}

    def find_tx(self, tx):
        """The /tx answer for tx (bytes or hash) if it is in a block, else None (no wait)."""
        h = tx if isinstance(tx, str) else tx_hash(tx)
        try:
            return self.rpc("tx", hash="0x" + h)
        except RpcError as e:
            if "not found" in json.dumps(e.error):
                return None
            raise

    def block_txs(self, h):
        """The txs of block h, in block order, as bytes."""
        return [base64.b64decode(t) for t in (self.block(h)["data"].get("txs") or [])]

    def mempool_stats(self):
        """/kairos.mempool.v1.Query/Stats decoded (proto/kairos/mempool/v1/query.proto):
        {"size", "bytes", "senders", "parked": int, "rejections", "evictions", "expiries",
        "removals": {reason: count}}."""
        q = self.abci_query("/kairos.mempool.v1.Query/Stats")
        check(q.get("code", 0) == 0, f"mempool Stats query: {q}")
        return decode_mempool_stats(base64.b64decode(q.get("value") or ""))

    def query_account(self, who):
        """/cosmos.auth.v1beta1.Query/Account through abci_query (no CLI): the decoded account
        (cosmos_tx.decode_account_response), or None when the query fails (no such account)."""
        q = self.abci_query("/cosmos.auth.v1beta1.Query/Account",
                            data=cosmos_tx.query_account_request(self.address(who)))
        if q.get("code", 0) != 0:
            return None
        return cosmos_tx.decode_account_response(base64.b64decode(q.get("value") or ""))

    def query_balance(self, who, denom=DENOM):
        """/cosmos.bank.v1beta1.Query/Balance through abci_query (no CLI), as an int."""
        q = self.abci_query("/cosmos.bank.v1beta1.Query/Balance",
                            data=cosmos_tx.query_balance_request(self.address(who), denom))
        check(q.get("code", 0) == 0, f"balance query of {who}: {q}")
        got_denom, amount = cosmos_tx.decode_balance_response(base64.b64decode(q["value"]))
        check(got_denom == denom, f"balance query of {who}: denom {got_denom}")
        return amount

    def tx_bytes(self, tx_hash):
        """The bytes of an included tx, from /tx?hash= (retried until indexed)."""
        found = self.rpc_eventually("tx", hash="0x" + tx_hash)
        return base64.b64decode(found["tx"])


def decode_mempool_stats(value):
    """QueryStatsResponse bytes -> the dict Node.mempool_stats returns."""
    fields = cosmos_tx.decode_fields(value)
    out = {name: fields.get(num, [0])[0]
           for num, name in ((1, "size"), (2, "bytes"), (3, "senders"), (4, "parked"))}
    for num, name in ((5, "rejections"), (6, "evictions"), (7, "expiries"), (8, "removals")):
        counts = {}
        for raw in fields.get(num, []):
            rc = cosmos_tx.decode_fields(raw)
            counts[rc.get(1, [b""])[0].decode()] = rc.get(2, [0])[0]
        out[name] = counts
    return out


def now_unix_nanos():
    return time.time_ns()


def committed_state_line(text):
    """kairosd's 'loaded committed state' log line as (chain id, height, app hash), or None."""
    m = re.search(r"loaded committed state: chain (\S*) height (\d+) app hash ([0-9A-F]*)", text)
    return (m.group(1), int(m.group(2)), m.group(3)) if m else None


def committed_hashes(text):
    """{height: app hash} from kairosd's 'committed block N: ..., app hash H' log lines."""
    return {int(h): a for h, a in
            re.findall(r"committed block (\d+): \d+ txs(?: \(\d+ failed\))?, app hash ([0-9A-F]*)",
                          text)}


def last_committed_height(text):
    """The height in kairosd's last 'committed block N' log line."""
    heights = committed_hashes(text)
    check(heights, "kairosd never logged a committed block")
    return max(heights)


def check_logged_hashes_match_headers(node, *proc_names):
    """Every app hash the named kairosd runs (e.g. "kairosd.1") logged for a block h equals the
    app_hash in block h+1's header, for each h+1 the chain has. Returns how many were compared."""
    top = node.height()
    compared = 0
    for name in proc_names:
        for h, app_hash in sorted(committed_hashes(node.proc(name).text()).items()):
            if h + 1 > top:
                continue
            header = node.block(h + 1)["header"]["app_hash"]
            check(header == app_hash, f"{name} logged app hash {app_hash} for block {h}, block "
                                      f"{h + 1}'s header has {header}")
            compared += 1
    log(f"{compared} app hashes logged by {', '.join(proc_names)} match the next headers")
    return compared


def restart_and_check_resume(node, old_height, app_height_at_least=None):
    """Starts kairosd (which must load the committed state) then CometBFT, and checks the chain
    goes past `old_height` with Info's app hash matching the next header. Returns the state line.

    By default kairosd must reload at least old_height - 1: CometBFT's block store can be one
    block ahead of the app's last Commit, never more."""
    kairosd = node.start_kairosd()
    loaded = committed_state_line(kairosd.text())
    check(loaded is not None, f"kairosd did not log 'loaded committed state' on restart:\n"
                              f"{kairosd.tail(20)}")
    chain, app_height, _ = loaded
    log(f"kairosd reloaded chain {chain} at height {app_height}")
    if app_height_at_least is None:
        app_height_at_least = old_height - 1
    check(app_height >= app_height_at_least,
          f"kairosd reloaded height {app_height}, expected >= {app_height_at_least} (the chain "
          f"was at {old_height})")
    node.start_cometbft()
    node.wait_for_height(old_height + 3)
    check(node.chain_id() == chain, f"kairosd's chain id {chain} != CometBFT's {node.chain_id()}")
    h = node.check_app_hash()
    check(h > old_height, f"Info height {h} did not go past {old_height}")
    return loaded


def main(*tests):
    """Runs each test function, prints a summary, exits 1 if any failed."""
    # ctest's timeout or Ctrl-C: unwind through the `with Node` blocks so processes get stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = []
    t_all = time.monotonic()
    for test in tests:
        log(f"=== {test.__name__}")
        t0 = time.monotonic()
        try:
            test()
            ok = True
        except Exception:
            traceback.print_exc()
            ok = False
        results.append((test.__name__, ok, time.monotonic() - t0))
        log(f"=== {test.__name__}: {'PASS' if ok else 'FAIL'} ({results[-1][2]:.1f}s)")
    print("\nsummary:")
    for name, ok, secs in results:
        print(f"  {'PASS' if ok else 'FAIL'}  {name}  {secs:.1f}s")
    failed = sum(1 for _, ok, _ in results if not ok)
    print(f"{len(results) - failed}/{len(results)} passed in {time.monotonic() - t_all:.1f}s",
          flush=True)
    sys.exit(1 if failed else 0)


class RunningNode(Node):
    """A validator some other program started and stops (scripts/localnet.sh): Node's RPC and
    kairosd CLI helpers (rpc, height, wait_for_height, abci_info, abci_query, block,
    app_hash_after, send, balance, ...) against its RPC port, with `kairos_home` as the CLI's
    home (where the keyring is). No temp directory, no processes of its own."""

    def __init__(self, name, rpc_port, kairos_home):  # not Node.__init__: no temp dir, no ports
        self.name = name
        self.rpc_port = rpc_port
        self.kairos_home = kairos_home
        self.with_cometbft, self.app_mempool = True, False
        self.cometbft_bin, self.cache_error = COMETBFT, CACHE_ERROR_FLOOD
        self.kairosd = self.cometbft = None
        self.procs = []
        self.keys, self._private_keys, self._chain_id = {}, {}, None
