#include "app/client/params_commands.h"

#include <charconv>
#include <iostream>
#include <limits>
#include <type_traits>

#include <CLI/CLI.hpp>
#include <google/protobuf/descriptor.h>

#include "app/auth/msgs.h"
#include "app/bank/msgs.h"
#include "app/client/chain_queries.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "crypto/bech32.h"

namespace kairos::client {

namespace {

namespace apb = cosmos::auth::v1beta1;
namespace bpb = cosmos::bank::v1beta1;
using google::protobuf::FieldDescriptor;

std::string FieldNames(const google::protobuf::Descriptor& d) {
  std::string names;
  for (int i = 0; i < d.field_count(); ++i) {
    names += (names.empty() ? "" : ", ") + std::string(d.field(i)->name());
  }
  return names;
}

template <class T>
Result<T> ParseInteger(std::string_view text, std::string_view key) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument(std::string(key) + ": expected an integer from " +
                                   std::to_string(std::numeric_limits<T>::min()) + " to " +
                                   std::to_string(std::numeric_limits<T>::max()) + ", not '" +
                                   std::string(text) + "'");
  }
  return v;
}

// Parses `text` as a T for the param `key` and hands it to `set`.
template <class T, class Setter>
Status SetInteger(std::string_view text, std::string_view key, Setter set) {
  Result<T> v = ParseInteger<T>(text, key);
  if (!v.ok()) return v.status();
  set(*v);
  return Status::OK();
}

// The params as JSON, field by field in field order (64-bit integers as strings, as the SDK's
// JSON writes them).
OrderedJson ParamsJson(const google::protobuf::Message& m) {
  OrderedJson j = OrderedJson::object();
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string name(f->name());
    if (f->is_repeated()) {
      // bank's deprecated send_enabled list, which Kairos always keeps empty.
      j[name] = r->FieldSize(m, f) == 0 ? OrderedJson::array() : OrderedJson(nullptr);
      continue;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_UINT64: j[name] = std::to_string(r->GetUInt64(m, f)); break;
      case FieldDescriptor::CPPTYPE_INT64: j[name] = std::to_string(r->GetInt64(m, f)); break;
      case FieldDescriptor::CPPTYPE_UINT32: j[name] = r->GetUInt32(m, f); break;
      case FieldDescriptor::CPPTYPE_INT32: j[name] = r->GetInt32(m, f); break;
      case FieldDescriptor::CPPTYPE_BOOL: j[name] = r->GetBool(m, f); break;
      case FieldDescriptor::CPPTYPE_STRING: j[name] = r->GetString(m, f); break;
      default: j[name] = nullptr; break;
    }
  }
  return j;
}

// The params of one module at `height` (0: latest), through its Params query; *at: the height
// answered.
using ParamsQuery = std::function<std::unique_ptr<google::protobuf::Message>(
    RpcClient& rpc, std::int64_t height, std::int64_t* at)>;

// A module's Params query whose response is {Params params = 1}, as the SDK's modules have it.
template <class Request, class Response>
ParamsQuery SdkParamsQuery(std::string module, std::string path) {
  return [module, path](RpcClient& rpc, std::int64_t height, std::int64_t* at) {
    Response r;
    *at = Take(QueryProto(rpc, path, Request(), height, &r), kExitFailure,
               "query " + module + " params: ");
    return std::unique_ptr<google::protobuf::Message>(
        std::make_unique<std::decay_t<decltype(r.params())>>(r.params()));
  };
}

const ParamsQuery& AuthParamsQuery() {
  static const ParamsQuery q = SdkParamsQuery<apb::QueryParamsRequest, apb::QueryParamsResponse>(
      "auth", "/cosmos.auth.v1beta1.Query/Params");
  return q;
}

const ParamsQuery& BankParamsQuery() {
  static const ParamsQuery q = SdkParamsQuery<bpb::QueryParamsRequest, bpb::QueryParamsResponse>(
      "bank", "/cosmos.bank.v1beta1.Query/Params");
  return q;
}

// The latest params, for update-params.
std::function<std::unique_ptr<google::protobuf::Message>(RpcClient&)> Latest(ParamsQuery q) {
  return [q = std::move(q)](RpcClient& rpc) {
    std::int64_t at = 0;
    return q(rpc, 0, &at);
  };
}

// `query <module> params [--height H] [--output json]` under `module_cmd`.
void AddParamsQueryCommand(CLI::App& module_cmd, const std::string& description, ParamsQuery q) {
  struct Flags {
    std::string node;
    std::int64_t height = 0;
    std::string output;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = module_cmd.add_subcommand("params", description);
  cmd->add_option("--node", f->node, kNodeFlagHelp);
  cmd->add_option("--height", f->height, "Height to query (0: latest)");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, q = std::move(q)] {
    RpcClient rpc = ConnectForQuery(f->node, f->height);
    std::int64_t at = 0;
    const auto params = q(rpc, f->height, &at);
    const OrderedJson j = ParamsJson(*params);
    if (IsJson(f->output)) {
      PrintJson({{"params", j}, {"height", std::to_string(at)}});
      return;
    }
    for (const auto& [key, value] : j.items()) {
      std::cout << key << ": " << (value.is_string() ? value.get<std::string>() : value.dump())
                << "\n";
    }
  });
}

}  // namespace

Status ApplyParamAssignments(google::protobuf::Message* target,
                             const std::vector<std::string>& assignments) {
  // On a copy: a bad assignment leaves `target` as it was.
  std::unique_ptr<google::protobuf::Message> copy(target->New());
  copy->CopyFrom(*target);
  google::protobuf::Message* params = copy.get();
  const auto* d = params->GetDescriptor();
  const auto* r = params->GetReflection();
  for (const std::string& a : assignments) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("'" + a + "': expected KEY=VALUE, e.g. " +
                                     std::string(d->field(0)->name()) + "=10");
    }
    const std::string key = a.substr(0, eq);
    const std::string_view value = std::string_view(a).substr(eq + 1);
    const FieldDescriptor* f = d->FindFieldByName(key);
    if (f == nullptr || f->is_repeated()) {
      return Status::InvalidArgument("'" + key + "' is not a param of " + std::string(d->full_name()) +
                                     " (its params: " + FieldNames(*d) + ")");
    }
    Status set;
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_UINT64:
        set = SetInteger<std::uint64_t>(value, key, [&](auto v) { r->SetUInt64(params, f, v); });
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        set = SetInteger<std::int64_t>(value, key, [&](auto v) { r->SetInt64(params, f, v); });
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        set = SetInteger<std::uint32_t>(value, key, [&](auto v) { r->SetUInt32(params, f, v); });
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        set = SetInteger<std::int32_t>(value, key, [&](auto v) { r->SetInt32(params, f, v); });
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        if (value != "true" && value != "false") {
          return Status::InvalidArgument(key + ": expected true or false, not '" +
                                         std::string(value) + "'");
        }
        r->SetBool(params, f, value == "true");
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        r->SetString(params, f, std::string(value));
        break;
      default:
        return Status::InvalidArgument(key + ": this param cannot be set from the command line");
    }
    if (!set.ok()) return set;
  }
  target->CopyFrom(*params);
  return Status::OK();
}

void AddUpdateParamsCommand(CLI::App& module_cmd, const std::string& home, UpdateParamsSpec spec) {
  struct Flags {
    std::string authority;
    std::vector<std::string> assignments;
    bool no_simulate = false;
    TxFlags tx;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = module_cmd.add_subcommand(
      "update-params", "Change the " + spec.module +
                           " module's params (the authority only; from the next block): "
                           "update-params AUTHORITY KEY=VALUE...");
  cmd->add_option("authority", f->authority, "The authority's key name (or address)")
      ->required();
  cmd->add_option("assignments", f->assignments,
                  "One or more params to change, e.g. max_memo_characters=512; the others keep "
                  "their current values (`kairosd query " + spec.module + " params`)")
      ->required();
  AddTxFlags(cmd, &f->tx);
  cmd->add_flag("--no-simulate", f->no_simulate,
                "Broadcast without running the tx in simulation first");
  cmd->callback([&home, f, spec = std::move(spec)] {
    SignAndBroadcast(home, f->authority, f->tx, !f->no_simulate,
                     [&](const Keyring&, const KeyInfo& from, RpcClient& rpc) {
                       std::unique_ptr<google::protobuf::Message> params = spec.current(rpc);
                       Check(ApplyParamAssignments(params.get(), f->assignments), kExitUsage);
                       return std::vector<ante::Msg>{spec.make(from.address, *params)};
                     });
  });
}

void AddAuthTxCommands(CLI::App& tx, const std::string& home) {
  CLI::App* auth = tx.add_subcommand("auth", "Accounts and the tx params (x/auth)");
  auth->require_subcommand(1);
  AddUpdateParamsCommand(
      *auth, home,
      {.module = "auth",
       .current = Latest(AuthParamsQuery()),
       .make = [](const std::string& authority, const google::protobuf::Message& m) {
         const auto& p = dynamic_cast<const apb::Params&>(m);
         app::auth::MsgUpdateParams msg;
         msg.authority_address = authority;
         msg.authority = *crypto::DecodeAccountAddress(authority);
         msg.params = app::auth::SdkParams::FromProto(p);
         return ante::Msg(msg);
       }});
}

void AddAuthQueryCommands(CLI::App& query, const std::string& home) {
  (void)home;
  CLI::App* auth = query.add_subcommand("auth", "x/auth: the tx params");
  auth->require_subcommand(1);
  AddParamsQueryCommand(*auth, "The auth params (memo, signatures, gas costs)", AuthParamsQuery());
}

void AddBankTxCommands(CLI::App& tx, const std::string& home) {
  CLI::App* bank = tx.add_subcommand("bank", "Coins: the bank params (x/bank; `tx send` sends)");
  bank->require_subcommand(1);
  AddUpdateParamsCommand(
      *bank, home,
      {.module = "bank",
       .current = Latest(BankParamsQuery()),
       .make = [](const std::string& authority, const google::protobuf::Message& m) {
         const auto& p = dynamic_cast<const bpb::Params&>(m);
         app::bank::MsgUpdateParams msg;
         msg.authority_address = authority;
         msg.authority = *crypto::DecodeAccountAddress(authority);
         msg.params.default_send_enabled = p.default_send_enabled();
         return ante::Msg(msg);
       }});
}

void AddBankQueryCommands(CLI::App& query, const std::string& home) {
  (void)home;
  CLI::App* bank = query.add_subcommand("bank", "x/bank: the bank params (`query balance` "
                                                "for balances)");
  bank->require_subcommand(1);
  AddParamsQueryCommand(*bank, "The bank params (default_send_enabled)", BankParamsQuery());
}

}  // namespace kairos::client
