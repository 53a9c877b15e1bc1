// app::Module: the one seam between the app's plumbing and a module (auth, bank, locks, poa...),
// as the Cosmos SDK's module.AppModule. The chain's modules and their order are listed once, in
// app/app_modules.cc (as the SDK's app.go); message decoding and routing, ValidateBasic,
// queries, genesis import and export, PreBlock and EndBlock all go through that list, and no
// file outside a module's folder names its types.
//
// A module lives in app/<name>/: its keeper, its messages (ante::Msg types, app/<name>/msgs.h)
// and their decoding, its message server, its queries, its genesis, its params, and
// expected_keepers.h declaring what it needs from other modules as interfaces. To add one: see
// app/README.md ("Adding a module").
//
// Thread-safety: a Module is immutable after the list is built. Handle, PreBlock and EndBlock
// run on the ABCI executor (and on the proposal and simulation branches), Query on the query
// threads; everything a module keeps in memory must be immutable or synchronised by it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "ante/context.h"
#include "ante/errors.h"
#include "ante/msg.h"
#include "app/proto_reader.h"
#include "store/kv.h"
#include "store/status.h"
#include "tendermint/abci/types.pb.h"

namespace kairos::app {

// ---- genesis ------------------------------------------------------------------------------

// A module's part of app_state, parsed and validated (ParseGenesis), before InitGenesis writes
// it. Each module defines its own (e.g. bank::GenesisState).
class ModuleGenesis {
 public:
  virtual ~ModuleGenesis() = default;
};

// What InitGenesis knows of the chain besides the module's own part.
struct GenesisContext {
  std::string chain_id;
  std::int64_t initial_height = 1;
  // CometBFT's genesis validators (RequestInitChain.validators), for a module that keeps the
  // validator set; the module that owns them sets `validators_out` (InitChain's answer).
  const google::protobuf::RepeatedPtrField<tendermint::abci::ValidatorUpdate>* validators =
      nullptr;
  google::protobuf::RepeatedPtrField<tendermint::abci::ValidatorUpdate>* validators_out = nullptr;
  // The consensus params CometBFT starts the chain with (null: none sent).
  const tendermint::types::ConsensusParams* consensus_params = nullptr;
};

// ---- queries ------------------------------------------------------------------------------

struct QueryRequest {
  std::string_view path;  // the full path, e.g. "/cosmos.bank.v1beta1.Query/Balance"
  std::string_view data;  // the request message's bytes
  const store::KvReader* state = nullptr;  // the committed version asked for
  std::int64_t height = 0;                 // that version
  std::int64_t latest_height = 0;          // the latest committed version
};

struct QueryAnswer {
  std::uint32_t code = 0;  // an ante::SdkCode; 0: OK
  std::string log;         // when code != 0
  std::string key;         // the store key the answer comes from (the response's key)
  std::string value;       // the serialized response
  // The keys whose proofs the answer carries when the client asks (prove = true); by default
  // `key` alone (also for a key-not-found answer: a proof of absence).
  std::optional<std::vector<std::string>> proven_keys;

  static QueryAnswer Error(std::uint32_t code, std::string log) {
    QueryAnswer a;
    a.code = code;
    a.log = std::move(log);
    return a;
  }
  // Code 18: "invalid request: <path>: <why>".
  static QueryAnswer BadRequest(std::string_view path, const std::string& why) {
    return Error(ante::kInvalidRequest, "invalid request: " + std::string(path) + ": " + why);
  }
};

// ---- blocks -------------------------------------------------------------------------------

// What PreBlock and EndBlock add to FinalizeBlock's answer, and what the node logs of them.
struct BlockHookResult {
  std::vector<tendermint::abci::Event> events;
  std::vector<tendermint::abci::ValidatorUpdate> validator_updates;
  // "12 unordered nonce(s) purged": for the block's debug log line; empty when nothing was done.
  std::vector<std::string> summary;
};

// ---- the interface ------------------------------------------------------------------------

class ModuleList;
class ModuleServices;

class Module {
 public:
  virtual ~Module() = default;

  // Wiring, once, when the list is built (app/module_list.h): Provide registers the interfaces
  // this module implements for others (after its constructor, in list order); Bind runs when
  // every module is in the list, to look up what it needs.
  virtual void Provide(ModuleServices&) {}
  virtual void Bind(const ModuleList&) {}
  // The module accounts it owns (raw addresses): no MsgSend may pay into them (the SDK's
  // blocked addresses).
  virtual std::vector<std::string> module_accounts() const { return {}; }

  // Its key in app_state and its name in logs ("bank").
  virtual std::string_view name() const = 0;

  // Messages: the type URLs it decodes and handles (unique across the chain's modules).
  // DecodeMsg and ValidateBasic must not depend on the module's state: the tx decoder uses one
  // instance of the list per process (ModuleList::ForDecoding).
  virtual std::vector<std::string_view> msg_type_urls() const { return {}; }
  // Decodes Any.value of a message of one of its type URLs with `reader` (canonical protobuf;
  // an error names the field path `at`). False with reader.error set on a bad encoding.
  virtual bool DecodeMsg(std::string_view type_url, std::string_view value, ProtoReader& reader,
                         const ProtoPath& at, ante::Msg* out) const;
  // Stateless checks (the SDK's ValidateBasic), before the ante runs.
  virtual ante::TxStatus ValidateBasic(const ante::Msg& msg) const;
  // Runs one message of a tx whose ante passed, on ctx.store (a branch that is dropped when the
  // tx fails). `msg_index` is its index in the tx (for events).
  virtual ante::TxStatus Handle(ante::Context& ctx, const ante::Msg& msg,
                                std::size_t msg_index) const;

  // Queries: the path prefixes it answers ("/cosmos.bank.v1beta1.Query/").
  virtual std::vector<std::string_view> query_prefixes() const { return {}; }
  // Not OK only when the store fails.
  virtual Result<QueryAnswer> Query(const QueryRequest& req) const;

  // Genesis. `section` is app_state[name()], null when absent (a module must accept that: the
  // chain's defaults). InvalidArgument naming the JSON path of the first problem
  // ("app_state.bank.balances[1].coins[0].amount: ...").
  virtual Result<std::unique_ptr<ModuleGenesis>> ParseGenesis(const nlohmann::json* section) const;
  // Writes a parsed genesis into the state (modules in list order). Not OK: the genesis is
  // inconsistent with the state (named) or the store failed.
  virtual Status InitGenesis(store::KvStore& state, const ModuleGenesis& genesis,
                             const GenesisContext& ctx) const;
  // The module's app_state section at a committed version (nullopt: nothing to export, the
  // section is left out), such that InitGenesis of it rebuilds the same keys and values.
  virtual Result<std::optional<nlohmann::json>> ExportGenesis(const store::KvReader& state) const;

  // Refreshes what the module keeps in memory from the state (params it caches), on the
  // executor: when the app opens a committed store, after InitChain, and after each Commit (so
  // that a param change applies from the next block); query threads may be reading the old
  // values meanwhile, so the module swaps them under its own lock. Not OK when the store fails or holds a malformed record.
  virtual Status LoadState(const store::KvReader&) { return Status::OK(); }

  // Block hooks, on the block's branch, without a gas meter. Not OK only when the store fails.
  virtual Status PreBlock(store::KvStore& state, const ante::BlockInfo& block,
                          BlockHookResult* out) const;
  virtual Status EndBlock(store::KvStore& state, const ante::BlockInfo& block,
                          BlockHookResult* out) const;
};

// ---- what modules offer each other ---------------------------------------------------------

// Modules find each other's keepers through the interfaces their expected_keepers.h declare,
// never by naming another module's types. A module registers the interfaces it implements
// (Provide) when the list is built; another looks one up when it needs it (Find), so the order
// of the list does not matter for the lookup. Each interface has at most one provider.
class ModuleServices {
 public:
  template <class Interface>
  void Provide(const Interface* impl) {
    services_[std::type_index(typeid(Interface))] = impl;
  }
  // Null when no module of the chain provides it.
  template <class Interface>
  const Interface* Find() const {
    auto it = services_.find(std::type_index(typeid(Interface)));
    return it == services_.end() ? nullptr : static_cast<const Interface*>(it->second);
  }

 private:
  std::unordered_map<std::type_index, const void*> services_;
};

// A module account's address: SHA-256(name)[:20], as the SDK derives module addresses.
std::string ModuleAddress(std::string_view name);

// Who may change the chain's params and validators (the SDK's `authority`, an account). The
// poa module provides it; without it nobody may. Declared here because every module with params
// expects it.
class AuthorityKeeper {
 public:
  virtual ~AuthorityKeeper() = default;
  // The authority's raw address; empty when the chain has none. Not OK when the store fails.
  virtual Result<std::string> GetAuthority(const store::KvReader& state) const = 0;
};

// ValidateBasic of an address field: code 7 "invalid <what> address: N bytes, want 20" unless
// `raw` is 20 bytes.
ante::TxStatus CheckAddressSize(std::string_view raw, std::string_view what);

// The check every message only the authority may send makes (each module's MsgUpdateParams,
// poa's messages): OK when `signer` (raw) is the chain's authority; code 4 otherwise, "expected
// authority kairos1..., got kairos1...", also when the chain has none (`keeper` null: no module
// of the chain provides AuthorityKeeper; or an empty authority). Store failures: code 1.
ante::TxStatus CheckAuthority(const AuthorityKeeper* keeper, const store::KvReader& state,
                              std::string_view signer);

}  // namespace kairos::app
