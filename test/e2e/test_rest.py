#!/usr/bin/env python3
"""kairosd's REST API, the LCD (app/api/rest_gateway.h, rest_server.h), over plain HTTP against
one node on CometBFT v0.38, at the Cosmos SDK's paths:

- balances (all, and by denom with a query parameter), an account (an Any with "@type"), params,
  supply, the node's config and node info (what Keplr checks), a block, a Simulate POST: each answer equals the ABCI query's
  (`kairosd query method`), in the SDK's JSON (proto names, int64 as strings, defaults printed);
- a past height through the x-cosmos-block-height header, echoed in the answer;
- bad input gets grpc-gateway's error body ({"code", "message", "details"}) and HTTP status: an
  unknown path (404), a wrong method (405), a bad address (400), a missing account (404), a bad
  query parameter (400), malformed JSON (400), a body over api.max_body_bytes (413); a huge
  page size is cut to the maximum; and the node goes on making blocks."""

import base64
import json
import urllib.error
import urllib.request

import harness
from harness import check, log

MAX_BODY = 4096  # api.max_body_bytes of the test node


def rest(node, path, body=None, method=None, headers=None):
    """(status, JSON body, headers) of one request."""
    data = None if body is None else (body if isinstance(body, bytes) else
                                      json.dumps(body).encode())
    req = urllib.request.Request(f"http://127.0.0.1:{node.api_port}{path}", data=data,
                                 method=method or ("POST" if data is not None else "GET"),
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null"), dict(r.headers)
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            return e.code, json.loads(text), dict(e.headers)
        except ValueError:
            return e.code, text.decode(errors="replace"), dict(e.headers)


def abci(node, method, request, height=0):
    p = node.cli("query", "method", method, json.dumps(request), "--height", str(height),
                 "--node", node.node_url)
    return json.loads(p.out)


def without_empty(v):
    """The REST JSON prints defaults (as the SDK's); `kairosd query method` leaves them out."""
    if isinstance(v, dict):
        out = {k: without_empty(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x not in ("", "0", 0, False, None, [], {})}
    if isinstance(v, list):
        return [without_empty(x) for x in v]
    return v


def check_error(got, status, code, text):
    st, body, _ = got
    check(st == status and isinstance(body, dict) and body.get("code") == code and
          text in body.get("message", "") and body.get("details") == [],
          f"expected HTTP {status} code {code} with {text!r}, got {st} {body}")
    log(f"HTTP {status} code {code}: {body['message'][:110]}")


def test_rest():
    with harness.Node("rest", accounts={"alice": harness.GENESIS_COINS,
                                         "bob": harness.GENESIS_COINS}) as node:
        node.configure_kairosd({"api.max_body_bytes": str(MAX_BODY)})
        node.start()
        node.wait_for_height(2)
        alice, bob = node.address("alice"), node.address("bob")
        node.send("alice", "bob", "1000stake")
        h = node.wait_for_height(node.height() + 1) - 1

        st, body, hdr = rest(node, f"/cosmos/bank/v1beta1/balances/{alice}")
        check(st == 200 and body == abci(node, "cosmos.bank.v1beta1.Query/AllBalances",
                                         {"address": alice}) | {"pagination": body["pagination"]},
              f"all balances: {st} {body}")
        check(body["balances"][0]["denom"] == "stake", f"all balances: {body}")
        st, body, hdr = rest(node, f"/cosmos/bank/v1beta1/balances/{bob}/by_denom?denom=stake",
                             headers={"x-cosmos-block-height": str(h)})
        want = abci(node, "cosmos.bank.v1beta1.Query/Balance", {"address": bob, "denom": "stake"},
                    h)
        check(st == 200 and body == want, f"balance at {h}: {st} {body}, ABCI {want}")
        echoed = {k.lower(): v for k, v in hdr.items()}.get("x-cosmos-block-height")
        check(echoed == str(h), f"the answer's height header {echoed}, asked {h}: {hdr}")
        st, body, _ = rest(node, f"/cosmos/auth/v1beta1/accounts/{alice}")
        check(st == 200 and body["account"]["@type"] == "/cosmos.auth.v1beta1.BaseAccount" and
              body["account"]["address"] == alice and
              body["account"]["pub_key"]["@type"] == "/cosmos.crypto.secp256k1.PubKey" and
              isinstance(body["account"]["account_number"], str),
              f"account: {st} {body}")
        check(without_empty(body) == without_empty(abci(node, "cosmos.auth.v1beta1.Query/Account",
                                                        {"address": alice})),
              f"account: REST {body} != ABCI")
        for path, method in (("/cosmos/auth/v1beta1/params", "cosmos.auth.v1beta1.Query/Params"),
                             ("/cosmos/bank/v1beta1/params", "cosmos.bank.v1beta1.Query/Params"),
                             ("/cosmos/bank/v1beta1/supply/by_denom?denom=stake",
                              "cosmos.bank.v1beta1.Query/SupplyOf")):
            st, body, _ = rest(node, path)
            request = {"denom": "stake"} if "denom=" in path else {}
            check(st == 200 and without_empty(body) == without_empty(abci(node, method, request)),
                  f"{path}: {st} {body}")
            log(f"GET {path}: {json.dumps(body)[:100]}")
        # What Keplr's chain validator reads of a REST endpoint: the node's chain id.
        st, body, _ = rest(node, "/cosmos/base/tendermint/v1beta1/node_info")
        check(st == 200 and body["default_node_info"]["network"] == node.chain_id(),
              f"node_info: {st} {body}")
        st, body, _ = rest(node, f"/cosmos/base/tendermint/v1beta1/blocks/{h}")
        check(st == 200 and body["sdk_block"]["header"]["height"] == str(h) and
              body["sdk_block"]["header"]["proposer_address"].startswith("kairosvalcons1"),
              f"block {h}: {st} {json.dumps(body)[:300]}")
        st, body, _ = rest(node, "/cosmos/base/node/v1beta1/config")
        check(st == 200 and "minimum_gas_price" in body and body["pruning_keep_recent"] == "100",
              f"node config: {st} {body}")
        tx = node.build_send("alice", "bob", "5stake", sequence=1)
        st, body, _ = rest(node, "/cosmos/tx/v1beta1/simulate",
                           {"tx_bytes": base64.b64encode(tx).decode()})
        check(st == 200 and int(body["gas_info"]["gas_used"]) > 0, f"simulate: {st} {body}")
        log(f"POST simulate: gas used {body['gas_info']['gas_used']}")
        st, body, _ = rest(node, "/cosmos/auth/v1beta1/accounts?pagination.limit=100000")
        check(st == 200 and 0 < len(body["accounts"]) <= 100, f"a huge page size: {st} {body}")

        # ---- bad input
        check_error(rest(node, "/cosmos/bank/v1beta1/nothing/here"), 404, 5, "/cosmos/bank")
        check_error(rest(node, f"/cosmos/bank/v1beta1/balances/{alice}", body={}), 405, 12, "")
        check_error(rest(node, "/cosmos/bank/v1beta1/balances/kairos1xyz"), 400, 3,
                    "invalid address")
        stranger = node.add_local_key("stranger")
        check_error(rest(node, f"/cosmos/auth/v1beta1/accounts/{stranger}"), 404, 5,
                    f"account {stranger} not found")
        check_error(rest(node, "/cosmos/auth/v1beta1/accounts?pagination.limit=ten"), 400, 3,
                    "pagination.limit")
        check_error(rest(node, "/cosmos/tx/v1beta1/simulate", body=b"{not json"), 400, 3, "")
        st, body, _ = rest(node, "/cosmos/tx/v1beta1/simulate",
                           body=json.dumps({"tx_bytes": "A" * (MAX_BODY + 8)}).encode())
        check(st == 413, f"a body over api.max_body_bytes: {st} {body}")
        log(f"a body over the limit: HTTP {st}")

        node.wait_for_height(node.height() + 2)
        node.check_app_hash()
        node.check_no_sanitizer_reports()


if __name__ == "__main__":
    harness.main(test_rest)
