#!/usr/bin/env python3
"""CosmJS (test/e2e/cosmjs: @cosmjs/stargate and @cosmjs/proto-signing at pinned versions) as a
client of a Kairos node: a mnemonic funded at genesis gives the same address in CosmJS's
DirectSecp256k1HdWallet (prefix kairos) as in the kairosd keyring (`keys add --recover`);
SigningStargateClient.sendTokens succeeds end to end with a fixed fee and with "auto" (which
simulates), and getBalance, getAccount and getSequence agree with `kairosd query balance/account`
before and after; getAccount of an address without an account is null (our NotFound answer).

Needs node (>= 20) and the npm packages: scripts/setup.sh runs `npm ci --prefix test/e2e/cosmjs`."""

import base64
import hashlib
import json
import os
import shutil

import cosmos_tx
import harness
from harness import check, log

COSMJS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cosmjs")
SEND = os.path.join(COSMJS_DIR, "send.mjs")
AMOUNT = 1234
FIXED_FEE = {"amount": [{"denom": "stake", "amount": "5000"}], "gas": "200000"}
GAS_PRICE = "0.025stake"
# The BIP-39 test mnemonic; README (app/client) gives its address.
MNEMONIC = ("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon "
            "abandon about")
MNEMONIC_ADDRESS = "kairos19rl4cm2hmr8afy4kldpxz3fka4jguq0attdgdt"


def run_cosmjs(config):
    node = shutil.which("node")
    check(node, "node is not on PATH (CosmJS needs node >= 20)")
    check(os.path.isdir(os.path.join(COSMJS_DIR, "node_modules", "@cosmjs", "stargate")),
          f"{COSMJS_DIR}/node_modules lacks @cosmjs/stargate: run scripts/setup.sh "
          f"(npm ci --prefix test/e2e/cosmjs)")
    return harness.run_json_script([node, SEND, json.dumps(config)], "send.mjs")


def check_agrees(node, snap, address, what):
    """A CosmJS snapshot {balance, account, sequence} against `kairosd query`. (CosmJS gives
    numbers as numbers or, from bigints, strings: compared as strings.)"""
    cli_acc = node.account(address)["account"]
    acc = snap["account"]
    check(acc is not None, f"{what}: CosmJS getAccount returned null")
    check(acc["address"] == cli_acc["address"] == address, f"{what}: addresses {acc} {cli_acc}")
    check(str(acc["accountNumber"]) == cli_acc["account_number"],
          f"{what}: account number CosmJS {acc['accountNumber']}, kairosd "
          f"{cli_acc['account_number']}")
    seq = snap["sequence"]  # getSequence: {accountNumber, sequence}
    check(str(acc["sequence"]) == cli_acc["sequence"] == str(seq["sequence"]) and
          str(seq["accountNumber"]) == cli_acc["account_number"],
          f"{what}: sequence CosmJS {acc['sequence']} / getSequence {snap['sequence']}, kairosd "
          f"{cli_acc['sequence']}")
    if cli_acc["pub_key"] is None:
        check(acc["pubkey"] is None, f"{what}: CosmJS has a public key kairosd has not: {acc}")
    else:
        check(acc["pubkey"] and acc["pubkey"]["value"] == cli_acc["pub_key"]["key"] and
              acc["pubkey"]["type"] == "tendermint/PubKeySecp256k1",
              f"{what}: public key CosmJS {acc['pubkey']}, kairosd {cli_acc['pub_key']}")
    balance = node.balance(address)
    check(snap["balance"] == {"denom": "stake", "amount": str(balance)},
          f"{what}: CosmJS getBalance {snap['balance']}, kairosd {balance}")
    log(f"{what}: CosmJS and kairosd agree: balance {balance}, account number "
        f"{cli_acc['account_number']}, sequence {cli_acc['sequence']}")


def test_cosmjs_send_tokens():
    with harness.Node("cosmjs", accounts={"bob": None, "nobody": None}) as node:
        # The mnemonic recovered in kairosd's keyring gives CosmJS's (and the README's) address.
        address = node.add_key("cosmjs", mnemonic=MNEMONIC)
        check(address == MNEMONIC_ADDRESS, f"kairosd keys add --recover: {address}")
        node.add_genesis_account("cosmjs", harness.GENESIS_COINS)
        node.start()
        node.wait_for_height(2)
        bob = node.address("bob")

        out = run_cosmjs({"rpc": node.node_url, "mnemonic": MNEMONIC, "to": bob,
                          "amount": str(AMOUNT), "denom": "stake",
                          "missing": node.address("nobody"), "fee": FIXED_FEE,
                          "gas_price": GAS_PRICE})
        log(f"CosmJS: {json.dumps({k: out[k] for k in ('fixed', 'auto')})}")
        check(out["address"] == address, f"CosmJS derived {out['address']}, kairosd {address}")
        check(base64.b64decode(out["pubkey"]) == node.keys["cosmjs"]["pub_key"],
              "CosmJS and kairosd derive different public keys")
        check(out["chainId"] == node.chain_id(), f"CosmJS chain id {out['chainId']}")
        check(out["missingAccount"] is None,
              f"getAccount of an address without an account: {out['missingAccount']}")

        # Before: the genesis account, no key stored yet, sequence 0.
        before = out["before"]
        check(before["account"] and str(before["account"]["sequence"]) == "0" and
              before["account"]["pubkey"] is None and
              before["balance"]["amount"] == harness.GENESIS_COINS.removesuffix("stake"),
              f"CosmJS before sending: {before}")
        check(before["toBalance"] == {"denom": "stake", "amount": "0"}, f"bob before: {before}")

        # The fixed-fee send: included with code 0, in CometBFT's /tx as CosmJS saw it.
        sends = ["fixed"] + ([] if "error" in out["auto"] else ["auto"])
        for name in sends:
            r = out[name]
            check(r["code"] == 0 and r["height"] > 0, f"sendTokens ({name} fee): {r}")
            found = node.rpc_eventually("tx", hash="0x" + r["transactionHash"])
            check(int(found["height"]) == r["height"] and
                  found["tx_result"].get("code", 0) == 0,
                  f"/tx of the {name}-fee send: {found}")
            check("transfer" in r["eventTypes"], f"{name}: no transfer event: {r['eventTypes']}")
        check(int(out["fixed"]["gasWanted"]) == int(FIXED_FEE["gas"]), f"gas: {out['fixed']}")
        tx = base64.b64decode(out["getTx"]["txBase64"])
        check(out["getTx"]["code"] == 0 and
              hashlib.sha256(tx).hexdigest().upper() == out["fixed"]["transactionHash"],
              f"getTx: {out['getTx']}")

        # The "auto" fee: gas = simulated gas x CosmJS's multiplier, fee = gas x price.
        fee_amount = 0
        if "auto" in sends:
            raw = node.tx_bytes(out["auto"]["transactionHash"])
            auth_info = cosmos_tx.decode_fields(cosmos_tx.decode_fields(raw)[2][0])
            fee = cosmos_tx.decode_fields(auth_info[2][0])
            gas_limit = fee[2][0]
            fee_amount = int(cosmos_tx.decode_fields(fee[1][0])[2][0])
            check(gas_limit == int(out["auto"]["gasWanted"]) >= int(out["auto"]["gasUsed"]),
                  f"auto fee: gas limit {gas_limit}, result {out['auto']}")
            log(f"auto fee: {fee_amount}stake for gas {gas_limit} (used "
                f"{out['auto']['gasUsed']})")

        # After: the sends, their sequences, the key stored; CosmJS and kairosd agree.
        after = out["after"]
        n = len(sends)
        start = int(harness.GENESIS_COINS.removesuffix("stake"))
        fixed_fee = int(FIXED_FEE["amount"][0]["amount"])
        check(int(after["balance"]["amount"]) == start - n * AMOUNT - fixed_fee - fee_amount,
              f"CosmJS balance after: {after['balance']}")
        check(after["toBalance"]["amount"] == str(n * AMOUNT), f"bob after: {after}")
        check(str(after["sequence"]["sequence"]) == str(n), f"sequence after {n} sends: {after}")
        check_agrees(node, after, address, f"after {n} send(s)")
        check(node.balance("bob") == n * AMOUNT, "bob's balance by kairosd")
        check("error" not in out["auto"],
              f"sendTokens with fee \"auto\" (CosmJS simulates first) failed: "
              f"{out['auto'].get('error')}")
        node.check_app_hash()


if __name__ == "__main__":
    harness.main(test_cosmjs_send_tokens)
