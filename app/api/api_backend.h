// ApiBackend: the one method table behind kairosd's gRPC server and its REST (LCD) gateway.
//
// A method is named as gRPC names it, "/cosmos.bank.v1beta1.Query/Balance", which is also its
// ABCI query path. Its request and response are the protobuf messages of its descriptor in the
// generated pool (proto/: the services carry the Cosmos SDK's names, field numbers and
// (google.api.http) REST paths). The backend answers:
//   - every method of a served service that the QueryRouter knows (the module queries,
//     Simulate, the mempool's), through QueryRouter::Handle, exactly as an ABCI query with the
//     same path, data and height is answered;
//   - the methods it implements itself (cosmos.base.node.v1beta1.Service/Config: this node's
//     settings), cosmos.base.tendermint.v1beta1.Service through CometService (CometBFT's RPC;
//     comet_service.h), and the tx service's BroadcastTx, GetTx and GetTxsEvent through
//     TxService (CometBFT's RPC and tx index, or kairosd's own mempool; tx_service.h).
// So a method has one implementation, and its three doors (ABCI query, gRPC, REST) agree.
//
// Calls run on the backend's own worker threads (below the executor's priority, as the ABCI
// query threads are), never on a server's network thread and never on the consensus executor:
// a slow or heavy call cannot delay a block or stall another client's connection. At most
// `max_pending` calls wait or run at once; past that a call is refused at once with
// RESOURCE_EXHAUSTED, so a flood of requests costs its sender, not the node.
//
// Thread-safety: Call may be called from any thread; `done` runs on a worker thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

namespace kairos::app {
class QueryRouter;
}

namespace kairos::app::api {

class CometService;
class TxService;

// gRPC's status codes (grpc::StatusCode, google.rpc.Code): the REST gateway writes the same
// numbers in its error bodies and maps them to HTTP statuses as grpc-gateway does.
enum class Code : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// The HTTP status grpc-gateway answers a code with (runtime.HTTPStatusFromCode).
int HttpStatusFor(Code code);

// The gRPC and REST header that asks for (and answers with) a height, as in the Cosmos SDK.
inline constexpr char kHeightHeader[] = "x-cosmos-block-height";

// Parses a height header's value (both servers): a decimal int64 > 0. False (with `why`)
// otherwise.
bool ParseHeightHeader(std::string_view text, std::int64_t* height, std::string* why);

struct CallResult {
  Code code = Code::kOk;
  std::string message;   // empty when ok
  std::string response;  // the serialized response message when ok
  // The height the answer was read at (0: not state, e.g. the mempool's or node's facts).
  std::int64_t height = 0;
};

// A tx's check in kairosd's mempool (CheckTx's answer, as InsertTx runs it).
struct IngestResult {
  std::uint32_t code = 0;
  std::string codespace;
  std::string log;
  std::string info;
  std::int64_t gas_wanted = 0;
  std::int64_t gas_used = 0;
};

// Direct ingestion (tx_service.h): hands `tx` to kairosd's app mempool and returns true; `done`
// is then called once, on any thread, with the check's result. Returns false, without calling
// `done`, when it is not possible now (CometBFT does not run the app mempool, or the node is
// stopping).
using TxIngest = std::function<bool(std::string tx, std::function<void(IngestResult)> done)>;

struct BackendOptions {
  std::size_t threads = 2;       // worker threads (config query.api_threads)
  std::size_t max_pending = 256;  // calls waiting or running at once (query.api_max_pending)
  std::size_t max_request_bytes = 10u << 20;
  // cosmos.base.node.v1beta1.Service/Config's answers (this node's config, not state).
  std::string minimum_gas_price;
  std::int64_t pruning_keep_recent = 0;
  // CometBFT's RPC, which cosmos.base.tendermint.v1beta1.Service and TxService use ("" = none).
  std::string cometbft_rpc;
  // BroadcastTx straight into kairosd's mempool (tx_service.h); null: through CometBFT's RPC.
  TxIngest ingest;
};

class ApiBackend {
 public:
  // REQUIRES: `router` outlives the backend. Starts the worker threads.
  ApiBackend(const QueryRouter& router, BackendOptions options);
  ~ApiBackend();  // waits for the calls that run; refuses the ones that wait (UNAVAILABLE)
  ApiBackend(const ApiBackend&) = delete;
  ApiBackend& operator=(const ApiBackend&) = delete;

  // The services served, in a fixed order (the gRPC server registers these, the REST gateway
  // routes their (google.api.http) paths). Every method of each has an implementation.
  static const std::vector<const google::protobuf::ServiceDescriptor*>& Services();

  // Runs `method` ("/pkg.Service/Method") on a worker thread with the serialized request and
  // the asked height (0: the latest), then calls `done` there with the result. A method that
  // is not served gets UNIMPLEMENTED; a full queue gets RESOURCE_EXHAUSTED at once (`done` runs
  // on the caller's thread then).
  void Call(std::string method, std::string request, std::int64_t height,
            std::function<void(CallResult)> done);

  // The same, on the caller's thread (tests, and the servers' own checks).
  CallResult CallNow(std::string_view method, const std::string& request,
                     std::int64_t height) const;

 private:
  struct Workers;
  const QueryRouter& router_;
  const BackendOptions options_;
  std::unique_ptr<CometService> comet_;
  std::unique_ptr<TxService> tx_;
  std::unique_ptr<Workers> workers_;
};

}  // namespace kairos::app::api
