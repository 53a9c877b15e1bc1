// REST (LCD) clients we did not write, against a Kairos node, for test/e2e/test_rest_clients.py.
//
//   node [--experimental-websocket] clients.mjs keplr '<json config>'
//   node clients.mjs lcd '<json config>'
//   node clients.mjs tx '<json config>'
//
// keplr: Keplr's @keplr-wallet/chain-validator, as Keplr runs it when a chain is suggested:
//   validateBasicChainInfoType (the schema), checkRPCConnectivity (CometBFT's /status chain id and
//   its /websocket), checkRestConnectivity (the LCD's node_info chain id), checkChainFeatures (the
//   REST probes that turn on features). Then the same with a chain id the node does not have and
//   a chain info without fee currencies, which must be refused.
//   config: {"chainInfo": {...}, "wrongChainId": "..."}
// lcd: the Telescope-generated LCD query clients of `interchain` over @cosmology/lcd's LCDClient
//   (as front-ends built with Telescope use them): balances, account, supply, bank params, node
//   info; and bad input (a wrong path, a bad address, an address without an account).
//   config: {"rest": "http://...", "address": "kairos1...", "missing": "kairos1...", "denom"}
// tx: a front-end's send: the account through the LCD, a MsgSend signed offline by CosmJS, a
//   Simulate POST, the gas from it, a broadcast POST (BROADCAST_MODE_SYNC), GetTx until it lands,
//   GetTxsEvent of the recipient, the balances before and after; and malformed broadcasts.
//   config: {"rest", "chainId", "mnemonic", "to", "amount", "denom", "fee"}
//
// Prints one JSON object on its last stdout line (bigints as strings). An HTTP error a client
// surfaces is reported as {"status", "data"} (axios's response); any other failure prints
// {"error": "..."} and exits 1. Keplr's validator logs to stdout too (console.log): the caller
// reads the last line only.
import {
  checkChainFeatures,
  checkRPCConnectivity,
  checkRestConnectivity,
  validateBasicChainInfoType,
} from "@keplr-wallet/chain-validator";
import { LCDClient } from "@cosmology/lcd";
import { DirectSecp256k1HdWallet } from "@cosmjs/proto-signing";
import { SigningStargateClient } from "@cosmjs/stargate";
import { cosmos } from "interchain";

const toJson = (value) =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v));

// What a client surfaces of a failed call: the HTTP status and body (axios), or the message.
async function outcome(promise) {
  try {
    return { ok: await promise };
  } catch (e) {
    if (e && e.response) return { status: e.response.status, data: e.response.data };
    return { error: String(e && e.message ? e.message : e) };
  }
}

async function refusal(promise) {
  try {
    await promise;
    return null; // accepted
  } catch (e) {
    return String(e && e.message ? e.message : e);
  }
}

async function keplr(config) {
  const info = config.chainInfo;
  const out = {};
  out.validated = await validateBasicChainInfoType(info);
  out.rpc = await refusal(checkRPCConnectivity(info.chainId, info.rpc));
  out.rest = await refusal(checkRestConnectivity(info.chainId, info.rest));
  out.features = await checkChainFeatures(info);
  out.wrongRpc = await refusal(checkRPCConnectivity(config.wrongChainId, info.rpc));
  out.wrongRest = await refusal(checkRestConnectivity(config.wrongChainId, info.rest));
  const { feeCurrencies: _dropped, ...noFees } = info;
  out.noFeeCurrencies = await refusal(validateBasicChainInfoType(noFees));
  return out;
}

async function lcdClients(rest) {
  const requestClient = new LCDClient({ restEndpoint: rest });
  const client = await cosmos.ClientFactory.createLCDClient({ restEndpoint: rest });
  return { requestClient, bank: client.cosmos.bank.v1beta1, auth: client.cosmos.auth.v1beta1,
           tx: client.cosmos.tx.v1beta1 };
}

async function lcd(config) {
  const { requestClient, bank, auth } = await lcdClients(config.rest);
  const { address, denom } = config;
  return {
    allBalances: await outcome(bank.allBalances({ address })),
    // A PageRequest as front-ends make it (fromPartial): every field set, the key empty.
    allBalancesPaged: await outcome(bank.allBalances({
      address, pagination: cosmos.base.query.v1beta1.PageRequest.fromPartial(
        { limit: 10n, countTotal: true }) })),
    balance: await outcome(bank.balance({ address, denom })),
    spendableBalances: await outcome(bank.spendableBalances({ address })),
    account: await outcome(auth.account({ address })),
    totalSupply: await outcome(bank.totalSupply()),
    supplyOf: await outcome(bank.supplyOf({ denom })),
    bankParams: await outcome(bank.params()),
    nodeInfo: await outcome(requestClient.get("cosmos/base/tendermint/v1beta1/node_info")),
    // ---- bad input, as the client surfaces it
    wrongPath: await outcome(requestClient.get("cosmos/bank/v1beta1/no/such/path")),
    badAddress: await outcome(bank.allBalances({ address: "kairos1xyz" })),
    badAddressBalance: await outcome(bank.balance({ address: "kairos1xyz", denom })),
    missingAccount: await outcome(auth.account({ address: config.missing })),
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function tx(config) {
  const { requestClient, bank, auth, tx: txq } = await lcdClients(config.rest);
  const wallet = await DirectSecp256k1HdWallet.fromMnemonic(config.mnemonic, { prefix: "kairos" });
  const [{ address }] = await wallet.getAccounts();
  const signer = await SigningStargateClient.offline(wallet);
  const out = { address };

  const { account } = await auth.account({ address });
  out.account = account;
  const signerData = { accountNumber: Number(account.account_number),
                       sequence: Number(account.sequence), chainId: config.chainId };
  const send = { typeUrl: "/cosmos.bank.v1beta1.MsgSend",
                 value: { fromAddress: address, toAddress: config.to,
                          amount: [{ denom: config.denom, amount: config.amount }] } };
  const signed = async (gas) => {
    const raw = await signer.sign(address, [send], { amount: [config.fee], gas: String(gas) },
                                  "rest clients e2e", signerData);
    return Buffer.from(cosmos.tx.v1beta1.TxRaw.encode(raw).finish()).toString("base64");
  };
  out.toBefore = (await bank.balance({ address: config.to, denom: config.denom })).balance;

  // Simulate, then the gas limit from it as a wallet sets it (x1.5).
  out.simulate = await outcome(
    requestClient.post("cosmos/tx/v1beta1/simulate", { tx_bytes: await signed(200000) }));
  if (!out.simulate.ok) return out;
  out.gasLimit = Math.ceil(Number(out.simulate.ok.gas_info.gas_used) * 1.5);
  out.txBytes = await signed(out.gasLimit);

  out.broadcast = await outcome(requestClient.post(
    "cosmos/tx/v1beta1/txs", { tx_bytes: out.txBytes, mode: "BROADCAST_MODE_SYNC" }));
  if (!out.broadcast.ok) return out;
  const hash = out.broadcast.ok.tx_response.txhash;
  // GetTx answers NotFound (HTTP 404) until the tx is in a block.
  out.getTxPolls = 0;
  for (;;) {
    out.getTxPolls++;
    out.getTx = await outcome(txq.getTx({ hash }));
    if (out.getTx.status !== 404 || out.getTxPolls >= 150) break;
    await sleep(200);
  }
  // The recipient's history, as a wallet asks for it (SDK 0.50's query; order_by 2 = DESC).
  out.txsEvent = await outcome(txq.getTxsEvent({ query: `transfer.recipient='${config.to}'`,
                                                 orderBy: 2, page: 1n, limit: 10n }));
  out.toAfter = (await bank.balance({ address: config.to, denom: config.denom })).balance;
  out.fromAfter = (await bank.balance({ address, denom: config.denom })).balance;

  // ---- bad input: tx_bytes that are not base64, a mode that does not exist
  out.badTxBytes = await outcome(requestClient.post(
    "cosmos/tx/v1beta1/txs", { tx_bytes: "not base64!", mode: "BROADCAST_MODE_SYNC" }));
  out.badMode = await outcome(requestClient.post(
    "cosmos/tx/v1beta1/txs", { tx_bytes: out.txBytes, mode: "BROADCAST_MODE_NOPE" }));
  return out;
}

const [mode, configJson] = process.argv.slice(2);
const modes = { keplr, lcd, tx };
try {
  if (!modes[mode]) throw new Error(`unknown mode ${mode} (keplr, lcd or tx)`);
  console.log(toJson(await modes[mode](JSON.parse(configJson))));
} catch (e) {
  console.log(toJson({ error: String(e && e.stack ? e.stack : e) }));
  process.exit(1);
}
