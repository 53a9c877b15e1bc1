#!/usr/bin/env python3
"""The README's "Talking to it" commands, run from the README text itself, so the README cannot
drift from the code: the first ```sh block of that section is extracted and run against a fresh
HOME (so ~/.kairos is new) with non-default ports.

The block's lines run as written, in order, with two substitutions the test owns and checks are
there: `K=build/release/app/kairosd` becomes the kairosd under test, and the
`scripts/run-node.sh` line (command 1, which runs until Ctrl-C) starts in the background; the
lines after it run, as one `bash -e` script (with the variables set before it), once it printed
"Ctrl-C stops both.". Every line must succeed. Then: alice, the key the block makes, holds what
the block sent her (read from the block's own `query balance alice` output and again here), and
Ctrl-C stops the node with exit 0.
"""

import os
import re
import shutil
import subprocess
import tempfile

import harness
from harness import check, log
from run_node import RunNodeScript, script_env

README = os.path.join(harness.REPO, "README.md")
K_LINE = "K=build/release/app/kairosd"


def talking_to_it_block():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## Talking to it\n(.*?)(?=^## )", text, re.M | re.S)
    check(section is not None, "README.md has no '## Talking to it' section")
    block = re.search(r"^```sh\n(.*?)^```", section.group(1), re.M | re.S)
    check(block is not None, "the 'Talking to it' section has no ```sh block")
    return [ln for ln in block.group(1).splitlines() if ln.strip()]


def test_readme_talking_to_it():
    lines = talking_to_it_block()
    command1 = [i for i, ln in enumerate(lines) if ln.startswith("scripts/run-node.sh")]
    check(len(command1) == 1, f"the block must run scripts/run-node.sh once: {lines}")
    check(K_LINE in lines, f"the block must set {K_LINE} (the test swaps in its kairosd)")
    before, run_line, after = lines[:command1[0]], lines[command1[0]], lines[command1[0] + 1:]
    check(run_line.split("#")[0].strip() == "scripts/run-node.sh",
          f"command 1 takes no arguments in the README: {run_line}")
    check(any(" tx send " in ln for ln in after), "the block sends no tx after command 1")

    home = tempfile.mkdtemp(prefix="kairos-e2e-readme-")
    try:
        env = script_env(home, harness.free_ports(5))
        swap = lambda ln: f"K={harness.KAIROSD}" if ln == K_LINE else ln  # noqa: E731
        if before:
            p = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(map(swap, before))],
                               cwd=harness.REPO, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=120)
            check(p.returncode == 0, f"the lines before command 1 failed:\n{p.stdout}")
        with RunNodeScript("readme", env, cwd=harness.REPO) as run:
            run.wait_ready()
            # A shell the user keeps: the variables set before command 1 (K=...) hold after it.
            assignments = [ln for ln in before if re.fullmatch(r"[A-Za-z_]\w*=\S*", ln)]
            script = "\n".join(map(swap, assignments + after))
            log("running the README lines after command 1:\n" + script)
            p = subprocess.run(["bash", "-x", "-euo", "pipefail", "-c", script],
                               cwd=harness.REPO, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=240)
            log(f"stdout:\n{p.stdout}\nstderr (bash -x):\n{p.stderr}")
            check(p.returncode == 0, f"a README line failed (exit {p.returncode}); see above")
            printed = re.findall(r"^(\d+)stake$", p.stdout, re.M)
            got = harness.run_split([harness.KAIROSD, "query", "balance", "alice", "--denom",
                                     "stake", "-o", "json"], env=env).json()
            amount = int(got["balance"]["amount"])
            check(amount > 0 and str(amount) in printed,
                  f"alice holds {amount}stake; the block's query printed {printed}")
            log(f"README flow: every line passed; alice holds {amount}stake")
            rc = run.ctrl_c()
            check(rc == 0, f"Ctrl-C: run-node.sh exited {rc}:\n{run.output()[-800:]}")
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    harness.main(test_readme_talking_to_it)
