// ApiBackend: see api_backend.h.
#include "app/api/api_backend.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <future>
#include <optional>
#include <thread>
#include <utility>

#include "ante/errors.h"
#include "app/api/comet_service.h"
#include "app/api/tx_service.h"
#include "app/logging.h"
#include "app/proto_util.h"
#include "app/query_router.h"
#include "cosmos/auth/v1beta1/query.pb.h"
#include "cosmos/bank/v1beta1/query.pb.h"
#include "cosmos/base/node/v1beta1/query.pb.h"
#include "cosmos/base/tendermint/v1beta1/query.pb.h"
#include "cosmos/tx/v1beta1/service.pb.h"
#include "kairos/auth/v1/query.pb.h"
#include "kairos/locks/v1/query.pb.h"
#include "kairos/mempool/v1/query.pb.h"
#include "kairos/poa/v1/query.pb.h"

namespace kairos::app::api {

namespace asio = boost::asio;
namespace gp = google::protobuf;

namespace {

// The workers' nice value: as the ABCI query threads', below the executor's (abci/server.cc).
constexpr int kWorkerNice = 10;

constexpr std::string_view kNodeConfig = "/cosmos.base.node.v1beta1.Service/Config";

const gp::ServiceDescriptor* ServiceOf(const gp::Descriptor* message, const char* service) {
  const gp::ServiceDescriptor* s = message->file()->FindServiceByName(service);
  if (s == nullptr) {
    // The descriptors are compiled in: a missing service is a build error, not an input one.
    Log()->critical("api: {} declares no service {}", message->file()->name(), service);
    std::abort();
  }
  return s;
}

// The gRPC code of an ABCI query's answer. The SDK's query servers answer gRPC status codes
// and its ABCI layer turns them into codespace-sdk codes; this goes back the other way, with
// the SDK's pairs (types/errors: ErrKeyNotFound and ErrUnknownAddress are NotFound, the
// request and address errors InvalidArgument). Any other failure (a failed simulation) is
// Unknown, as the SDK's tx service answers a failed Simulate.
Code CodeFor(std::uint32_t abci_code) {
  switch (abci_code) {
    case 0: return Code::kOk;
    case ante::kKeyNotFound:
    case ante::kUnknownAddress: return Code::kNotFound;
    case ante::kTxDecode:
    case ante::kInvalidAddress:
    case ante::kInvalidPubKey:
    case ante::kInvalidCoins:
    case ante::kInvalidRequest:
    case ante::kTxTooLarge:
    case ante::kInvalidHeight:
    case ante::kInvalidGasLimit: return Code::kInvalidArgument;
    case ante::kUnauthorized: return Code::kUnauthenticated;
    case ante::kUnknownRequest:
    case ante::kNotSupported: return Code::kUnimplemented;
    default: return Code::kUnknown;
  }
}

// A module's not-found text carries the gRPC status text that CosmJS recognises over ABCI
// ("rpc error: code = NotFound desc = account … not found"); over gRPC and REST the status
// itself says NotFound, so the message is the description alone.
std::string MessageOf(const std::string& log) {
  constexpr std::string_view kDesc = " desc = ";
  if (log.rfind("rpc error: code = ", 0) == 0) {
    if (auto at = log.find(kDesc); at != std::string::npos) return log.substr(at + kDesc.size());
  }
  return log;
}

}  // namespace

int HttpStatusFor(Code code) {
  switch (code) {  // grpc-gateway's runtime.HTTPStatusFromCode
    case Code::kOk: return 200;
    case Code::kCancelled: return 499;
    case Code::kUnknown: return 500;
    case Code::kInvalidArgument: return 400;
    case Code::kDeadlineExceeded: return 504;
    case Code::kNotFound: return 404;
    case Code::kAlreadyExists: return 409;
    case Code::kPermissionDenied: return 403;
    case Code::kUnauthenticated: return 401;
    case Code::kResourceExhausted: return 429;
    case Code::kFailedPrecondition: return 400;
    case Code::kAborted: return 409;
    case Code::kOutOfRange: return 400;
    case Code::kUnimplemented: return 501;
    case Code::kInternal: return 500;
    case Code::kUnavailable: return 503;
    case Code::kDataLoss: return 500;
  }
  return 500;
}

bool ParseHeightHeader(std::string_view text, std::int64_t* height, std::string* why) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < 0) {
    *why = "expected a height, a decimal integer >= 0 (0: the latest), got \"" +
           std::string(text.substr(0, 40)) + "\"";
    return false;
  }
  *height = v;
  return true;
}

struct ApiBackend::Workers {
  asio::io_context io{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{
      asio::make_work_guard(io)};
  std::vector<std::thread> threads;
  std::atomic<std::size_t> pending{0};
};

const std::vector<const gp::ServiceDescriptor*>& ApiBackend::Services() {
  static const std::vector<const gp::ServiceDescriptor*> services = {
      ServiceOf(cosmos::auth::v1beta1::QueryAccountRequest::descriptor(), "Query"),
      ServiceOf(cosmos::bank::v1beta1::QueryBalanceRequest::descriptor(), "Query"),
      ServiceOf(cosmos::tx::v1beta1::SimulateRequest::descriptor(), "Service"),
      ServiceOf(cosmos::base::node::v1beta1::ConfigRequest::descriptor(), "Service"),
      ServiceOf(cosmos::base::tendermint::v1beta1::GetNodeInfoRequest::descriptor(), "Service"),
      ServiceOf(kairos::auth::v1::QueryUnorderedNonceRequest::descriptor(), "Query"),
      ServiceOf(kairos::locks::v1::QueryHolderRequest::descriptor(), "Query"),
      ServiceOf(kairos::poa::v1::QueryValidatorsRequest::descriptor(), "Query"),
      ServiceOf(kairos::mempool::v1::QueryStatsRequest::descriptor(), "Query"),
  };
  return services;
}

ApiBackend::ApiBackend(const QueryRouter& router, BackendOptions options)
    : router_(router),
      options_(std::move(options)),
      comet_(std::make_unique<CometService>(router, options_.cometbft_rpc)),
      tx_(std::make_unique<TxService>(options_.cometbft_rpc, options_.ingest,
                                      options_.max_pending)),
      workers_(std::make_unique<Workers>()) {
  const std::size_t n = std::max<std::size_t>(1, options_.threads);
  for (std::size_t i = 0; i < n; ++i) {
    workers_->threads.emplace_back([w = workers_.get()] {
      if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kWorkerNice) != 0) {
        Log()->warn("api worker: could not lower its priority: {}", std::strerror(errno));
      }
      w->io.run();
    });
  }
}

ApiBackend::~ApiBackend() {
  workers_->work.reset();  // the queued calls still run (at most max_pending), then run() ends
  for (std::thread& t : workers_->threads) t.join();
}

void ApiBackend::Call(std::string method, std::string request, std::int64_t height,
                      std::function<void(CallResult)> done) {
  std::size_t now = workers_->pending.load(std::memory_order_relaxed);
  do {
    if (now >= options_.max_pending) {
      done(CallResult{Code::kResourceExhausted,
                      "too many requests: " + std::to_string(options_.max_pending) +
                          " calls are already waiting or running on this node "
                          "(query.api_max_pending); retry later",
                      {}, 0});
      return;
    }
  } while (!workers_->pending.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
  asio::post(workers_->io, [this, method = std::move(method), request = std::move(request),
                            height, done = std::move(done)]() mutable {
    if (IsTxServiceMethod(method)) {
      // A direct broadcast completes on the application executor: its answer comes back here,
      // so that no caller's `done` (the REST gateway's JSON printing) runs on the executor.
      // The guard keeps the workers running until it has.
      auto guard = std::make_shared<asio::executor_work_guard<asio::io_context::executor_type>>(
          workers_->io.get_executor());
      tx_->Call(method, request, [this, guard, done = std::move(done)](CallResult r) mutable {
        asio::post(workers_->io, [this, guard, done = std::move(done), r = std::move(r)]() mutable {
          workers_->pending.fetch_sub(1, std::memory_order_relaxed);
          done(std::move(r));
        });
      });
      return;
    }
    CallResult result = CallNow(method, request, height);
    workers_->pending.fetch_sub(1, std::memory_order_relaxed);
    done(std::move(result));
  });
}

CallResult ApiBackend::CallNow(std::string_view method, const std::string& request,
                               std::int64_t height) const {
  if (request.size() > options_.max_request_bytes) {
    return {Code::kInvalidArgument,
            "request of " + std::to_string(request.size()) + " bytes is over the limit of " +
                std::to_string(options_.max_request_bytes),
            {}, 0};
  }
  if (height < 0) {
    return {Code::kInvalidArgument,
            "invalid height " + std::to_string(height) + ": must not be negative", {}, 0};
  }
  if (method == kNodeConfig) {
    cosmos::base::node::v1beta1::ConfigRequest req;
    if (!ParseProto(request, &req)) {
      return {Code::kInvalidArgument, "request is not a ConfigRequest", {}, 0};
    }
    cosmos::base::node::v1beta1::ConfigResponse res;
    res.set_minimum_gas_price(options_.minimum_gas_price);
    res.set_pruning_keep_recent(std::to_string(options_.pruning_keep_recent));
    res.set_pruning_interval("0");
    return {Code::kOk, {}, SerializeDeterministic(res), 0};
  }
  if (method.rfind(kTendermintService, 0) == 0) return comet_->Call(method, request);
  if (IsTxServiceMethod(method)) {
    auto answer = std::make_shared<std::promise<CallResult>>();
    std::future<CallResult> result = answer->get_future();
    tx_->Call(method, request, [answer](CallResult r) { answer->set_value(std::move(r)); });
    return result.get();
  }
  tendermint::abci::RequestQuery q;
  q.set_path(std::string(method));
  q.set_data(request);
  q.set_height(height);
  const tendermint::abci::ResponseQuery answer = router_.Handle(q);
  CallResult result;
  result.code = CodeFor(answer.code());
  result.height = answer.height();
  if (result.code == Code::kOk) {
    result.response = answer.value();
  } else {
    result.message = MessageOf(answer.log());
  }
  return result;
}

}  // namespace kairos::app::api
