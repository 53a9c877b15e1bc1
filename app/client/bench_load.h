// `kairosd bench load`: a load generator for a running chain (the localnet of scripts/localnet.sh,
// or any CometBFT node set), and its baseline mode against CometBFT's built-in kvstore app.
//
//   kairosd bench load --rate N --duration S --accounts K --unordered-share P --node URL...
//
// What it does, in order (app/client/README.md has every flag):
//  1. Bench accounts: K secp256k1 keys derived from --seed (entropy = SHA-256(prefix + seed) as a
//     24-word BIP-39 mnemonic, then m/44'/118'/0'/0/i), so every run and every tool finds the
//     same K addresses. With --fund-from KEY (a keyring key), the accounts short of coins for the
//     run are first sent --fund-amount each, up to 100 MsgSends per tx, and the funding txs are
//     waited for. Then each account's number and sequence are queried; an account without coins
//     enough for its share of the run is an error naming it.
//  2. Every tx is signed before the clock starts: tx j comes from account j % K, sends --amount
//     to account (j + 1) % K, and is due at t0 + j / rate. A fraction P of them (spread evenly)
//     are unordered (ADR-070: sequence 0, timeout_timestamp = signing time + due + --unordered-ttl,
//     distinct per tx); the others use the account's next sequence. Account a's txs always go to
//     node a % N (so one account's sequences reach one mempool in order). Each HTTP request
//     (JSON-RPC broadcast_tx_sync, or with --api kairosd's REST POST /cosmos/tx/v1beta1/txs) is
//     encoded in advance too.
//  3. Sending: --connections keep-alive HTTP connections per node (C++20 coroutines on one
//     thread) each take the node's next tx, wait for its due time and send it. A node that is
//     down costs the txs due to it meanwhile (counted as RPC errors), nothing else.
//  4. A follower thread reads every new block (/block) from the first node that answers (in
//     --node order) and matches tx hashes. Inclusion latency = the moment the follower fetched
//     the block (polled every 50 ms while waiting) minus the moment the tx's request was
//     written. It stops once every accepted tx is in a block, or --drain after the last send;
//     then it reads /block_results of the blocks holding the run's txs for their result codes
//     (after the run: rendering a Cosmos app's events as JSON costs the node more CPU than the
//     block itself, so asking for them per block would load the network being measured).
// Report: sent, accepted (CheckTx code 0), rejections by code (and RPC errors by message),
// included, included with a failing DeliverTx code, TPS = included / max(send span, last
// inclusion - t0), latency p50/p99/max over the accepted txs (one never included counts as
// infinitely late, so p99 is "none" when over 1% are missing), and the send rate reached.
//
// --kvstore: the same run against CometBFT's kvstore app: no accounts, no signing; tx j is
// "bench-<run id>-<j>=<random letters>" padded to --tx-size bytes (default: the size of this
// run's signed transfers, computed offline), which kvstore accepts (one '=').
//
// --tx-log FILE writes one line per tx after the run, for tests:
//   <hash hex> <account> <u|o> <node> <CheckTx code, or -1 for an RPC error, -2 never sent>
//   <height, 0 if not seen in a block>
//
// Threads: the main thread (CLI, signing, the send loop's io_context) and the follower thread.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace kairos::client {

// Registers `bench load` on `app`. `home` as for AddClientCommands (the keyring of --fund-from).
void AddBenchCommands(CLI::App& app, const std::string& home);

}  // namespace kairos::client
