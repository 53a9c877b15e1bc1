// CosmJS against a Kairos node, for test/e2e/test_cosmjs.py.
//
//   node send.mjs '<json config>'
//
// config: {"rpc": "http://127.0.0.1:PORT", "mnemonic": "...", "to": "kairos1...",
//          "amount": "1234", "denom": "stake", "missing": "kairos1... (an address with no account)",
//          "fee": {"amount": [{"denom": "stake", "amount": "5000"}], "gas": "200000"},
//          "gas_price": "0.025stake"}
//
// Derives the wallet's address (prefix kairos), connects a SigningStargateClient, reads the
// account, sequence and balance, sends `amount` twice with sendTokens (the fixed fee, then
// "auto", which simulates), reads everything again and finds the first tx with getTx. Prints
// one JSON object on stdout (bigints as strings). A failed "auto" send is reported in
// out.auto.error and the rest goes on; any other failure prints {"error": "..."} and exits 1.
import { DirectSecp256k1HdWallet } from "@cosmjs/proto-signing";
import { GasPrice, SigningStargateClient } from "@cosmjs/stargate";

const toJson = (value) =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v));

function accountJson(a) {
  if (a === null) return null;
  return {
    address: a.address,
    pubkey: a.pubkey, // {type, value} (amino JSON) or null
    accountNumber: a.accountNumber,
    sequence: a.sequence,
  };
}

function resultJson(r) {
  return {
    code: r.code,
    height: r.height,
    txIndex: r.txIndex,
    transactionHash: r.transactionHash,
    gasWanted: r.gasWanted,
    gasUsed: r.gasUsed,
    rawLog: r.rawLog ?? "",
    eventTypes: (r.events ?? []).map((e) => e.type),
  };
}

async function main() {
  const cfg = JSON.parse(process.argv[2] ?? "{}");
  const out = {};
  const wallet = await DirectSecp256k1HdWallet.fromMnemonic(cfg.mnemonic, { prefix: "kairos" });
  const [account] = await wallet.getAccounts();
  const from = account.address;
  out.address = from;
  out.pubkey = Buffer.from(account.pubkey).toString("base64");

  const client = await SigningStargateClient.connectWithSigner(cfg.rpc, wallet, {
    gasPrice: GasPrice.fromString(cfg.gas_price ?? "0.025stake"),
  });
  out.chainId = await client.getChainId();
  const snapshot = async () => ({
    height: await client.getHeight(),
    balance: await client.getBalance(from, cfg.denom),
    toBalance: await client.getBalance(cfg.to, cfg.denom),
    account: accountJson(await client.getAccount(from)),
    sequence: await client.getSequence(from),
  });
  out.before = await snapshot();
  out.missingAccount = accountJson(await client.getAccount(cfg.missing));

  const coins = [{ denom: cfg.denom, amount: cfg.amount }];
  const fixed = await client.sendTokens(from, cfg.to, coins, cfg.fee, "cosmjs fixed fee");
  out.fixed = resultJson(fixed);
  try {
    const auto = await client.sendTokens(from, cfg.to, coins, "auto", "cosmjs auto fee");
    out.auto = resultJson(auto);
  } catch (e) {
    out.auto = { error: String(e?.message ?? e) }; // reported by the test after the rest
  }
  out.after = await snapshot();

  const found = await client.getTx(fixed.transactionHash);
  out.getTx = found && {
    height: found.height,
    hash: found.hash,
    code: found.code,
    txBase64: Buffer.from(found.tx).toString("base64"),
  };
  client.disconnect();
  return out;
}

try {
  console.log(toJson(await main()));
} catch (e) {
  console.log(toJson({ error: String(e?.stack ?? e) }));
  process.exit(1);
}
