#!/usr/bin/env python3
"""kairosd's REST API (the LCD) through clients we did not write, at the versions pinned in
test/e2e/rest_clients (package.json, package-lock.json), against one node whose chain id is the
localnet's (docs/keplr-chain-info.localnet.json):

- Keplr's own chain validator (@keplr-wallet/chain-validator) accepts the localnet's chain info,
  its rpc and rest pointed at the node: the schema, CometBFT's /status and /websocket, the LCD's
  node_info; its feature probes find the spendable-balances query and nothing else; it refuses the
  same chain info with another chain id (both endpoints) and one without fee currencies.
- The Telescope LCD client front-ends use (interchain's generated query clients over
  @cosmology/lcd's LCDClient): all balances (plain, and with a PageRequest as fromPartial makes
  it), a balance by denom, the spendable balances (what Keplr reads with that feature on), an
  account (BaseAccount with @type), the total supply, SupplyOf, bank params and node info, each
  equal to the ABCI query's answer (`kairosd query method`) or CometBFT's /status; a wrong path
  (404), a bad address (400) and an address without an account (404) reach the client as those
  statuses with grpc-gateway's error body.
- A front-end's send: the account through the LCD, a MsgSend signed offline by CosmJS, a Simulate
  POST, then a broadcast POST (BROADCAST_MODE_SYNC) that lands: GetTx through the LCD returns it
  with code 0, its height (the one CometBFT's /tx gives), the message; GetTxsEvent finds it (and
  only it) by transfer.recipient, as a wallet's history does; the recipient's balance
  rose by the amount (and the sender's fell by amount and fee), by the LCD and by kairosd's CLI;
  malformed broadcasts (tx_bytes not base64, an unknown mode) get HTTP 400.
- The node goes on making blocks, with the same app hash as its headers.

Needs node (>= 20) and the npm packages: scripts/setup.sh runs
`npm ci --prefix test/e2e/rest_clients`."""

import base64
import hashlib
import json
import os
import shutil
import subprocess

import harness
from harness import check, log
from test_rest import abci, without_empty

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENTS_DIR = os.path.join(HERE, "rest_clients")
CLIENTS = os.path.join(CLIENTS_DIR, "clients.mjs")
CHAIN_INFO = os.path.join(HERE, "..", "..", "docs", "keplr-chain-info.localnet.json")
PACKAGES = ("@keplr-wallet/chain-validator", "@cosmology/lcd", "interchain", "@cosmjs/stargate",
            "@cosmjs/proto-signing")
AMOUNT = 777
FEE = {"denom": "stake", "amount": "2000"}
# Keplr's feature probes (checkChainFeatures): GET /cosmos/bank/v1beta1/spendable_balances/test
# answered 400 (a bad address: the query is served) turns on this one; the IBC and feemarket
# probes get 404 (kairosd serves neither), which Keplr takes as "no such feature".
KEPLR_FEATURES = ["query:/cosmos/bank/v1beta1/spendable_balances"]


def node_command():
    """[node, flags...], after checking that node and the pinned packages are there."""
    node = shutil.which("node")
    check(node, "node is not on PATH (the REST clients need node >= 20): install it and run "
                "scripts/setup.sh")
    for package in PACKAGES:
        check(os.path.isdir(os.path.join(CLIENTS_DIR, "node_modules", package)),
              f"{CLIENTS_DIR}/node_modules lacks {package}: run scripts/setup.sh "
              f"(npm ci --prefix test/e2e/rest_clients)")
    # Keplr's checkRPCConnectivity opens the RPC's /websocket with the global WebSocket, as in a
    # browser: node >= 22 has it, node 20 and 21 behind --experimental-websocket.
    has_ws = subprocess.run([node, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"],
                            stdin=subprocess.DEVNULL, capture_output=True).returncode == 0
    return [node] + ([] if has_ws else ["--experimental-websocket"])


def run_clients(command, mode, config):
    return harness.run_json_script(command + [CLIENTS, mode, json.dumps(config)],
                                   f"clients.mjs {mode}", timeout=120)


def answer(out, name):
    """A call the client made that must have succeeded: its JSON answer."""
    got = out[name]
    check("ok" in got, f"{name}: the client got {got}")
    return got["ok"]


def check_refused(out, name, status, code, text):
    """A call the client surfaced as an HTTP error: the status and grpc-gateway's body."""
    got = out[name]
    body = got.get("data")
    check(got.get("status") == status and isinstance(body, dict) and body.get("code") == code and
          text in body.get("message", ""),
          f"{name}: expected HTTP {status} code {code} with {text!r}, the client got {got}")
    log(f"{name}: HTTP {status} code {code}: {body['message'][:100]}")


def set_genesis_chain_id(node, chain_id):
    with open(node.genesis_path()) as f:
        genesis = json.load(f)
    genesis["chain_id"] = chain_id
    with open(node.genesis_path(), "w") as f:
        json.dump(genesis, f, indent=2)


def check_keplr(node, command, chain_info):
    rest = f"http://127.0.0.1:{node.api_port}"
    info = chain_info | {"rpc": node.node_url, "rest": rest}
    wrong = "other-chain-7"
    out = run_clients(command, "keplr", {"chainInfo": info, "wrongChainId": wrong})
    check(out["validated"] == info, f"validateBasicChainInfoType changed the chain info: "
                                    f"{out['validated']}")
    check(out["rpc"] is None, f"checkRPCConnectivity refused the node: {out['rpc']}")
    check(out["rest"] is None, f"checkRestConnectivity refused the node: {out['rest']}")
    check(out["features"] == KEPLR_FEATURES, f"checkChainFeatures: {out['features']}")
    actual = chain_info["chainId"]
    for key, what in (("wrongRpc", "RPC"), ("wrongRest", "LCD")):
        want = f"{what} endpoint has different chain id (expected: {wrong}, actual: {actual})"
        check(out[key] == want, f"a chain info for {wrong}: {key} {out[key]!r}, want {want!r}")
    check(out["noFeeCurrencies"] and "feeCurrencies" in out["noFeeCurrencies"],
          f"a chain info without feeCurrencies: {out['noFeeCurrencies']}")
    log(f"Keplr's chain validator accepts {actual} at {node.node_url} and {rest} (features "
        f"{out['features']}); refuses {wrong}: {out['wrongRest']}; refuses no fee currencies: "
        f"{out['noFeeCurrencies']}")


def check_lcd_queries(node, command, alice, stranger):
    rest = f"http://127.0.0.1:{node.api_port}"
    out = run_clients(command, "lcd", {"rest": rest, "address": alice, "missing": stranger,
                                       "denom": "stake"})
    all_balances = answer(out, "allBalances")
    want = abci(node, "cosmos.bank.v1beta1.Query/AllBalances", {"address": alice})
    check(without_empty(all_balances) == without_empty(want) and
          all_balances["balances"][0]["denom"] == "stake",
          f"allBalances: LCD {all_balances}, ABCI {want}")
    paged = answer(out, "allBalancesPaged")
    check(paged["balances"] == all_balances["balances"] and
          paged["pagination"]["total"] == str(len(all_balances["balances"])),
          f"allBalances with a PageRequest: {paged}")
    for name, method, request in (
            ("balance", "cosmos.bank.v1beta1.Query/Balance", {"address": alice, "denom": "stake"}),
            ("spendableBalances", "cosmos.bank.v1beta1.Query/SpendableBalances",
             {"address": alice}),
            ("account", "cosmos.auth.v1beta1.Query/Account", {"address": alice}),
            ("totalSupply", "cosmos.bank.v1beta1.Query/TotalSupply", {}),
            ("supplyOf", "cosmos.bank.v1beta1.Query/SupplyOf", {"denom": "stake"}),
            ("bankParams", "cosmos.bank.v1beta1.Query/Params", {})):
        got, want = answer(out, name), abci(node, method, request)
        check(without_empty(got) == without_empty(want), f"{name}: LCD {got}, ABCI {want}")
        log(f"{name}: LCD = ABCI: {json.dumps(got)[:100]}")
    account = answer(out, "account")["account"]
    check(account["@type"] == "/cosmos.auth.v1beta1.BaseAccount" and account["address"] == alice,
          f"account: {account}")
    supply = {c["denom"]: c["amount"] for c in answer(out, "totalSupply")["supply"]}
    check(supply.get("stake") == answer(out, "supplyOf")["amount"]["amount"],
          f"total supply {supply} vs SupplyOf {answer(out, 'supplyOf')}")
    info = answer(out, "nodeInfo")["default_node_info"]
    status = node.rpc("status")["node_info"]
    check(info["default_node_id"] == status["id"] and
          all(info[k] == status[k] for k in ("network", "moniker", "version", "listen_addr")),
          f"node_info: LCD {info}, CometBFT /status {status}")

    check_refused(out, "wrongPath", 404, 5, "/cosmos/bank/v1beta1/no/such/path")
    check_refused(out, "badAddress", 400, 3, "invalid address")
    check_refused(out, "badAddressBalance", 400, 3, "invalid address")
    check_refused(out, "missingAccount", 404, 5, f"account {stranger} not found")


def check_send(node, command, alice, bob):
    rest = f"http://127.0.0.1:{node.api_port}"
    alice_before, bob_before = node.balance("alice"), node.balance("bob")
    out = run_clients(command, "tx", {"rest": rest, "chainId": node.chain_id(),
                                      "mnemonic": node.keys["alice"]["mnemonic"], "to": bob,
                                      "amount": str(AMOUNT), "denom": "stake", "fee": FEE})
    check(out["address"] == alice, f"CosmJS derived {out['address']} from alice's mnemonic")
    check(out["account"]["account_number"] == node.account("alice")["account"]["account_number"],
          f"the account the LCD gave: {out['account']}")
    check(out["toBefore"] == {"denom": "stake", "amount": str(bob_before)},
          f"bob before: LCD {out['toBefore']}, kairosd {bob_before}")
    gas_used = int(answer(out, "simulate")["gas_info"]["gas_used"])
    check(gas_used > 0, f"simulate: {out['simulate']}")
    log(f"simulate: gas used {gas_used}; the tx is sent with gas {out['gasLimit']}")

    tx_hash = hashlib.sha256(base64.b64decode(out["txBytes"])).hexdigest().upper()
    sync = answer(out, "broadcast")["tx_response"]
    check(sync["txhash"] == tx_hash and sync.get("code", 0) == 0,
          f"broadcast (sync): {sync}, the tx's hash {tx_hash}")
    got = answer(out, "getTx")
    landed = got["tx_response"]
    check(landed["txhash"] == tx_hash and landed.get("code", 0) == 0 and
          int(landed["height"]) > 0 and landed["gas_wanted"] == str(out["gasLimit"]),
          f"GetTx after {out['getTxPolls']} polls: {landed}")
    found = node.rpc("tx", hash="0x" + tx_hash)
    check(int(found["height"]) == int(landed["height"]),
          f"GetTx height {landed['height']}, CometBFT /tx {found['height']}")
    msg = got["tx"]["body"]["messages"][0]
    check(msg == {"@type": "/cosmos.bank.v1beta1.MsgSend", "from_address": alice,
                  "to_address": bob, "amount": [{"denom": "stake", "amount": str(AMOUNT)}]},
          f"GetTx's message: {msg}")
    history = answer(out, "txsEvent")
    check(history["total"] == "1" and
          [r["txhash"] for r in history["tx_responses"]] == [tx_hash] and
          history["tx_responses"][0]["height"] == landed["height"] and
          history["txs"][0]["body"]["messages"] == [msg],
          f"GetTxsEvent transfer.recipient='{bob}': {history}")
    log(f"broadcast {tx_hash}: in block {landed['height']} with code 0 (GetTx polled "
        f"{out['getTxPolls']} times)")

    bob_after, alice_after = node.balance("bob"), node.balance("alice")
    check(bob_after == bob_before + AMOUNT and
          out["toAfter"] == {"denom": "stake", "amount": str(bob_after)},
          f"bob: {bob_before} before, after LCD {out['toAfter']}, kairosd {bob_after}")
    check(alice_after == alice_before - AMOUNT - int(FEE["amount"]) and
          out["fromAfter"] == {"denom": "stake", "amount": str(alice_after)},
          f"alice: {alice_before} before, after LCD {out['fromAfter']}, kairosd {alice_after}")
    check_refused(out, "badTxBytes", 400, 3, "")
    check_refused(out, "badMode", 400, 3, "BROADCAST_MODE_NOPE")


def test_rest_clients():
    command = node_command()
    with open(CHAIN_INFO) as f:
        chain_info = json.load(f)
    with harness.Node("rest-clients", accounts={"alice": harness.GENESIS_COINS,
                                                 "bob": harness.GENESIS_COINS}) as node:
        set_genesis_chain_id(node, chain_info["chainId"])
        node.start()
        node.wait_for_height(2)
        check(node.chain_id() == chain_info["chainId"], f"chain id {node.chain_id()}")
        alice, bob = node.address("alice"), node.address("bob")
        stranger = node.add_local_key("stranger")

        check_keplr(node, command, chain_info)
        check_lcd_queries(node, command, alice, stranger)
        check_send(node, command, alice, bob)

        node.wait_for_height(node.height() + 2)
        node.check_app_hash()
        node.check_no_sanitizer_reports()


if __name__ == "__main__":
    harness.main(test_rest_clients)
