"""Shared helpers for the Kairos end-to-end tests (stdlib only).

A `Node` is one kairosd and (optionally) one CometBFT v0.38 validator in a fresh temp directory,
on free loopback ports picked at run time. Every process it starts is stopped when the `with`
block ends, even on failure (and the kernel kills them if this Python process dies: PDEATHSIG).
On failure the tails of every log are printed. KAIROS_E2E_KEEP=1 keeps the temp directory.

Binaries come from the environment (set by ctest): KAIROSD, COMETBFT, ABCI_CLI, ICS23_VERIFY. When
unset they default to build/test/app/kairosd and .tools/bin/{cometbft,abci-cli,ics23-verify} in this
repository.

Accounts: `Node(accounts={"alice": "1000000000stake", "carol": None})` creates each key with
`kairosd keys add` in kairosd's home (the keyring passphrase comes from KAIROS_KEYRING_PASSPHRASE)
and funds those with coins in CometBFT's genesis with `kairosd genesis add-account`, before
anything starts. Txs go through the kairosd CLI (`node.send`: `kairosd tx send ... --output json`)
or, when a test needs exact control of a field (an unordered timeout, a sequence), through the
independent builder in cosmos_tx.py (`node.build_send`).

Tests are plain functions passed to `main()`, which runs them, prints a summary and exits non-zero
if any failed.
"""

import base64
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
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
CODE_INVALID_REQUEST = 18
CODE_WRONG_SEQUENCE = 32


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


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (all sockets held open until every port is picked)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


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

    def __init__(self, name, with_cometbft=True, kairos_log_level="debug", accounts=None):
        """accounts: {key name: genesis coins, or None for a key without an account}."""
        self.name = name
        self.with_cometbft = with_cometbft
        self.kairos_log_level = kairos_log_level
        self.accounts = dict(accounts or {})
        self.keys = {}  # key name -> {"address", "mnemonic", "pub_key" (bytes)}
        self._private_keys = {}
        self._chain_id = None
        self.dir = tempfile.mkdtemp(prefix=f"kairos-e2e-{name}-")
        self.kairos_home = os.path.join(self.dir, "kairos")
        self.cmt_home = os.path.join(self.dir, "cometbft")
        self.abci_port, self.rpc_port, self.p2p_port = free_ports(3)
        self.abci_address = f"tcp://127.0.0.1:{self.abci_port}"
        self.kairosd = None
        self.cometbft = None
        self.procs = []  # every process ever started, in order

    # ---- setup and teardown

    def __enter__(self):
        log(f"node {self.name}: dir {self.dir}, abci {self.abci_port}, rpc {self.rpc_port}, "
            f"p2p {self.p2p_port}")
        for tool in (KAIROSD, COMETBFT) if self.with_cometbft else (KAIROSD,):
            check(os.access(tool, os.X_OK), f"{tool} is not an executable (run scripts/setup.sh "
                                            f"and scripts/build.sh test, or set the env vars)")
        self._init_kairosd()
        if self.with_cometbft:
            run([COMETBFT, "init", "--home", self.cmt_home])
            self._configure_cometbft()
        for name, coins in self.accounts.items():
            self.add_key(name)
            if coins:
                self.add_genesis_account(name, coins)
        return self

    def _init_kairosd(self):
        run([KAIROSD, "init", "--home", self.kairos_home])

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
        set_toml_keys(os.path.join(self.cmt_home, "config", "config.toml"), values)

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
        self.cometbft = self._spawn("cometbft", [COMETBFT, "start", "--home", self.cmt_home])
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

    def add_genesis_account(self, who, coins):
        genesis = os.path.join(self.cmt_home, "config", "genesis.json")
        self.cli("genesis", "add-account", who, coins, "--genesis", genesis)
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
        if self._chain_id is None:
            self._chain_id = self.chain_id()
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
        "tx already exists in cache")."""
        return self.rpc("broadcast_tx_sync", tx="0x" + tx.hex())

    def tx_bytes(self, tx_hash):
        """The bytes of an included tx, from /tx?hash= (retried until indexed)."""
        found = self.rpc_eventually("tx", hash="0x" + tx_hash)
        return base64.b64decode(found["tx"])


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
