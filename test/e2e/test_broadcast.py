#!/usr/bin/env python3
"""cosmos.tx.v1beta1.Service's BroadcastTx, GetTx and GetTxsEvent (app/api/tx_service.h), at the
Cosmos SDK's REST paths and over gRPC (grpcurl):

On CometBFT v0.38 (the flood mempool: broadcasts go through CometBFT's RPC):
- POST /cosmos/tx/v1beta1/txs (SYNC) answers the SDK's TxResponse with code 0 and the tx's
  hash; the tx lands; GET /cosmos/tx/v1beta1/txs/{hash} returns it decoded (the MsgSend with its
  "@type"), with its height, code, gas, events and the block's time (RFC 3339, seconds);
- GET /cosmos/tx/v1beta1/txs?query=... (GetTxsEvent) finds the sender's txs in both orders,
  pages by limit, and counts them in total;
- BroadcastTx over gRPC (ASYNC) answers the hash, and that tx lands too;
- a tx CheckTx refuses is a TxResponse with its code (200, not an error), as in the SDK; the same
  tx again is CometBFT's cache refusal as the SDK's code 19;
- bad input: an empty tx, BROADCAST_MODE_BLOCK, a bad hash, an unknown hash (404), an empty query,
  a query CometBFT cannot parse: each the right status and message.

On CometBFT v0.40 with its app mempool (direct ingestion): kairosd's CometBFT RPC address is
pointed at a closed port, so a broadcast can only succeed by going straight into kairosd's
mempool. POST /cosmos/tx/v1beta1/txs answers the check (code 0, gas), and the tx lands in a
block (CometBFT's own /tx finds it); ASYNC answers at once; a refused tx answers
its code and the app's log; GetTx answers UNAVAILABLE (503) naming the RPC it could not reach;
and `kairosd bench load --api` sends a short run through the same door, every tx included."""

import base64
import json
import re
import socket

import harness
from harness import check, log
from test_rest import rest, check_error
from test_grpc import grpcurl, normalize


def post_tx(node, tx, mode="BROADCAST_MODE_SYNC"):
    return rest(node, "/cosmos/tx/v1beta1/txs",
                {"tx_bytes": base64.b64encode(tx).decode(), "mode": mode})


def wait_get_tx(node, txhash):
    def found():
        st, body, _ = rest(node, f"/cosmos/tx/v1beta1/txs/{txhash}")
        return body if st == 200 else None
    return harness.poll(found, 60, f"GET /cosmos/tx/v1beta1/txs/{txhash}")


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def through_cometbft():
    with harness.Node("broadcast", accounts={"alice": harness.GENESIS_COINS,
                                             "bob": harness.GENESIS_COINS},
                      app_mempool=False) as node:
        node.start()
        node.wait_for_height(2)
        alice, bob = node.address("alice"), node.address("bob")
        before = node.balance("bob")

        tx = node.build_send("alice", "bob", "700stake", sequence=0)
        st, body, _ = post_tx(node, tx)
        check(st == 200 and body["tx_response"]["code"] == 0 and
              body["tx_response"]["txhash"] == harness.tx_hash(tx),
              f"POST /cosmos/tx/v1beta1/txs: {st} {body}")
        log(f"POST txs (SYNC): code 0, txhash {body['tx_response']['txhash'][:16]}...")
        got = wait_get_tx(node, harness.tx_hash(tx))
        r = got["tx_response"]
        check(r["code"] == 0 and int(r["height"]) > 0 and int(r["gas_used"]) > 0 and
              int(r["gas_wanted"]) >= int(r["gas_used"]) and r["txhash"] == harness.tx_hash(tx),
              f"GET txs/{{hash}}: {got}")
        check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["timestamp"]) is not None,
              f"timestamp {r['timestamp']!r} is not RFC 3339 in seconds")
        block_time = node.block(int(r["height"]))["header"]["time"]
        check(block_time.startswith(r["timestamp"][:-1]), f"timestamp {r['timestamp']} is not the "
              f"block's time {block_time}")
        msg = got["tx"]["body"]["messages"][0]
        check(msg["@type"] == "/cosmos.bank.v1beta1.MsgSend" and msg["from_address"] == alice and
              msg["to_address"] == bob and msg["amount"] == [{"denom": "stake", "amount": "700"}],
              f"the decoded tx: {got['tx']}")
        check(r["tx"]["@type"] == "/cosmos.tx.v1beta1.Tx" and r["tx"]["body"] == got["tx"]["body"],
              f"tx_response.tx: {r['tx']}")
        check(any(e["type"] == "transfer" for e in r["events"]), f"events: {r['events']}")
        check(node.balance("bob") == before + 700, "bob's balance did not rise by 700")
        log(f"GET txs/{{hash}}: height {r['height']}, gas {r['gas_used']}/{r['gas_wanted']}, "
            f"{len(r['events'])} events, at {r['timestamp']}")

        # Over gRPC, ASYNC: the hash at once, and the tx lands.
        tx2 = node.build_send("alice", "bob", "11stake", sequence=1)
        rc, out, err = grpcurl(node, "cosmos.tx.v1beta1.Service/BroadcastTx",
                               data={"tx_bytes": base64.b64encode(tx2).decode(),
                                     "mode": "BROADCAST_MODE_ASYNC"})
        check(rc == 0 and normalize(json.loads(out))["txresponse"]["txhash"] ==
              harness.tx_hash(tx2), f"gRPC BroadcastTx: {rc} {out} {err}")
        wait_get_tx(node, harness.tx_hash(tx2))
        log("gRPC BroadcastTx (ASYNC): landed")

        # GetTxsEvent: both of alice's sends, in both orders, a page of one, and the total.
        q = f"message.sender='{alice}'"
        st, body, _ = rest(node, f"/cosmos/tx/v1beta1/txs?query={q}&order_by=ORDER_BY_ASC")
        hashes = [t["txhash"] for t in body.get("tx_responses", [])]
        check(st == 200 and hashes == [harness.tx_hash(tx), harness.tx_hash(tx2)] and
              body["total"] == "2" and len(body["txs"]) == 2, f"GetTxsEvent asc: {st} {body}")
        st, body, _ = rest(node, f"/cosmos/tx/v1beta1/txs?query={q}&order_by=ORDER_BY_DESC"
                                 "&limit=1&page=1")
        check(st == 200 and [t["txhash"] for t in body["tx_responses"]] == hashes[1:] and
              body["total"] == "2", f"GetTxsEvent desc, limit 1: {st} {body}")
        st, body, _ = rest(node, f"/cosmos/tx/v1beta1/txs?events={q}&page=2&limit=1")
        check(st == 200 and [t["txhash"] for t in body["tx_responses"]] == hashes[1:],
              f"GetTxsEvent by the deprecated events, page 2: {st} {body}")
        log("GetTxsEvent: asc, desc, pages and the deprecated events field agree")

        # A tx CheckTx refuses is an answer with its code; the same tx again, CometBFT's cache.
        stale = node.build_send("alice", "bob", "1stake", sequence=0)
        st, body, _ = post_tx(node, stale)
        check(st == 200 and body["tx_response"]["code"] == harness.CODE_WRONG_SEQUENCE and
              body["tx_response"]["codespace"] == "sdk" and
              "sequence" in body["tx_response"]["raw_log"], f"a stale sequence: {st} {body}")
        st, body, _ = post_tx(node, tx)
        check(st == 200 and body["tx_response"]["code"] == harness.CODE_TX_IN_MEMPOOL and
              "already exists in cache" in body["tx_response"]["raw_log"],
              f"the same tx again: {st} {body}")
        log("refused txs: code 32 (sequence), code 19 (CometBFT's cache)")

        # Bad input.
        check_error(rest(node, "/cosmos/tx/v1beta1/txs", {"tx_bytes": "", "mode":
                                                          "BROADCAST_MODE_SYNC"}),
                    400, 3, "invalid empty tx")
        check_error(post_tx(node, tx, "BROADCAST_MODE_BLOCK"), 400, 3,
                    "unsupported broadcast mode BROADCAST_MODE_BLOCK")
        check_error(post_tx(node, tx, "BROADCAST_MODE_UNSPECIFIED"), 400, 3,
                    "unsupported broadcast mode")
        check_error(rest(node, "/cosmos/tx/v1beta1/txs/xyz"), 400, 3, "not a SHA-256 hash")
        check_error(rest(node, "/cosmos/tx/v1beta1/txs/" + "AB" * 32), 404, 5,
                    "tx not found: " + "AB" * 32)
        check_error(rest(node, "/cosmos/tx/v1beta1/txs"), 400, 3, "query cannot be empty")
        check_error(rest(node, "/cosmos/tx/v1beta1/txs?query=((("), 400, 3, "tx_search")

        node.wait_for_height(node.height() + 2)
        node.check_app_hash()
        node.check_no_sanitizer_reports()


def direct_ingestion():
    with harness.Node("broadcast-direct", accounts={"alice": harness.GENESIS_COINS,
                                                    "bob": harness.GENESIS_COINS,
                                                    "carol": harness.GENESIS_COINS},
                      app_mempool=True) as node:
        dead = closed_port()
        node.configure_kairosd({"query.cometbft_rpc": f'"http://127.0.0.1:{dead}"'})
        node.start()
        node.wait_for_height(2)
        account_number = int(node.account("alice")["account"]["account_number"])
        before = node.balance("bob")

        # Until CometBFT has called ReapTxs, kairosd cannot know it runs the app mempool, and
        # would go through the RPC (here: a closed port). ReapTxs comes every 500 ms.
        tx = node.build_send("alice", "bob", "900stake", account_number=account_number,
                             sequence=0)

        def accepted():
            st, body, _ = post_tx(node, tx)
            return body if st == 200 else None
        body = harness.poll(accepted, 30, "a direct broadcast", interval=0.5)
        r = body["tx_response"]
        check(r["code"] == 0 and r["txhash"] == harness.tx_hash(tx) and int(r["gas_wanted"]) > 0,
              f"direct broadcast: {body}")
        log(f"direct POST txs: code 0, gas wanted {r['gas_wanted']}, with CometBFT's RPC "
            f"unreachable from kairosd")
        res = node.wait_tx(tx)
        check(res["code"] == 0, f"the tx's result: {res}")
        check(node.balance("bob") == before + 900, "bob's balance did not rise by 900")
        log(f"it landed at height {res['height']}")

        stale = node.build_send("alice", "bob", "1stake", account_number=account_number,
                                sequence=0)
        st, body, _ = post_tx(node, stale)
        check(st == 200 and body["tx_response"]["code"] == harness.CODE_WRONG_SEQUENCE and
              "sequence" in body["tx_response"]["raw_log"], f"a stale sequence: {st} {body}")
        st, body, _ = post_tx(node, node.build_send("alice", "bob", "2stake",
                                                    account_number=account_number, sequence=1),
                              "BROADCAST_MODE_ASYNC")
        check(st == 200 and body["tx_response"]["code"] == 0, f"direct ASYNC: {st} {body}")
        check_error(rest(node, f"/cosmos/tx/v1beta1/txs/{harness.tx_hash(tx)}"), 503, 14,
                    f"127.0.0.1:{dead}")

        # The load generator through the same door (kairosd bench load --api): every tx is
        # accepted by kairosd and included, none refused.
        p = node.cli("bench", "load", "--rate", "40", "--duration", "3s", "--accounts", "4",
                     "--fund-from", "carol", "--fund-amount", "1000000stake",
                     "--node", node.node_url, "--api", f"http://127.0.0.1:{node.api_port}",
                     "--drain", "30s", "--output", "json", timeout=180)
        r = json.loads(p.out)
        check(r["sent"] == r["planned"] == r["accepted"] == r["included"] > 0 and
              not r["rejections"] and r["included_failed"] == 0,
              f"bench load --api: {json.dumps(r)[:600]}")
        log(f"bench load --api: {r['included']} of {r['planned']} txs sent through REST "
            f"included, p50 {r['latency_ms']['p50']} ms")

        node.wait_for_height(node.height() + 2)
        node.check_app_hash()
        node.check_no_sanitizer_reports()


def test_broadcast():
    through_cometbft()
    direct_ingestion()


if __name__ == "__main__":
    harness.main(test_broadcast)
