"""scripts/run-node.sh (command 1) as a test sees it: started in a process group of its own, as a
shell starts a foreground job, with HOME at a temp directory and non-default ports, and the test
builds of kairosd and CometBFT (KAIROSD and COMETBFT: run-node.sh then skips setup and build).

    with RunNodeScript(home, ports) as run:      # stopped (SIGKILL to its group) on the way out
        run.wait_ready()                         # until it printed "Ctrl-C stops both."
        run.printed_commands()                   # the kairosd lines it told the user to run
        run.ctrl_c()                             # SIGINT to the process group; returns the rc

Used by test_first_run.py and test_readme_flow.py.
"""

import os
import re
import signal
import subprocess
import time

import harness
from harness import alive, check, children, log

SCRIPT = os.path.join(harness.REPO, "scripts", "run-node.sh")
READY = "Ctrl-C stops both."


def script_env(home, ports=None, **extra):
    """The environment of run-node.sh and of the commands it prints: HOME=`home`, the test
    binaries, the ports (abci, rpc, p2p, and optionally grpc and api) if given, and no keyring
    passphrase (the dev chain's commands must not need one)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("KAIROS_HOME", "KAIROS_KEYRING_PASSPHRASE", "ABCI_PORT", "RPC_PORT",
                        "P2P_PORT", "DEV_ACCOUNTS", "GRPC_PORT", "API_PORT")}
    env.update(HOME=home, KAIROSD=harness.KAIROSD, COMETBFT=harness.COMETBFT)
    if ports:
        env.update(ABCI_PORT=str(ports[0]), RPC_PORT=str(ports[1]), P2P_PORT=str(ports[2]))
        if len(ports) >= 5:
            env.update(GRPC_PORT=str(ports[3]), API_PORT=str(ports[4]))
    env.update(extra)
    return env


class RunNodeScript:
    def __init__(self, name, env, args=(), cwd=None):
        self.name, self.env, self.args = name, env, list(args)
        self.cwd = cwd or env["HOME"]
        self.out_path = os.path.join(env["HOME"], f"run-node.{name}.out")
        self.proc = None
        self.node_pids = {}

    def __enter__(self):
        self._out = open(self.out_path, "wb")
        # start_new_session: its own process group, as a terminal's foreground job has; Ctrl-C
        # there sends SIGINT to the whole group.
        self.proc = subprocess.Popen(["bash", SCRIPT, *self.args], cwd=self.cwd, env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=self._out,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=harness._die_with_parent)
        log(f"run-node.sh {' '.join(self.args)} ({self.name}): pid {self.proc.pid}, output "
            f"{self.out_path}")
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            log(f"run-node.sh ({self.name}) output:\n{self.output()}")
            for log_name in ("kairosd.log", "cometbft.log"):
                path = os.path.join(self.env.get("KAIROS_HOME") or
                                    os.path.join(self.env["HOME"], ".kairos"), log_name)
                if os.path.exists(path):
                    with open(path, errors="replace") as f:
                        print(f"----- {path}, last 40 lines -----\n" +
                              "\n".join(f.read().splitlines()[-40:]))
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid in self.node_pids:  # in sessions of their own: not in the script's group
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        self._out.close()
        return False

    def output(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_ready(self, timeout=180):
        def ready():
            if READY in self.output():
                return True
            check(self.proc.poll() is None,
                  f"run-node.sh exited {self.proc.returncode} before it was ready:\n"
                  f"{self.output()}")
            return False

        harness.poll(ready, timeout, f"run-node.sh to print '{READY}'")
        self.node_pids = children(self.proc.pid)
        check(sorted(self.node_pids.values()) == ["cometbft", "kairosd"],
              f"run-node.sh's children: {self.node_pids}")
        return self.output()

    def printed_commands(self):
        """The command lines under "Send a first transfer": (the key add line or None, the tx
        send line), as printed, without their leading spaces."""
        text = self.output()
        m = re.search(r"Send a first transfer \(in another shell\):\n((?:  .*\n)+)", text)
        check(m is not None, f"run-node.sh printed no first-transfer commands:\n{text}")
        lines = [ln.strip() for ln in m.group(1).splitlines()]
        add = next((ln for ln in lines if " keys add " in ln), None)
        send = [ln for ln in lines if " tx send " in ln]
        check(len(send) == 1, f"expected one tx send line: {lines}")
        return add, send[0]

    def run_printed(self, line, timeout=90):
        """Runs one printed command line in a shell, as a user pasting it would."""
        log(f"$ {line}")
        p = subprocess.run(["bash", "-c", line], cwd=self.cwd, env=self.env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
        check(p.returncode == 0, f"`{line}` exited {p.returncode}:\nstdout: {p.stdout}\n"
                                 f"stderr: {p.stderr}")
        return p

    def _stop(self, how, sig, timeout):
        t0 = time.monotonic()
        how(sig)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise harness.E2EError(f"run-node.sh did not exit within {timeout}s of {sig.name}:\n"
                                   f"{self.output()}") from None
        for pid, name in self.node_pids.items():
            harness.poll(lambda: not alive(pid), 20, f"{name} (pid {pid}) to be gone")
        log(f"run-node.sh ({self.name}) exited {rc} {time.monotonic() - t0:.1f}s after "
            f"{sig.name}; {', '.join(self.node_pids.values())} gone")
        return rc

    def ctrl_c(self, timeout=60):
        """What Ctrl-C in a terminal does: SIGINT to the script's process group."""
        return self._stop(lambda s: os.killpg(self.proc.pid, s), signal.SIGINT, timeout)

    def sigterm(self, timeout=60):
        return self._stop(lambda s: os.kill(self.proc.pid, s), signal.SIGTERM, timeout)
