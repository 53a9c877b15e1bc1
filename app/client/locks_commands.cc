#include "app/client/locks_commands.h"

#include <charconv>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "app/client/chain_queries.h"
#include "app/client/cli_util.h"
#include "app/client/params_commands.h"
#include "app/locks/keeper.h"
#include "app/locks/msg_server.h"
#include "app/locks/queries.h"
#include "crypto/bech32.h"
#include "kairos/locks/v1/query.pb.h"
#include "app/locks/msgs.h"

namespace kairos::client {

namespace {

namespace lpb = kairos::locks::v1;

struct LocksTxFlags {
  std::string from;
  std::string address;  // refund-registration ADDRESS, release HOLDER
  std::vector<std::string> slots;  // acquire
  std::string slot;                // write
  std::string op;
  std::string value;
  std::string max_deposit;
  bool no_simulate = false;
  TxFlags tx;
};

struct LocksQueryFlags {
  std::string target;  // SLOT or ADDRESS
  std::string node;  // "" = client.toml's
  std::int64_t height = 0;
  std::string output;  // "" = client.toml's
};

std::string Path(std::string_view name) {
  return std::string(app::locks::kQueryPathPrefix) + std::string(name);
}

template <class Response>
Response Ask(RpcClient& rpc, std::string_view name, const google::protobuf::MessageLite& request,
             std::int64_t height, std::int64_t* at = nullptr) {
  Response response;
  const std::int64_t h = Take(QueryProto(rpc, Path(name), request, height, &response),
                              kExitFailure, "query locks " + std::string(name) + ": ");
  if (at) *at = h;
  return response;
}

std::string Raw(const std::string& bech32) { return *crypto::DecodeAccountAddress(bech32); }

// An optional ADDRESS argument (an address or a key name), FROM's address when absent.
std::string AddressOrFrom(const Keyring& keyring, const std::string& text, const KeyInfo& from) {
  return text.empty() ? from.address : Take(ResolveAddress(keyring, text), kExitUsage);
}

// "1000" or "1000stake" (the denom must then be the chain's).
ante::Uint256 ParseMaxDeposit(const std::string& text, RpcClient& rpc) {
  const std::size_t digits = text.find_first_not_of("0123456789");
  const ante::Uint256 amount =
      Take(ante::ParseAmount(text.substr(0, digits)), kExitUsage, "--max-deposit: ");
  if (digits != std::string::npos) {
    const auto params = Ask<lpb::QueryParamsResponse>(rpc, "Params", lpb::QueryParamsRequest(), 0);
    if (text.substr(digits) != params.denom()) {
      Fail(kExitUsage, "--max-deposit: deposits are paid in " + params.denom() + ", not '" +
                           text.substr(digits) + "'");
    }
  }
  return amount;
}

// The max_deposit of an Acquire or Write: --max-deposit, else the deposit quoted now.
ante::Uint256 MaxDeposit(const LocksTxFlags& f, const KeyInfo& from, RpcClient& rpc) {
  if (!f.max_deposit.empty()) return ParseMaxDeposit(f.max_deposit, rpc);
  lpb::QueryDepositQuoteRequest q;
  q.set_address(from.address);
  const auto quote = Ask<lpb::QueryDepositQuoteResponse>(rpc, "DepositQuote", q, 0);
  if (!quote.active() && quote.deposit() != "0") {
    std::cerr << "a new session escrows " << quote.deposit() << quote.denom();
    if (quote.cooloff_until() > 0) {
      std::cerr << " (cool-off until height " << quote.cooloff_until() << ")";
    }
    std::cerr << "; --max-deposit " << quote.deposit() << "\n";
  }
  return Take(ante::ParseAmount(quote.deposit()), kExitFailure, "the deposit quote: ");
}

void RunTx(const std::string& home, const LocksTxFlags& f, const MsgBuilder& build) {
  SignAndBroadcast(home, f.from, f.tx, !f.no_simulate, build);
}

CLI::App* TxCommand(CLI::App& locks, const std::string& name, const std::string& help,
                    const std::shared_ptr<LocksTxFlags>& f) {
  CLI::App* cmd = locks.add_subcommand(name, help);
  cmd->add_option("from", f->from, "Key name (or its address) that signs and pays")->required();
  return cmd;
}

void AddCommonTxFlags(CLI::App* cmd, const std::shared_ptr<LocksTxFlags>& f) {
  AddTxFlags(cmd, &f->tx);
  cmd->add_flag("--no-simulate", f->no_simulate,
                "Broadcast without running the tx in simulation first");
}

// ---- queries: text output

void PrintHolder(const app::locks::LockSlot& slot, const lpb::QueryHolderResponse& r) {
  const std::string name = app::locks::SlotName(slot);
  if (r.holder().empty()) {
    std::cout << name << ": free\n";
  } else if (r.active()) {
    std::cout << name << ": locked by " << r.holder() << " until height " << r.expiry() << "\n";
  } else {
    std::cout << name << ": held by " << r.holder() << ", whose session expired at height "
              << r.expiry() << ": free to take\n";
  }
}

std::string SlotsText(const lpb::Session& s) {
  std::string out;
  for (const auto& slot : s.held()) {
    out += (out.empty() ? "" : ", ") + app::locks::SlotName({slot.resource(), slot.key()});
  }
  return out.empty() ? "none" : out;
}

OrderedJson SessionJson(const lpb::Session& s) {
  OrderedJson held = OrderedJson::array();
  for (const auto& slot : s.held()) {
    held.push_back({{"resource", slot.resource()}, {"key", slot.key()}});
  }
  return {{"start", std::to_string(s.start())},
          {"expiry", std::to_string(s.expiry())},
          {"deposit", s.deposit().empty() ? "0" : s.deposit()},
          {"held", held}};
}

void RunQuery(const std::string& home, const std::string& name, const LocksQueryFlags& f) {
  RpcClient rpc = ConnectForQuery(f.node, f.height);
  const bool json = IsJson(f.output);
  std::int64_t at = 0;
  if (name == "holder" || name == "var") {
    const app::locks::LockSlot slot = Take(ParseSlot(f.target), kExitUsage);
    if (name == "var") {
      lpb::QueryVarRequest q;
      q.set_resource(slot.resource);
      q.set_key(slot.key);
      const auto r = Ask<lpb::QueryVarResponse>(rpc, "Var", q, f.height, &at);
      if (json) {
        PrintJson({{"value", std::to_string(r.value())}, {"height", std::to_string(at)}});
      } else {
        std::cout << app::locks::SlotName(slot) << " = " << r.value() << "\n";
      }
      return;
    }
    lpb::QueryHolderRequest q;
    q.set_resource(slot.resource);
    q.set_key(slot.key);
    const auto r = Ask<lpb::QueryHolderResponse>(rpc, "Holder", q, f.height, &at);
    if (json) {
      PrintJson({{"holder", r.holder()},
                 {"active", r.active()},
                 {"expiry", std::to_string(r.expiry())},
                 {"height", std::to_string(at)}});
    } else {
      PrintHolder(slot, r);
    }
    return;
  }
  if (name == "params") {
    const auto r = Ask<lpb::QueryParamsResponse>(rpc, "Params", lpb::QueryParamsRequest(),
                                                 f.height, &at);
    const auto& p = r.params();
    OrderedJson j = {{"session_period", std::to_string(p.session_period())},
                     {"cooloff_period", std::to_string(p.cooloff_period())},
                     {"whitelist_period", std::to_string(p.whitelist_period())},
                     {"refund_holding_period", std::to_string(p.refund_holding_period())},
                     {"base_deposit", p.base_deposit().empty() ? "0" : p.base_deposit()},
                     {"whitelist_fee", p.whitelist_fee().empty() ? "0" : p.whitelist_fee()},
                     {"max_locks_per_session", std::to_string(p.max_locks_per_session())},
                     {"scale_refund", p.scale_refund()},
                     {"release_bounty_bps", p.release_bounty_bps()},
                     {"forfeit_sink", p.forfeit_sink()},
                     {"end_block_cleanup_limit", std::to_string(p.end_block_cleanup_limit())}};
    if (json) {
      PrintJson({{"params", j},
                 {"denom", r.denom()},
                 {"escrow_address", r.escrow_address()},
                 {"forfeit_sink_address", r.forfeit_sink_address()},
                 {"height", std::to_string(at)}});
      return;
    }
    for (const auto& [key, value] : j.items()) {
      std::cout << key << ": " << (value.is_string() ? value.get<std::string>() : value.dump())
                << "\n";
    }
    std::cout << "denom: " << r.denom() << "\nescrow_address: " << r.escrow_address() << "\n";
    return;
  }
  // session, deposit-quote, registration: an address (or a key name).
  const std::string address =
      Take(ResolveAddress(Keyring(KeyringPath(home)), f.target), kExitUsage);
  if (name == "session") {
    lpb::QuerySessionRequest q;
    q.set_address(address);
    const auto r = Ask<lpb::QuerySessionResponse>(rpc, "Session", q, f.height, &at);
    if (json) {
      PrintJson({{"found", r.found()},
                 {"active", r.active()},
                 {"session", r.found() ? SessionJson(r.session()) : OrderedJson(nullptr)},
                 {"height", std::to_string(at)}});
    } else if (!r.found()) {
      std::cout << address << " has no session\n";
    } else {
      const auto& s = r.session();
      std::cout << "session of " << address << ": [" << s.start() << ", " << s.expiry() << ") "
                << (r.active() ? "active" : "expired") << ", deposit "
                << (s.deposit().empty() ? "0" : s.deposit()) << ", holds " << SlotsText(s)
                << "\n";
    }
    return;
  }
  if (name == "registration") {
    lpb::QueryRegistrationRequest q;
    q.set_address(address);
    const auto r = Ask<lpb::QueryRegistrationResponse>(rpc, "Registration", q, f.height, &at);
    if (json) {
      PrintJson({{"found", r.found()},
                 {"whitelisted", r.whitelisted()},
                 {"expiry", std::to_string(r.registration().expiry())},
                 {"bond", r.registration().bond().empty() ? "0" : r.registration().bond()},
                 {"refundable_from", std::to_string(r.refundable_from())},
                 {"height", std::to_string(at)}});
    } else if (!r.found()) {
      std::cout << address << " is not registered"
                << (r.whitelisted() ? " (the whitelist is off)" : "") << "\n";
    } else {
      std::cout << address << ": registered until height " << r.registration().expiry() << " ("
                << (r.whitelisted() ? "whitelisted" : "expired") << "), bond "
                << r.registration().bond() << ", refundable from height " << r.refundable_from()
                << "\n";
    }
    return;
  }
  lpb::QueryDepositQuoteRequest q;
  q.set_address(address);
  const auto r = Ask<lpb::QueryDepositQuoteResponse>(rpc, "DepositQuote", q, f.height, &at);
  if (json) {
    PrintJson({{"deposit", r.deposit()},
               {"denom", r.denom()},
               {"active", r.active()},
               {"last_session_end", std::to_string(r.last_session_end())},
               {"cooloff_until", std::to_string(r.cooloff_until())},
               {"whitelisted", r.whitelisted()},
               {"height", std::to_string(at)}});
  } else if (r.active()) {
    std::cout << "deposit: 0 (" << address << " has an active session)\n";
  } else {
    std::cout << "deposit: " << r.deposit() << r.denom();
    if (r.cooloff_until() > at + 1) {
      std::cout << " (cool-off until height " << r.cooloff_until() << ")";
    }
    std::cout << (r.whitelisted() ? "" : "; not whitelisted") << "\n";
  }
}

}  // namespace

Result<app::locks::LockSlot> ParseSlot(std::string_view text) {
  app::locks::LockSlot slot;
  const std::size_t open = text.find('[');
  if (open == std::string_view::npos) {
    slot.resource = std::string(text);
  } else {
    if (!text.ends_with(']') || text.size() < open + 3) {  // a non-empty key between [ and ]
      return Status::InvalidArgument("slot '" + std::string(text) +
                                     "': write resource or resource[key] with a non-empty key");
    }
    slot.resource = std::string(text.substr(0, open));
    slot.key = std::string(text.substr(open + 1, text.size() - open - 2));
  }
  if (auto problem = app::locks::SlotProblem(slot)) {
    return Status::InvalidArgument("slot '" + std::string(text) + "': " + *problem);
  }
  return slot;
}

void AddLocksTxCommands(CLI::App& tx, const std::string& home) {
  CLI::App* locks = tx.add_subcommand("locks", "Lease locks on shared state (docs/locks.md)");
  locks->require_subcommand(1);

  auto reg = std::make_shared<LocksTxFlags>();
  CLI::App* cmd =
      TxCommand(*locks, "register", "Bond the whitelist fee to be allowed to lock", reg);
  AddCommonTxFlags(cmd, reg);
  cmd->callback([&home, reg] {
    RunTx(home, *reg, [](const Keyring&, const KeyInfo& from, RpcClient&) {
      return std::vector<ante::Msg>{app::locks::MsgRegister{from.address, Raw(from.address)}};
    });
  });

  auto refund = std::make_shared<LocksTxFlags>();
  cmd = TxCommand(*locks, "refund-registration",
                  "Pay a registration's bond back (to it) after its holding period", refund);
  cmd->add_option("address", refund->address, "Registered address or key name (default: FROM)");
  AddCommonTxFlags(cmd, refund);
  cmd->callback([&home, refund] {
    RunTx(home, *refund, [refund](const Keyring& keyring, const KeyInfo& from, RpcClient&) {
      const std::string target = AddressOrFrom(keyring, refund->address, from);
      return std::vector<ante::Msg>{app::locks::MsgRefundRegistration{
          from.address, Raw(from.address), target, Raw(target)}};
    });
  });

  auto acquire = std::make_shared<LocksTxFlags>();
  cmd = TxCommand(*locks, "acquire", "Lock one or more slots (all or none)", acquire);
  cmd->add_option("slots", acquire->slots, "resource or resource[key], one or more")->required();
  cmd->add_option("--max-deposit", acquire->max_deposit,
                  "Escrow at most this for a new session (default: the deposit quoted now)");
  AddCommonTxFlags(cmd, acquire);
  cmd->callback([&home, acquire] {
    std::vector<app::locks::LockSlot> slots;
    for (const std::string& s : acquire->slots) slots.push_back(Take(ParseSlot(s), kExitUsage));
    RunTx(home, *acquire, [&](const Keyring&, const KeyInfo& from, RpcClient& rpc) {
      return std::vector<ante::Msg>{app::locks::MsgAcquire{
          from.address, Raw(from.address), slots, MaxDeposit(*acquire, from, rpc)}};
    });
  });

  auto write = std::make_shared<LocksTxFlags>();
  cmd = TxCommand(*locks, "write",
                  "Lock a slot and change its shared variable: write FROM SLOT set|add VALUE",
                  write);
  cmd->add_option("slot", write->slot, "resource or resource[key]")->required();
  cmd->add_option("op", write->op, "set or add")->required()->check(CLI::IsMember({"set", "add"}));
  cmd->add_option("value", write->value, "The new value (set) or the signed delta (add)")
      ->required();
  cmd->add_option("--max-deposit", write->max_deposit,
                  "Escrow at most this for a new session (default: the deposit quoted now)");
  AddCommonTxFlags(cmd, write);
  cmd->callback([&home, write] {
    const app::locks::LockSlot slot = Take(ParseSlot(write->slot), kExitUsage);
    std::int64_t value = 0;
    const std::string& v = write->value;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
    if (ec != std::errc() || end != v.data() + v.size()) {
      Fail(kExitUsage, "value must be a signed 64-bit integer, not '" + v + "'");
    }
    const app::locks::LockWriteOp op = write->op == "add" ? app::locks::LockWriteOp::kAdd
                                                    : app::locks::LockWriteOp::kSet;
    RunTx(home, *write, [&](const Keyring&, const KeyInfo& from, RpcClient& rpc) {
      return std::vector<ante::Msg>{app::locks::MsgWrite{from.address, Raw(from.address), slot, op,
                                                        value, MaxDeposit(*write, from, rpc)}};
    });
  });

  auto release = std::make_shared<LocksTxFlags>();
  cmd = TxCommand(*locks, "release",
                  "End a session: your own at any time, anyone's once it has expired", release);
  cmd->add_option("holder", release->address, "The session's address or key name (default: FROM)");
  AddCommonTxFlags(cmd, release);
  cmd->callback([&home, release] {
    RunTx(home, *release, [release](const Keyring& keyring, const KeyInfo& from, RpcClient&) {
      const std::string holder = AddressOrFrom(keyring, release->address, from);
      return std::vector<ante::Msg>{
          app::locks::MsgRelease{from.address, Raw(from.address), holder, Raw(holder)}};
    });
  });

  AddUpdateParamsCommand(
      *locks, home,
      {.module = "locks",
       .current =
           [](RpcClient& rpc) -> std::unique_ptr<google::protobuf::Message> {
             const auto r =
                 Ask<lpb::QueryParamsResponse>(rpc, "Params", lpb::QueryParamsRequest(), 0);
             return std::make_unique<lpb::Params>(r.params());
           },
       .make = [](const std::string& authority, const google::protobuf::Message& m) {
         app::locks::MsgUpdateParams msg;
         msg.authority_address = authority;
         msg.authority = Raw(authority);
         // Checked by the chain (ValidateBasic names the field); here only what cannot be
         // sent at all (an amount that is not a decimal integer).
         msg.params = Take(app::locks::FromProto(dynamic_cast<const lpb::Params&>(m)),
                           kExitUsage, "the new params: ");
         return ante::Msg(msg);
       }});
}

void AddLocksQueryCommands(CLI::App& query, const std::string& home) {
  CLI::App* locks = query.add_subcommand("locks", "Lease locks: holders, sessions, deposits");
  locks->require_subcommand(1);
  const struct {
    const char* name;
    const char* target;
    const char* help;
  } commands[] = {
      {"holder", "slot", "Who holds a slot (resource or resource[key]) and until when"},
      {"var", "slot", "The value of a shared variable"},
      {"session", "address", "An address's session: window, deposit, held slots"},
      {"deposit-quote", "address", "The deposit a new session of an address costs now"},
      {"registration", "address", "An address's whitelist registration and bond"},
      {"params", nullptr, "The module's parameters, denom and escrow account"},
  };
  for (const auto& c : commands) {
    auto f = std::make_shared<LocksQueryFlags>();
    CLI::App* cmd = locks->add_subcommand(c.name, c.help);
    if (c.target != nullptr) {
      cmd->add_option(c.target, f->target,
                      std::string(c.target) == "slot" ? "resource or resource[key]"
                                                      : "Address or key name")
          ->required();
    }
    cmd->add_option("--node", f->node, kNodeFlagHelp);
    cmd->add_option("--height", f->height, "Height to query (0: latest)");
    AddOutputFlag(cmd, &f->output);
    const std::string name = c.name;
    cmd->callback([&home, name, f] { RunQuery(home, name, *f); });
  }
}

}  // namespace kairos::client
