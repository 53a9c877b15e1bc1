"""A 4-validator localnet (scripts/localnet.sh) for one test, as a context manager: a fresh temp
KAIROS_LOCALNET_DIR on a free base port, started on entry; on exit stopped (every process killed
even if the stop fails), kairosd logs checked for sanitizer reports and for a clean last stop,
the logs printed on failure, and the directory reset (KAIROS_E2E_KEEP=1 keeps it).

    with LocalnetCluster("crash") as net:
        net.nodes[0].wait_for_height(2)        # harness.RunningNode per validator
        net.kill_node(2); net.start_node(2)    # localnet.sh kill-node / start-node
        net.add_node()                         # localnet.sh add-node: node4, a full node
        net.bench_load_argv(...)               # kairosd bench load against it

Also `load_key(node, name)`, which makes a localnet keyring key usable by node.build_send.
"""

import base64
import os
import shutil
import subprocess
import tempfile

import harness
from harness import check, log
from test_localnet import NODES, PORTS_PER_NODE, alive, dump_logs, localnet, pids


class LocalnetCluster:
    def __init__(self, name, room=NODES):
        """room: how many nodes the ports are reserved for (add_node needs more than 4)."""
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix=f"kairos-e2e-localnet-{name}-")
        self.dir = os.path.join(self.tmp, "net")
        self.room = room
        self.base = harness.free_port_run(room * PORTS_PER_NODE)
        self.env = dict(os.environ, KAIROS_LOCALNET_DIR=self.dir,
                        KAIROS_LOCALNET_PORT=str(self.base), KAIROSD=harness.KAIROSD,
                        COMETBFT=harness.COMETBFT,
                        KAIROS_KEYRING_PASSPHRASE=harness.KEYRING_PASSPHRASE)
        self.keyring = os.path.join(self.dir, "keyring")
        self.nodes = [harness.RunningNode(f"node{i}", self.rpc_port(i), self.keyring)
                      for i in range(NODES)]
        self.seen_pids = {}  # every pid a pid file ever held: none may outlive the test

    def rpc_port(self, i):
        return self.base + PORTS_PER_NODE * i + 1

    def url(self, i):
        return f"http://127.0.0.1:{self.rpc_port(i)}"

    def run(self, *args, expect_rc=0, timeout=120):
        return localnet(self.env, *args, expect_rc=expect_rc, timeout=timeout)

    def _note_pids(self):
        if os.path.isdir(os.path.join(self.dir, "pids")):
            self.seen_pids.update({f"{k}@{v}": v for k, v in pids(self.dir).items()})

    def __enter__(self):
        log(f"localnet {self.name} in {self.dir}, ports "
            f"{self.base}..{self.base + self.room * PORTS_PER_NODE - 1}")
        try:
            log(self.run("start").rstrip())
            self._note_pids()
        except BaseException:
            self.__exit__(*([None] * 3), failed=True)
            raise
        return self

    def kill_node(self, i):
        """kill -9 of node i's kairosd and CometBFT (localnet.sh kill-node)."""
        self._note_pids()
        log(self.run("kill-node", str(i)).rstrip())

    def start_node(self, i):
        log(self.run("start-node", str(i)).rstrip())
        self._note_pids()

    def add_node(self):
        """localnet.sh add-node: one more node (a full node with a new consensus key), started;
        returns its RunningNode (also appended to self.nodes)."""
        i = len(self.nodes)
        harness.check(i < self.room, f"ports reserved for {self.room} nodes, not {i + 1}")
        log(self.run("add-node", timeout=180).rstrip())
        self._note_pids()
        node = harness.RunningNode(f"node{i}", self.rpc_port(i), self.keyring)
        self.nodes.append(node)
        return node

    def bench_load_argv(self, *args):
        """`kairosd --home <keyring> bench load ARGS` (the env carries the passphrase)."""
        return [harness.KAIROSD, "--home", self.keyring, "bench", "load", *args]

    def __exit__(self, exc_type, exc, tb, failed=None):
        failed = exc_type is not None if failed is None else failed
        if failed and os.path.isdir(self.dir):
            dump_logs(self.dir)
        self._note_pids()
        try:
            out = self.run("stop", timeout=180)
            log(out.rstrip())
        finally:
            still = {name: pid for name, pid in self.seen_pids.items() if alive(pid)}
            for pid in still.values():  # never leave them behind, even after a failed stop
                os.kill(pid, 9)
        check(not still, f"alive after localnet.sh stop: {still}")
        for i in range(len(self.nodes)):
            path = os.path.join(self.dir, "logs", f"kairosd{i}.log")
            if not os.path.exists(path):
                continue
            with open(path, errors="replace") as f:
                text = f.read()
            for pat in harness.SANITIZER_PATTERNS:
                check(pat not in text, f"kairosd{i}.log has a sanitizer report ({pat!r})")
            if not failed:
                last_run = text.rsplit("ABCI server listening", 1)[-1]
                check("stopped cleanly" in last_run, f"kairosd{i} did not stop cleanly")
        if harness.KEEP:
            log(f"kept {self.dir}")
        else:
            self.run("reset")
            check(not os.path.exists(self.dir), f"reset left {self.dir}")
            shutil.rmtree(self.tmp)
        return False


def load_key(node, name):
    """Fills node.keys[name] from `kairosd keys show NAME -o json` in the node's keyring, so that
    node.build_send / node.private_key / node.address accept the name."""
    out = node.cli("keys", "show", name, "--output", "json").json()
    node.keys[name] = {"address": out["address"], "mnemonic": None,
                       "pub_key": base64.b64decode(out["pub_key"]["key"])}
    return out["address"]


def wait_file_text(path, text, timeout, proc):
    """Waits until the file at `path` contains `text` while `proc` (a Popen) runs."""
    def found():
        if proc.poll() is not None:
            with open(path, errors="replace") as f:
                raise harness.E2EError(f"{' '.join(proc.args)} exited {proc.returncode} before "
                                       f"printing {text!r}:\n{f.read()}")
        with open(path, errors="replace") as f:
            return text in f.read()
    harness.poll(found, timeout, f"{text!r} in {path}")


def run_bench(net, args, timeout=300):
    """Runs `kairosd bench load ARGS --output json` to the end; returns its JSON."""
    p = subprocess.run(net.bench_load_argv(*args, "--output", "json"), env=net.env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    check(p.returncode == 0, f"bench load exited {p.returncode}:\nstdout: {p.stdout}\n"
                             f"stderr: {p.stderr}")
    return harness.Completed(p.args, p).json()
