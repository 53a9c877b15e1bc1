#!/usr/bin/env python3
"""Command 1 (scripts/run-node.sh) as a new user meets it, on an empty HOME with non-default ports,
with the test builds of kairosd and CometBFT (run_node.py).

- First run: a new chain with one funded dev account. It prints the account's name, address,
  balance and mnemonic (the mnemonic recovers that address), says the keys are for this local
  chain only, and the two commands it prints (a `keys add`, then a `tx send` from the dev
  account) work as printed, with no --node and no passphrase: the recipient has the coins.
  kairosd's InitChain log counts the one account once. `genesis add-account` on the started
  chain is refused, naming why and what to do, and the genesis is unchanged. Ctrl-C (SIGINT to
  the script's process group, as a terminal sends it) stops CometBFT, then kairosd: exit 0,
  "stopped", both processes gone, no "Did the application crash?" in CometBFT's log, "stopped
  cleanly" in kairosd's.
- Second run on the same home with another RPC port: it reuses the chain and says so, rewrites
  the port in CometBFT's config and client.toml and says so; `kairosd status` (no --node) follows
  the new port and the chain went on; SIGTERM stops it with exit 0.
- `--reset`: a new chain (another chain id) with the same dev key (reused from the keyring, same
  address), the other keys still in the keyring and unfunded; the printed commands work again
  (with a new recipient name, as alice exists). Then kairosd is killed: a real failure, so the
  script stops CometBFT, prints both logs' tails and exits 1.
"""

import os
import re
import shutil
import signal
import tempfile

import harness
from harness import check, log
from run_node import READY, RunNodeScript, alive, script_env

CRASH_MESSAGE = "Did the application crash"


def kairosd(env, *args, expect_rc=0):
    return harness.run_split([harness.KAIROSD, *args], env=env, expect_rc=expect_rc)


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def printed_dev_accounts(text):
    """{name: (address, coins, mnemonic)} from the new-chain banner."""
    out = {}
    for m in re.finditer(r"^  (dev\d+)  (kairos1\w+)  (\d+\w+)( \(reused from the keyring\))?\n"
                         r"        mnemonic: ((?:\w+ ){23}\w+)$", text, re.M):
        out[m.group(1)] = (m.group(2), m.group(3), m.group(5))
    return out


def chain_id(text):
    m = re.search(r"^chain +(\S+) at height \d+$", text, re.M)
    check(m is not None, f"no chain line in:\n{text}")
    return m.group(1)


def test_first_run_reuse_and_reset():
    home = tempfile.mkdtemp(prefix="kairos-e2e-first-run-")
    kairos_home = os.path.join(home, ".kairos")
    try:
        ports = harness.free_ports(5)
        env = script_env(home, ports)

        # ---- 1. First run: a dev chain to transact on at once.
        with RunNodeScript("first", env) as run:
            text = run.wait_ready()
            accounts = printed_dev_accounts(text)
            check(list(accounts) == ["dev0"], f"dev accounts printed: {accounts}\n{text}")
            address, coins, mnemonic = accounts["dev0"]
            check(coins == "100000000000stake", f"dev0's coins: {coins}")
            check("FOR THIS LOCAL CHAIN ONLY" in text, "no local-chain-only warning")
            check(f"dev0      {address}  balance 100000000000stake" in text,
                  f"no balance line for dev0:\n{text}")
            # The printed mnemonic is that account's: recovered elsewhere, it gives the address.
            other = os.path.join(home, "recover")
            recovered = harness.run_split(
                [harness.KAIROSD, "keys", "add", "r", "--recover", "--keyring-backend", "test",
                 "--home", other, "-o", "json"], input=mnemonic + "\n").json()
            check(recovered["address"] == address, f"mnemonic gives {recovered['address']}")

            add, send = run.printed_commands()
            check(add is not None and add.endswith("keys add alice"), f"keys add line: {add}")
            check(send.endswith("tx send dev0 alice 1000000stake --fees 2000stake --wait"),
                  f"tx send line: {send}")
            run.run_printed(add)
            sent = run.run_printed(send)
            check("tx code: 0" in sent.stdout, f"the printed tx send: {sent.stdout}")
            balance = kairosd(env, "query", "balance", "alice", "-o", "json").json()
            check(balance["balances"] == [{"denom": "stake", "amount": "1000000"}],
                  f"alice's balances: {balance}")
            log(f"the two printed commands sent 1000000stake from dev0 ({address}) to alice")

            kairos_log = read(os.path.join(kairos_home, "kairosd.log"))
            check("with 1 validator(s), 1 account(s)" in kairos_log,
                  "InitChain's log line does not count the dev account once: " +
                  str(re.findall(r"InitChain: .*", kairos_log)))

            genesis = os.path.join(kairos_home, "cometbft", "config", "genesis.json")
            before = read(genesis)
            refused = kairosd(env, "genesis", "add-account", "alice", "5stake", expect_rc=1)
            check("has started (its validator has signed blocks up to height" in refused.err and
                  "would never be funded" in refused.err and "kairosd tx send" in refused.err and
                  "scripts/run-node.sh --reset" in refused.err,
                  f"genesis add-account on a started chain: {refused.err}")
            check(read(genesis) == before, "the refused add-account changed genesis.json")

            rc = run.ctrl_c()
            out = run.output()
            check(rc == 0, f"run-node.sh exited {rc} after Ctrl-C:\n{out}")
            check(out.rstrip().endswith("stopped"), f"no 'stopped' at the end:\n{out[-800:]}")
            check("exited" not in out.split(READY)[-1],
                  f"a process exit was reported on Ctrl-C:\n{out[-800:]}")
        cmt_log = read(os.path.join(kairos_home, "cometbft.log"))
        check(CRASH_MESSAGE not in cmt_log,
              f"CometBFT logged '{CRASH_MESSAGE}': kairosd stopped before it")
        kairos_log = read(os.path.join(kairos_home, "kairosd.log"))
        check(kairos_log.rstrip().endswith("stopped cleanly"),
              f"kairosd's log does not end with 'stopped cleanly':\n{kairos_log[-600:]}")
        height_before = int(re.findall(r"committed block (\d+)", kairos_log)[-1])

        # ---- 2. Again on the same home, with another RPC port.
        new_rpc = harness.free_ports(1)[0]
        env2 = script_env(home, (ports[0], new_rpc, ports[2]))
        with RunNodeScript("again", env2) as run:
            text = run.wait_ready()
            check("reusing the chain" in text, f"no 'reusing the chain':\n{text}")
            check(f'rpc.laddr: "tcp://127.0.0.1:{ports[1]}" -> "tcp://127.0.0.1:{new_rpc}"'
                  in text, f"the RPC port change was not said:\n{text}")
            check(f'client.toml: node = "http://127.0.0.1:{new_rpc}"' in text,
                  f"client.toml's node change was not said:\n{text}")
            check(printed_dev_accounts(text) == {}, "mnemonics printed again on a reused chain")
            status = kairosd(env2, "status", "-o", "json").json()
            check(int(status["sync_info"]["latest_block_height"]) >= height_before,
                  f"status after the restart: {status['sync_info']}")
            check(status["node_info"]["other"]["rpc_address"] == f"tcp://127.0.0.1:{new_rpc}",
                  f"status came from {status['node_info']['other']}")
            add, send = run.printed_commands()
            check(add is not None and add.endswith("keys add bob"),
                  f"alice exists: the printed key should be another one: {add}")
            rc = run.sigterm()
            check(rc == 0 and run.output().rstrip().endswith("stopped"),
                  f"SIGTERM: rc {rc}\n{run.output()[-600:]}")

        # ---- 3. --reset: a new chain, the keys kept.
        with RunNodeScript("reset", env2, args=["--reset"]) as run:
            text = run.wait_ready()
            check(re.search(r"^reset: removed .*/\.kairos/data .*/\.kairos/cometbft; kept the "
                            r"keyrings, client.toml and config.toml$", text, re.M),
                  f"no reset line:\n{text}")
            accounts = printed_dev_accounts(text)
            check(accounts.get("dev0", ("",))[0] == address,
                  f"dev0 after the reset: {accounts} (expected {address})")
            check("(reused from the keyring)" in text, "dev0 not reused from the keyring")
            check(kairosd(env2, "keys", "show", "alice", "-a").out.startswith("kairos1"),
                  "alice is gone from the keyring")
            alice = kairosd(env2, "query", "balance", "alice", "-o", "json").json()
            check(alice["balances"] == [], f"alice on the new chain: {alice}")
            add, send = run.printed_commands()
            run.run_printed(add)
            run.run_printed(send)
            log("after --reset: dev0 kept its key and funds again; the printed commands work")

            # A real failure: kairosd dies on its own.
            kairos_pid = next(p for p, n in run.node_pids.items() if n == "kairosd")
            os.kill(kairos_pid, signal.SIGKILL)
            rc = run.proc.wait(timeout=60)
            out = run.output()
            check(rc == 1, f"run-node.sh exited {rc} after kairosd died, expected 1:\n{out}")
            check("kairosd exited (status 137); stopping the node" in out and
                  "--- last lines of" in out and "stopped\n" not in out.split(READY)[-1],
                  f"the failure was not reported with the logs' tails:\n{out[-1500:]}")
            for pid, name in run.node_pids.items():
                harness.poll(lambda: not alive(pid), 20, f"{name} to be gone")
        log("a killed kairosd: run-node.sh stopped CometBFT, printed the tails and exited 1")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    harness.main(test_first_run_reuse_and_reset)
