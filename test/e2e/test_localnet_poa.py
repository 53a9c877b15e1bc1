#!/usr/bin/env python3
"""Proof of authority and param changes on the 4-validator localnet (scripts/localnet.sh makes
it a poa chain: app_state.poa lists the four validators, user0 is the authority), then export.

- a change of a third or more of the power in one block is refused (2 added to 4);
- a fifth node (localnet.sh add-node) starts as a full node; the authority adds it (power 1):
  it is in CometBFT's /validators of every node from the tx's H+2, not at H+1, and its
  signature is in the commits after that;
- the authority removes node3, one of the original four: the chain goes on, node3 follows it as
  a full node, and every node has the same app hash at every height;
- `tx auth update-params user0 max_memo_characters=20`: from the next block every node's params
  say 20 and every node's CheckTx refuses a 30-character memo it accepted before;
- `kairosd export --height H` of a past height gives the same document on two nodes;
- `kairosd export` of node0 (stopped) starts a fresh single-node chain (its own validator in
  app_state.poa instead of the four): its state, exported again after two blocks, is the
  exported state."""

import copy
import json
import os
import subprocess

import harness
from harness import FEES, check, log
from localnet_cluster import LocalnetCluster, load_key
from test_poa import check_applied_at_h_plus_2, comet_validators, included_height, poa_tx

GAS = "400000"  # the update-params txs'
POWER = 1  # each genesis validator's, and node4's
LONG_MEMO = "m" * 30


def show_validator(home):
    """`cometbft show-validator` of a CometBFT home: the JSON key and its hex address."""
    out = subprocess.run([harness.COMETBFT, "show-validator", "--home", home],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    key = json.loads(out)
    return out.strip(), key


def consensus_address(node, pub_key_json):
    """The hex consensus address the poa module gives a key (query poa validator KEY)."""
    out = node.cli("query", "poa", "validator", pub_key_json, "--node", node.node_url,
                   "--output", "json").json()
    return out


def check_set_change(nodes, h, address, want_power):
    """Block h's change reaches CometBFT's set at h + 2, not at h + 1, on every node."""
    for node in nodes:
        check_applied_at_h_plus_2(node, h, address, want_power)


def signed_commits(node, address, heights):
    """The heights among `heights` whose commit (in block h+1's last_commit, via /commit h)
    carries a signature of `address`."""
    signed = []
    for h in heights:
        commit = node.rpc_eventually("commit", timeout=60, height=str(h))
        sigs = commit["signed_header"]["commit"]["signatures"]
        if any(s.get("validator_address") == address and s.get("block_id_flag") == 2
               for s in sigs):
            signed.append(h)
    return signed


def check_app_hashes_agree(nodes, top):
    """Every node's header app hash at every height 2..top is the same."""
    for h in range(2, top + 1):
        hashes = {n.name: n.block(h)["header"]["app_hash"] for n in nodes}
        check(len(set(hashes.values())) == 1, f"app hashes differ at height {h}: {hashes}")
    log(f"{len(nodes)} nodes agree on the app hash at heights 2..{top}")


def send_with_memo(node, memo, expect_ok):
    """user1 → user2 with `memo`, broadcast to `node` without simulation: CheckTx of that node
    decides."""
    wait = ("--wait",) if expect_ok else ()  # committed before the next tx of user1
    done = node.cli("tx", "send", "user1", node.address("user2"), "1stake", "--fees", FEES,
                    "--memo", memo, "--node", node.node_url, "--gas", "200000",
                    "--output", "json", *wait, expect_rc=None, timeout=120)
    if expect_ok:
        check(done.rc == 0, f"{node.name}: a {len(memo)}-character memo refused: {done.err}")
    else:
        check(done.rc != 0 and "memo" in done.err.lower(),
              f"{node.name}: a {len(memo)}-character memo was not refused for its memo: rc "
              f"{done.rc} {done.out} {done.err}")
    log(f"{node.name}: {len(memo)}-character memo {'accepted' if done.rc == 0 else 'refused'}")
    return done


def auth_params(node):
    return node.cli("query", "auth", "params", "--node", node.node_url,
                    "--output", "json").json()["params"]


def export_genesis(kairos_home, genesis, height=None):
    extra = ["--height", str(height)] if height is not None else []
    p = subprocess.run([harness.KAIROSD, "export", "--home", kairos_home, "--genesis", genesis,
                        *extra], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"kairosd export exited {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def fresh_chain_from(doc):
    """A single-node chain from the exported genesis `doc`: its own validator replaces the
    exported set in app_state.poa (CometBFT's validators left empty: InitChain answers the
    module's set). Returns the re-export of its state after two blocks, and the doc it ran."""
    with harness.Node("exported") as node:
        with open(node.genesis_path()) as f:
            own = json.load(f)
        check(len(own["validators"]) == 1, "cometbft init writes one validator")
        key = own["validators"][0]["pub_key"]
        started = copy.deepcopy(doc)
        started["validators"] = []
        started["app_state"]["poa"]["validators"] = [{
            "pub_key": {"@type": "/cosmos.crypto.ed25519.PubKey", "key": key["value"]},
            "power": "10", "moniker": "exported"}]
        with open(node.genesis_path(), "w") as f:
            json.dump(started, f, indent=2)
        node.start()
        first = int(doc["initial_height"])
        node.wait_for_height(first + 2, timeout=90)
        node.stop_all()
        node.check_no_sanitizer_reports()
        again = export_genesis(node.kairos_home, node.genesis_path())
        return again, started


def test_poa_on_the_localnet():
    with LocalnetCluster("poa", room=5) as net:
        n0 = net.nodes[0]
        n0.wait_for_height(3, timeout=90)
        for name in ("user0", "user1", "user2"):
            load_key(n0, name)
        admin = n0.address("user0")
        check(n0.cli("query", "poa", "authority", "--node", n0.node_url, "--output",
                     "json").json()["authority"] == admin, "user0 is the authority")
        start = n0.cli("query", "poa", "validators", "--node", n0.node_url, "--output",
                       "json").json()
        # `cometbft testnet` gives each validator power 1.
        check(start["total"] == "4" and start["total_power"] == str(4 * POWER),
              f"the module's set at start: {start}")

        # A third or more of the power in one block: refused, nothing broadcast.
        node4 = net.add_node()
        key4, _ = show_validator(os.path.join(net.dir, "node4"))
        _, done = poa_tx(n0, "set-validator", "user0", key4, str(2 * POWER), expect_rc=None)
        check(done.rc != 0 and "third" in done.err,
              f"a change of 2 of 4 in one block is refused: rc {done.rc} {done.err}")

        # The fifth node catches up as a full node, then the authority adds it.
        node4.wait_for_height(n0.height(), timeout=120)
        address4 = consensus_address(n0, key4)
        check(not address4["found"], f"node4 is not a validator yet: {address4}")
        res, _ = poa_tx(n0, "set-validator", "user0", key4, str(POWER), "--moniker", "node4")
        h = included_height(n0, res)
        added = consensus_address(n0, key4)
        check(added["found"] and added["validator"]["power"] == str(POWER),
              f"the module has node4: {added}")
        address4 = added["validator"]["address"]
        live = net.nodes
        check_set_change(live, h, address4, POWER)
        n0.wait_for_height(h + 7, timeout=90)
        signed = signed_commits(n0, address4, range(h + 2, h + 6))
        check(signed, f"node4 ({address4}) signed none of the commits of heights "
                      f"{h + 2}..{h + 5}")
        log(f"node4 signed the commits of heights {signed}")

        # The authority removes node3, one of the original four.
        key3, _ = show_validator(os.path.join(net.dir, "node3"))
        was3 = consensus_address(n0, key3)
        check(was3["found"], f"node3 is a genesis validator: {was3}")
        res, _ = poa_tx(n0, "set-validator", "user0", key3, "0")
        h = included_height(n0, res)
        check(not consensus_address(n0, key3)["found"], "node3 left the module's set")
        check_set_change(live, h, was3["validator"]["address"], 0)
        check(len(comet_validators(n0, h + 2)) == 4, "four validators after the removal")
        top = n0.wait_for_height(h + 6, timeout=90)
        for node in live:
            node.wait_for_height(top, timeout=90)
        check_app_hashes_agree(live, top)

        # MsgUpdateParams: from the next block on every node.
        for node in live:
            for name in ("user1", "user2"):
                load_key(node, name)
        send_with_memo(n0, LONG_MEMO, expect_ok=True)
        before = auth_params(n0)
        check(int(before["max_memo_characters"]) >= len(LONG_MEMO),
              f"the default memo limit allows {len(LONG_MEMO)}: {before}")
        done = n0.cli("tx", "auth", "update-params", "user0", "max_memo_characters=20",
                      "--fees", FEES, "--gas", GAS, "--node", n0.node_url, "--wait",
                      "--output", "json", timeout=120)
        h = included_height(n0, json.loads(done.out))
        for node in live:
            node.wait_for_height(h + 1, timeout=90)
            now = auth_params(node)
            check(now["max_memo_characters"] == "20",
                  f"{node.name}: max_memo_characters after block {h}: {now}")
            check({k: v for k, v in now.items() if k != "max_memo_characters"} ==
                  {k: v for k, v in before.items() if k != "max_memo_characters"},
                  f"{node.name}: only max_memo_characters changed: {before} → {now}")
            send_with_memo(node, LONG_MEMO, expect_ok=False)
        refused = n0.cli("tx", "auth", "update-params", "user1", "max_memo_characters=30",
                         "--fees", FEES, "--gas", GAS, "--node", n0.node_url, "--output",
                         "json", expect_rc=None, timeout=120)
        check(refused.rc != 0 and f"expected authority {admin}" in refused.err,
              f"user1 may not change params: rc {refused.rc} {refused.err}")
        top = n0.wait_for_height(n0.height() + 2)
        for node in live:
            node.wait_for_height(top, timeout=90)
        check_app_hashes_agree(live, top)

        # Export node0 (stopped), and start a fresh chain from it.
        log(net.run("stop", timeout=180).rstrip())
        node0_home = os.path.join(net.dir, "node0")
        doc = export_genesis(os.path.join(node0_home, "kairos"),
                             os.path.join(node0_home, "config", "genesis.json"))
        state = doc["app_state"]
        check(doc["initial_height"] == str(int(doc["initial_height"])) and
              int(doc["initial_height"]) > top, f"the export's initial height: "
                                                f"{doc['initial_height']}")
        check(len(state["poa"]["validators"]) == 4 and state["poa"]["authority"] == admin,
              f"the exported poa section: {state['poa']}")
        check(state["auth"]["params"]["max_memo_characters"] == "20",
              f"the exported auth params: {state['auth'].get('params')}")
        # Two nodes' exports of the same past height (a walk of that version's tree) agree.
        past = int(doc["initial_height"]) - 3
        exports = [export_genesis(os.path.join(net.dir, f"node{i}", "kairos"),
                                  os.path.join(net.dir, f"node{i}", "config", "genesis.json"),
                                  height=past) for i in (0, 1)]
        check(exports[0] == exports[1] and exports[0]["initial_height"] == str(past + 1),
              f"node0's and node1's exports of height {past} differ")
        log(f"node0 and node1 export the same state at the past height {past}")
        again, started = fresh_chain_from(doc)
        check(again["app_state"] == started["app_state"],
              "the fresh chain's state, exported after two blocks, differs from the exported "
              f"state:\nexported: {json.dumps(started['app_state'], sort_keys=True)[:3000]}\n"
              f"again: {json.dumps(again['app_state'], sort_keys=True)[:3000]}")
        check(int(again["initial_height"]) >= int(doc["initial_height"]) + 2,
              f"the fresh chain went on from {doc['initial_height']}: {again['initial_height']}")
        log(f"export at height {int(doc['initial_height']) - 1} → fresh chain → re-export: "
            f"the same state ({len(json.dumps(state))} bytes of app_state)")


if __name__ == "__main__":
    harness.main(test_poa_on_the_localnet)
