#!/usr/bin/env python3
"""Proof of authority end to end on one validator (app/poa), through the kairosd CLI
(`tx poa ...`, `query poa ...`) and CometBFT's own /validators.

- the genesis lists the node's own validator in app_state.poa, with `admin` as the authority;
  InitChain checks it against CometBFT's genesis validators, and `query poa` shows it;
- bob (not the authority) is refused: code 4, "expected authority <admin>, got <bob>";
- a change of a third or more of the power in one block is refused (the CLI's simulation names
  the numbers, and nothing is broadcast);
- admin adds a second validator (a new key from `cometbft gen-validator`, power 3 of 13, so the
  node alone still has more than 2/3 and the chain goes on): the tx lands at height H, and
  CometBFT's /validators shows it from H+2, not before; the module's set shows it at once;
- admin removes it (power 0): gone from /validators from the removal's H+2;
- admin changes the module's params and hands the authority to bob, who can then act."""

import json
import os
import subprocess

import harness
from harness import FEES, check, log

GAS = "400000"
POWER = 10


def edit_genesis(node):
    """app_state.poa: the node's own validator (as CometBFT's genesis lists it), admin the
    authority."""
    path = node.genesis_path()
    with open(path) as f:
        genesis = json.load(f)
    validators = []
    for v in genesis["validators"]:
        check(v["pub_key"]["type"] == "tendermint/PubKeyEd25519", f"genesis validator {v}")
        validators.append({"pub_key": {"@type": "/cosmos.crypto.ed25519.PubKey",
                                       "key": v["pub_key"]["value"]},
                           "power": v["power"], "moniker": "node0"})
    check(len(validators) == 1 and validators[0]["power"] == str(POWER),
          f"one genesis validator of power {POWER}: {genesis['validators']}")
    genesis["app_state"]["poa"] = {"authority": node.address("admin"),
                                   "validators": validators}
    with open(path, "w") as f:
        json.dump(genesis, f, indent=2)
    log(f"genesis app_state.poa: {genesis['app_state']['poa']}")


def new_consensus_key():
    out = subprocess.run([os.environ.get("COMETBFT", "cometbft"), "gen-validator"],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    key = json.loads(out)["Key"]
    return json.dumps(key["pub_key"]), key["address"]


def poa_tx(node, *args, expect_rc=0, extra=()):
    done = node.cli("tx", "poa", *args, "--fees", FEES, "--gas", GAS, "--node", node.node_url,
                    "--wait", "--output", "json", *extra, expect_rc=expect_rc)
    res = json.loads(done.out) if done.out.strip() else None
    log(f"tx poa {args[0]}: rc {done.rc}; "
        f"{(res or {}).get('tx_result', {}).get('log', '')} {done.err.strip()[:300]}")
    return res, done


def query(node, *args):
    return node.cli("query", "poa", *args, "--node", node.node_url, "--output", "json").json()


def comet_validators(node, height):
    """CometBFT's validator set at `height`: {upper-case hex address: power}."""
    res = node.rpc_eventually("validators", timeout=30, height=str(height))
    return {v["address"]: int(v["voting_power"]) for v in res["validators"]}


def included_height(node, res):
    found = node.rpc_eventually("tx", timeout=30, hash="0x" + res["txhash"])
    check(found["tx_result"]["code"] == 0, f"the tx failed in its block: {found['tx_result']}")
    return int(found["height"])


def check_applied_at_h_plus_2(node, h, address, want_power):
    """The module's change in block h reaches CometBFT's set at h + 2 and not before."""
    node.wait_for_height(h + 2)
    before, after = comet_validators(node, h + 1), comet_validators(node, h + 2)
    check(before.get(address, 0) != want_power,
          f"the change of block {h} is already in CometBFT's set at {h + 1}: {before}")
    check(after.get(address, 0) == want_power,
          f"CometBFT's set at {h + 2} has {address} at {after.get(address, 0)}, want "
          f"{want_power}: {after}")
    log(f"block {h}'s change: CometBFT's set at {h + 1} {before}, at {h + 2} {after}")


def test_the_authority_changes_the_validator_set():
    with harness.Node("poa", accounts={"admin": harness.GENESIS_COINS,
                                       "bob": harness.GENESIS_COINS}) as node:
        edit_genesis(node)
        node.start()
        node.wait_for_height(2)
        admin, bob = node.address("admin"), node.address("bob")

        authority = query(node, "authority")
        check(authority["authority"] == admin, f"authority: {authority}")
        start = query(node, "validators")
        check(start["total"] == "1" and start["total_power"] == str(POWER),
              f"the module's set at start: {start}")
        node_address = start["validators"][0]["address"]
        check(comet_validators(node, node.height()) == {node_address: POWER},
              "the module's set is CometBFT's")

        extra_key, extra_address = new_consensus_key()

        # Only the authority.
        _, done = poa_tx(node, "set-validator", "bob", extra_key, "3", expect_rc=None)
        check(done.rc != 0 and f"expected authority {admin}, got {bob}" in done.err,
              f"bob is refused with the authority's name: rc {done.rc} {done.err}")

        # A third of the power in one block.
        _, done = poa_tx(node, "set-validator", "admin", extra_key, "5", expect_rc=None)
        check(done.rc != 0 and "third" in done.err,
              f"5 of 10 in one block is refused: rc {done.rc} {done.err}")

        # Add: from H+2.
        res, _ = poa_tx(node, "set-validator", "admin", extra_key, "3", "--moniker", "extra")
        h = included_height(node, res)
        module = query(node, "validator", extra_address)
        check(module["found"] and module["validator"]["power"] == "3",
              f"the module's validator: {module}")
        check_applied_at_h_plus_2(node, h, extra_address, 3)
        check(query(node, "validators")["total_power"] == "13", "total power 13")

        # Remove: from its H+2.
        res, _ = poa_tx(node, "set-validator", "admin", extra_key, "0")
        h = included_height(node, res)
        check(not query(node, "validator", extra_address)["found"], "removed from the module")
        check_applied_at_h_plus_2(node, h, extra_address, 0)

        # Params and the authority.
        res, _ = poa_tx(node, "update-params", "admin", "--max-validators", "7")
        included_height(node, res)
        check(query(node, "params")["params"]["max_validators"] == 7, "max_validators 7")
        res, _ = poa_tx(node, "update-authority", "admin", bob)
        included_height(node, res)
        check(query(node, "authority")["authority"] == bob, "bob is the authority")
        _, done = poa_tx(node, "update-params", "admin", "--max-validators", "8", expect_rc=None)
        check(done.rc != 0 and f"expected authority {bob}, got {admin}" in done.err,
              f"admin is no longer the authority: {done.err}")
        res, _ = poa_tx(node, "update-params", "bob", "--max-validators", "8")
        included_height(node, res)
        check(query(node, "params")["params"]["max_validators"] == 8, "max_validators 8")
        node.check_no_sanitizer_reports()


if __name__ == "__main__":
    harness.main(test_the_authority_changes_the_validator_set)
