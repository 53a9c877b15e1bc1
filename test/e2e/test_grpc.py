#!/usr/bin/env python3
"""kairosd's gRPC server (app/api/grpc_server.h) through grpcurl, a client we did not write
(pinned by scripts/setup.sh), against one node on CometBFT v0.38:

- server reflection: `grpcurl list` names every service kairosd serves and the reflection
  service; `describe` gives a method's signature and a message's fields;
- every method of every service is called once through gRPC at one height (the metadata
  x-cosmos-block-height) and once as an ABCI query through CometBFT (`kairosd query method`,
  which prints the ABCI answer in protobuf's JSON): the two answers are the same message, or
  the same error text; the answer's header says the height it was read at;
- cosmos.base.node.v1beta1.Service/Config answers this node's config;
- cosmos.base.tendermint.v1beta1.Service answers what CometBFT's RPC says (node info, a block,
  the validator set, by height and latest), and its ABCIQuery what abci_query answers;
- bad input gets the gRPC code and a message that names the problem: a missing account
  (NOT_FOUND), a bad address, a height that is pruned or in the future, a bad height header
  (INVALID_ARGUMENT), a method the server does not list, a request over the size limit
  (RESOURCE_EXHAUSTED); and the node goes on making blocks."""

import base64
import json
import os
import subprocess

import harness
from harness import check, log

GRPCURL = os.environ.get("GRPCURL") or os.path.join(harness.REPO, ".tools", "bin", "grpcurl")

SERVICES = [
    "cosmos.auth.v1beta1.Query",
    "cosmos.bank.v1beta1.Query",
    "cosmos.base.node.v1beta1.Service",
    "cosmos.base.tendermint.v1beta1.Service",
    "cosmos.tx.v1beta1.Service",
    "kairos.auth.v1.Query",
    "kairos.locks.v1.Query",
    "kairos.mempool.v1.Query",
    "kairos.poa.v1.Query",
]
HEIGHT_HEADER = "x-cosmos-block-height"
MAX_RECV = 65536  # grpc.max_recv_msg_bytes of the test node


def grpcurl(node, *args, data=None, height=None, verbose=False):
    """grpcurl against the node's gRPC port; returns (exit code, stdout, stderr)."""
    argv = [GRPCURL, "-plaintext", "-format-error"]
    if verbose:
        argv.append("-v")
    if height is not None:
        argv += ["-H", f"{HEIGHT_HEADER}: {height}"]
    if data is not None:
        argv += ["-d", data if isinstance(data, str) else json.dumps(data)]
    argv.append(f"127.0.0.1:{node.grpc_port}")
    argv += list(args)
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def call(node, method, request, height):
    """A gRPC call at `height`: ("ok", response JSON, answered height) or ("error", code,
    message)."""
    rc, out, err = grpcurl(node, method, data=request, height=height, verbose=True)
    if rc == 0:
        # -v prints the response headers, then "Response contents:", then the message.
        check("Response contents:" in out, f"{method}: no response in grpcurl's output:\n{out}")
        headers, body = out.split("Response contents:", 1)
        body = body.split("\nResponse trailers received:", 1)[0]
        answered = [ln.split(":", 1)[1].strip() for ln in headers.splitlines()
                    if ln.lower().startswith(HEIGHT_HEADER + ":")]
        return "ok", json.loads(body), int(answered[0]) if answered else 0
    # -format-error -v: the status as JSON {"code": N, "message": ...} after "ERROR:" or last.
    out += err
    text = out[out.rfind("{\n"):] if "{\n" in out else "{}"
    try:
        status = json.loads(text)
    except ValueError:
        raise harness.E2EError(f"{method}: grpcurl exited {rc}:\n{out}\n{err}") from None
    return "error", status.get("code"), status.get("message", "")


def abci(node, method, request, height):
    """The same method as an ABCI query through CometBFT (`kairosd query method`): ("ok",
    response JSON) or ("error", the node's log)."""
    p = node.cli("query", "method", method, json.dumps(request), "--height", str(height),
                 "--node", node.node_url, expect_rc=None)
    if p.rc == 0:
        return "ok", json.loads(p.out)
    return "error", p.err.strip()


def normalize(v):
    """JSON with keys compared as protobuf's JSON parsers compare them (a proto name and its
    lowerCamelCase form are the same field), so the check does not depend on which form a
    client prints."""
    if isinstance(v, dict):
        return {k.replace("_", "").lower(): normalize(x) for k, x in v.items()}
    if isinstance(v, list):
        return [normalize(x) for x in v]
    return v


def check_same(node, method, request, height, expect_ok=True):
    g = call(node, method, request, height)
    a = abci(node, method, request, height)
    if g[0] == "ok":
        check(a[0] == "ok", f"{method} {request}: gRPC answered {g[1]}, ABCI failed: {a[1]}")
        check(normalize(g[1]) == normalize(a[1]),
              f"{method} {request} at {height}: gRPC {g[1]} != ABCI {a[1]}")
        check(g[2] == height, f"{method}: the answer's {HEIGHT_HEADER} is {g[2]}, asked {height}")
        log(f"{method}: gRPC = ABCI at height {height}: {json.dumps(g[1])[:100]}")
    else:
        check(a[0] == "error", f"{method} {request}: gRPC failed ({g[1]}: {g[2]}), ABCI "
                               f"answered {a[1]}")
        check(g[2] and g[2] in a[1], f"{method}: gRPC message {g[2]!r} not in the ABCI log {a[1]!r}")
        log(f"{method}: gRPC code {g[1]} and ABCI agree: {g[2][:100]}")
    check(expect_ok == (g[0] == "ok"), f"{method} {request}: expected {'an answer' if expect_ok else 'an error'}, got {g}")
    return g


def expect_error(node, method, request, code, text, height=None):
    g = call(node, method, request, height)
    check(g[0] == "error" and g[1] == code and text in g[2],
          f"{method} {request} (height {height}): expected code {code} with {text!r}, got {g}")
    log(f"{method}: code {code}: {g[2][:120]}")


def pb_string(field, text):
    """One protobuf string field (field numbers < 16, text < 128 bytes)."""
    data = text.encode()
    return bytes([field << 3 | 2, len(data)]) + data


def b64(data):
    return base64.b64encode(data).decode()


def check_tendermint_service(node, h, alice):
    svc = "cosmos.base.tendermint.v1beta1.Service/"
    status = node.rpc("status")
    g = call(node, svc + "GetNodeInfo", {}, None)
    check(g[0] == "ok", f"GetNodeInfo: {g}")
    info = g[1]["default_node_info"]
    check(info["network"] == status["node_info"]["network"] and
          info["default_node_id"] == status["node_info"]["id"] and
          base64.b64decode(info["channels"]).hex() == status["node_info"]["channels"].lower(),
          f"GetNodeInfo {info} against /status {status['node_info']}")
    check(g[1]["application_version"]["app_name"] == "kairosd", f"GetNodeInfo: {g[1]}")
    g = call(node, svc + "GetSyncing", {}, None)
    check(g[0] == "ok" and g[1].get("syncing", False) is False, f"GetSyncing: {g}")
    block = node.rpc("block", height=h)
    g = call(node, svc + "GetBlockByHeight", {"height": str(h)}, None)
    check(g[0] == "ok", f"GetBlockByHeight: {g}")
    sdk, header = g[1]["sdk_block"], block["block"]["header"]
    check(base64.b64decode(g[1]["block_id"]["hash"]).hex().upper() == block["block_id"]["hash"],
          f"block id {g[1]['block_id']} against {block['block_id']}")
    check(sdk["header"]["height"] == str(h) and
          base64.b64decode(sdk["header"]["app_hash"]).hex().upper() == header["app_hash"] and
          sdk["header"]["chain_id"] == header["chain_id"] and
          sdk["header"]["proposer_address"].startswith("kairosvalcons1") and
          len(sdk.get("data", {}).get("txs", [])) == len(block["block"]["data"].get("txs") or []),
          f"GetBlockByHeight {h}: {sdk['header']} against {header}")
    check(g[1]["block"]["header"]["app_hash"] == sdk["header"]["app_hash"],
          "the deprecated block and sdk_block disagree")
    sigs = block["block"]["last_commit"]["signatures"]
    check(len(sdk["last_commit"]["signatures"]) == len(sigs) and
          b64(base64.b64decode(sigs[0]["signature"])) == sdk["last_commit"]["signatures"][0]["signature"],
          f"last commit: {sdk['last_commit']} against {sigs}")
    g = call(node, svc + "GetLatestBlock", {}, None)
    check(g[0] == "ok" and int(g[1]["sdk_block"]["header"]["height"]) >= h, f"GetLatestBlock: {g}")
    vals = node.rpc("validators", height=h)["validators"]
    for method, request in ((svc + "GetValidatorSetByHeight", {"height": str(h)}),
                            (svc + "GetLatestValidatorSet", {})):
        g = call(node, method, request, None)
        check(g[0] == "ok" and len(g[1]["validators"]) == len(vals), f"{method}: {g}")
        v = g[1]["validators"][0]
        check(v["address"].startswith("kairosvalcons1") and
              v["voting_power"] == vals[0]["voting_power"] and
              v["pub_key"]["@type"] == "/cosmos.crypto.ed25519.PubKey" and
              v["pub_key"]["key"] == vals[0]["pub_key"]["value"] and
              g[1]["pagination"]["total"] == str(len(vals)),
              f"{method}: {v} against {vals[0]}")
    request = pb_string(1, alice) + pb_string(2, "stake")
    hq = node.height() - 1  # kept (h may be pruned by now on a slow machine: keep_recent 50)
    g = call(node, svc + "ABCIQuery", {"path": "/cosmos.bank.v1beta1.Query/Balance",
                                       "data": b64(request), "height": str(hq)}, None)
    a = node.abci_query("/cosmos.bank.v1beta1.Query/Balance", request, height=hq)
    check(g[0] == "ok" and g[1]["value"] == a["value"] and g[1]["height"] == str(hq) and
          g[1].get("code", 0) == 0, f"ABCIQuery {g} against abci_query {a}")
    log(f"{svc}*: agree with CometBFT's /status, /block, /validators and abci_query at {h}")
    expect_error(node, svc + "GetBlockByHeight", {"height": "1000000000"}, 3, "height")
    expect_error(node, svc + "GetBlockByHeight", {"height": "0"}, 3,
                 "height must be greater than 0")
    expect_error(node, svc + "GetLatestValidatorSet", {"pagination": {"key": "AA=="}}, 3,
                 "offset and limit only")


def test_grpc():
    check(os.access(GRPCURL, os.X_OK), f"{GRPCURL} is not an executable (run scripts/setup.sh)")
    with harness.Node("grpc", accounts={"alice": harness.GENESIS_COINS,
                                         "bob": harness.GENESIS_COINS}) as node:
        node.cli("genesis", "set-poa", "--authority", "alice", "--genesis", node.genesis_path())
        node.configure_kairosd({"grpc.max_recv_msg_bytes": str(MAX_RECV),
                                "store.keep_recent": "50", "store.prune_interval": "1",
                                "tx.min_gas_prices": '"0.001stake"'})
        node.start()
        node.wait_for_height(2)
        alice, bob = node.address("alice"), node.address("bob")
        node.send("alice", "bob", "1000stake")
        h = node.wait_for_height(node.height() + 1) - 1  # a committed height

        # ---- reflection
        rc, out, err = grpcurl(node, "list")
        check(rc == 0, f"grpcurl list: {rc} {err}")
        listed = out.split()
        for s in SERVICES + ["grpc.reflection.v1alpha.ServerReflection"]:
            check(s in listed, f"grpcurl list lacks {s}: {listed}")
        check(len(listed) == len(SERVICES) + 1, f"grpcurl list: unexpected services {listed}")
        rc, out, err = grpcurl(node, "describe", "cosmos.bank.v1beta1.Query.Balance")
        check(rc == 0 and "rpc Balance ( .cosmos.bank.v1beta1.QueryBalanceRequest ) returns "
              "( .cosmos.bank.v1beta1.QueryBalanceResponse )" in out, f"describe Balance: {out}{err}")
        rc, out, err = grpcurl(node, "describe", "cosmos.auth.v1beta1.BaseAccount")
        check(rc == 0 and "uint64 account_number = 3;" in out, f"describe BaseAccount: {out}{err}")
        log("reflection: list and describe answer every service")

        # ---- every method, through gRPC and through ABCI, at height h
        tx = node.build_send("alice", "bob", "5stake", sequence=1)
        validator = node.rpc("validators")["validators"][0]["address"]
        calls = {
            "cosmos.auth.v1beta1.Query/Account": {"address": alice},
            "cosmos.auth.v1beta1.Query/Params": {},
            "cosmos.auth.v1beta1.Query/AccountInfo": {"address": alice},
            "cosmos.bank.v1beta1.Query/SpendableBalanceByDenom": {"address": bob,
                                                                  "denom": "stake"},
            "cosmos.bank.v1beta1.Query/SupplyOf": {"denom": "stake"},
            "cosmos.bank.v1beta1.Query/DenomMetadata": {"denom": "stake"},  # none: NOT_FOUND
            "cosmos.bank.v1beta1.Query/Balance": {"address": bob, "denom": "stake"},
            "cosmos.bank.v1beta1.Query/Params": {},
            "kairos.auth.v1.Query/UnorderedNonce": {"signer": alice,
                                                    "timeout_unix_nanos": "1700000000000000000"},
            "kairos.locks.v1.Query/Holder": {"resource": "printer", "key": "k"},
            "kairos.locks.v1.Query/Session": {"address": alice},
            "kairos.locks.v1.Query/DepositQuote": {"address": alice},
            "kairos.locks.v1.Query/Registration": {"address": alice},
            "kairos.locks.v1.Query/Params": {},
            "kairos.locks.v1.Query/Var": {"resource": "printer", "key": "k"},
            "kairos.poa.v1.Query/Validator": {"address": validator},
            "kairos.poa.v1.Query/Authority": {},
            "kairos.poa.v1.Query/Params": {},
        }
        # Each at the latest committed height but one, at least h: the state is h's (no tx since),
        # and the height stays kept through both calls. (At h itself for all 18, at two client
        # processes per method, a slow or busy machine could pass keep_recent = 50 blocks and
        # see h pruned between the gRPC and the ABCI call.)
        for method, request in calls.items():
            check_same(node, method, request, max(h, node.height() - 1),
                       expect_ok="DenomMetadata" not in method)
        # The range scans answer at the latest height only (the store's key index is not
        # versioned; at past heights Balance per denom, Validator per address); no tx changes
        # the state meanwhile.
        for method, request in {
                "cosmos.auth.v1beta1.Query/Accounts": {"pagination": {"limit": "1"}},
                "cosmos.bank.v1beta1.Query/AllBalances": {"address": alice},
                "cosmos.bank.v1beta1.Query/SpendableBalances": {"address": alice},
                "cosmos.bank.v1beta1.Query/TotalSupply": {},
                "cosmos.bank.v1beta1.Query/DenomsMetadata": {},
                "kairos.poa.v1.Query/Validators": {}}.items():
            g = call(node, method, request, None)
            a = abci(node, method, request, 0)
            check(g[0] == a[0] == "ok" and normalize(g[1]) == normalize(a[1]),
                  f"{method}: gRPC {g}, ABCI {a}")
            log(f"{method}: gRPC = ABCI at the latest height: {json.dumps(g[1])[:100]}")
            # A past height that is still kept (h may be pruned by now on a slow machine).
            expect_error(node, method, request, 3, "latest", height=node.height() - 1)
        # Simulate runs on the latest state (the height header does not apply to it).
        g = call(node, "cosmos.tx.v1beta1.Service/Simulate",
                 {"tx_bytes": base64.b64encode(tx).decode()}, None)
        a = abci(node, "cosmos.tx.v1beta1.Service/Simulate",
                 {"tx_bytes": base64.b64encode(tx).decode()}, 0)
        check(g[0] == "ok" and a[0] == "ok" and int(normalize(g[1])["gasinfo"]["gasused"]) > 0 and
              normalize(g[1])["gasinfo"] == normalize(a[1])["gasinfo"],
              f"Simulate: gRPC {g}, ABCI {a}")
        log(f"Simulate: gas used {normalize(g[1])['gasinfo']['gasused']} through gRPC and ABCI")
        # The mempool's methods: this node's pool, no height.
        for method, request in {"kairos.mempool.v1.Query/Stats": {},
                                "kairos.mempool.v1.Query/SenderTxs": {"address": alice}}.items():
            g = call(node, method, request, None)
            a = abci(node, method, request, 0)
            check(g[0] == a[0] == "ok", f"{method}: gRPC {g}, ABCI {a}")
            log(f"{method}: {json.dumps(g[1])[:100]}")
        # The node's own config.
        g = call(node, "cosmos.base.node.v1beta1.Service/Config", {}, None)
        check(g[0] == "ok" and normalize(g[1]).get("minimumgasprice") == "0.001stake" and
              normalize(g[1]).get("pruningkeeprecent") == "50", f"Config: {g}")
        log(f"Config: {g[1]}")
        check_tendermint_service(node, h, alice)
        # Balances answer the past: bob's balance before and after the transfer.
        later = node.wait_for_height(h + 2)
        node.send("bob", "alice", "7stake")
        after = node.wait_for_height(node.height() + 1) - 1
        past = call(node, "cosmos.bank.v1beta1.Query/Balance", {"address": bob, "denom": "stake"},
                    later)
        now = call(node, "cosmos.bank.v1beta1.Query/Balance", {"address": bob, "denom": "stake"},
                   after)
        check(int(past[1]["balance"]["amount"]) - int(now[1]["balance"]["amount"]) == 7 + 2000,
              f"bob's balance at {later} {past} and at {after} {now}")

        # ---- errors: the code, and a message naming the problem
        stranger = node.add_local_key("stranger")
        check_same(node, "cosmos.auth.v1beta1.Query/Account", {"address": stranger}, after,
                   expect_ok=False)
        expect_error(node, "cosmos.auth.v1beta1.Query/Account", {"address": stranger}, 5,
                     f"account {stranger} not found")
        expect_error(node, "cosmos.bank.v1beta1.Query/Balance", {"address": "kairos1xyz",
                                                                 "denom": "stake"}, 3,
                     "invalid address")
        expect_error(node, "cosmos.bank.v1beta1.Query/Balance", {"address": bob,
                                                                 "denom": "stake"}, 3,
                     "invalid height", height=after + 1000)
        node.wait_for_height(55)  # height 2 is pruned from 53 on (store.keep_recent 50)
        expect_error(node, "cosmos.bank.v1beta1.Query/Balance", {"address": bob,
                                                                 "denom": "stake"}, 3,
                     "invalid height", height=2)
        expect_error(node, "cosmos.auth.v1beta1.Query/Params", {}, 3,
                     f'{HEIGHT_HEADER}: expected a height, a decimal integer >= 0 (0: the latest), got "yesterday"',
                     height="yesterday")
        expect_error(node, "cosmos.auth.v1beta1.Query/Params", {}, 3, '"-4"', height="-4")
        # grpcurl refuses a method reflection does not list; the server, asked anyway (a
        # method of a listed service that it does not serve), answers UNIMPLEMENTED.
        rc, out, err = grpcurl(node, "cosmos.bank.v1beta1.Query/DenomOwners")
        check(rc != 0 and "DenomOwners" in out + err, f"an unknown method answered: {out}{err}")
        log(f"an unknown method: {(out + err).strip()[:150]}")
        big = {"tx_bytes": base64.b64encode(b"\0" * (MAX_RECV + 1)).decode()}
        g = call(node, "cosmos.tx.v1beta1.Service/Simulate", big, None)
        check(g[0] == "error" and g[1] == 8, f"a request over max_recv_msg_bytes: {g}")
        log(f"a request over the limit: code 8: {g[2][:120]}")

        # The node went on: more blocks, the same app hash as the header says.
        node.wait_for_height(node.height() + 2)
        node.check_app_hash()
        node.check_no_sanitizer_reports()


if __name__ == "__main__":
    harness.main(test_grpc)
