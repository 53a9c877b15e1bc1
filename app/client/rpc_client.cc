#include "app/client/rpc_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <charconv>
#include <stdexcept>

#include "app/client/encoding.h"
#include "app/hex.h"

namespace kairos::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using json = nlohmann::json;

namespace {

constexpr std::size_t kMaxReplyBytes = 64u << 20;

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string StringField(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null()) return "";
  return object[key].get<std::string>();
}

}  // namespace

std::int64_t JsonInt(const json& object, std::string_view key) {
  const std::string k(key);
  if (!object.is_object() || !object.contains(k) || object[k].is_null()) return 0;
  const json& v = object[k];
  if (v.is_number_integer()) return v.get<std::int64_t>();
  const std::string text = v.get<std::string>();  // throws type_error for other kinds
  std::int64_t out = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw std::runtime_error(std::string(key) + " is not an integer: \"" + text + "\"");
  }
  return out;
}

Result<NodeUrl> ParseNodeUrl(std::string_view url) {
  NodeUrl out;
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("tcp://")) {
    rest = url.substr(6);
  } else if (url.starts_with("https://")) {
    return Status::InvalidArgument("--node " + std::string(url) +
                                   ": https is not supported; use http:// (CometBFT's RPC on "
                                   "loopback speaks plain HTTP)");
  } else {
    return Status::InvalidArgument("--node " + std::string(url) +
                                   ": expected http://HOST:PORT, e.g. " + kDefaultNodeUrl);
  }
  const std::size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.base_path = std::string(path);
  }
  if (hostport.starts_with('[')) {  // [::1]:26657
    const std::size_t close = hostport.find(']');
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("--node " + std::string(url) + ": unclosed '['");
    }
    out.host = std::string(hostport.substr(1, close - 1));
    hostport.remove_prefix(close + 1);
    if (!hostport.empty() && hostport.front() != ':') {
      return Status::InvalidArgument("--node " + std::string(url) + ": bad host");
    }
    out.port = hostport.empty() ? "80" : std::string(hostport.substr(1));
  } else {
    const std::size_t colon = hostport.rfind(':');
    out.host = std::string(hostport.substr(0, colon));
    out.port = colon == std::string_view::npos ? "80" : std::string(hostport.substr(colon + 1));
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(out.port.data(), out.port.data() + out.port.size(), port);
  if (out.host.empty() || ec != std::errc() || end != out.port.data() + out.port.size() ||
      port == 0 || port > 65535) {
    return Status::InvalidArgument("--node " + std::string(url) +
                                   ": expected http://HOST:PORT with a port in 1..65535");
  }
  const bool v6 = out.host.find(':') != std::string::npos;
  out.text = "http://" + (v6 ? "[" + out.host + "]" : out.host) + ":" + out.port + out.base_path;
  return out;
}

RpcClient::RpcClient(NodeUrl node, std::chrono::milliseconds timeout)
    : node_(std::move(node)), timeout_(timeout) {}

Result<RpcClient::HttpReply> RpcClient::Exchange(bool post, const std::string& target,
                                                 const std::string& body) {
  asio::io_context ioc;
  asio::ip::tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  beast::error_code ec;
  // Every step runs the context until its handler ran; the stream's deadline cancels a step
  // that takes too long (beast::error::timeout).
  auto run = [&] {
    ioc.restart();
    ioc.run();
  };
  auto fail = [&](std::string_view what) -> Status {
    if (ec == asio::error::connection_refused) {
      return Status::IOError("no CometBFT node at " + node_.text + ": connection refused");
    }
    if (ec == beast::error::timeout) {
      return Status::IOError("the CometBFT node at " + node_.text + " did not answer within " +
                             std::to_string(timeout_.count() / 1000) + "s (" +
                             std::string(what) + ")");
    }
    return Status::IOError("CometBFT node at " + node_.text + ": " + std::string(what) + ": " +
                           Lower(ec.message()));
  };

  const auto endpoints = resolver.resolve(node_.host, node_.port, ec);
  if (ec) return fail("cannot resolve " + node_.host);
  stream.expires_after(timeout_);
  stream.async_connect(endpoints, [&](beast::error_code e, const auto&) { ec = e; });
  run();
  if (ec) return fail("connect");

  http::request<http::string_body> request(post ? http::verb::post : http::verb::get,
                                           node_.base_path + target, 11);
  request.set(http::field::host, node_.host + ":" + node_.port);
  request.set(http::field::user_agent, "kairosd");
  request.set(http::field::accept, "application/json");
  if (post) {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
  }
  request.prepare_payload();
  stream.expires_after(timeout_);
  http::async_write(stream, request, [&](beast::error_code e, std::size_t) { ec = e; });
  run();
  if (ec) return fail("send");

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxReplyBytes);
  stream.expires_after(timeout_);
  http::async_read(stream, buffer, parser, [&](beast::error_code e, std::size_t) { ec = e; });
  run();
  if (ec) return fail("read reply");
  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  HttpReply reply;
  reply.status = parser.get().result_int();
  reply.body = std::move(parser.get().body());
  return reply;
}

Result<json> RpcClient::Decode(std::string_view method, const HttpReply& reply) {
  json root = json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  const std::string where = std::string(method) + " at " + node_.text;
  if (root.is_discarded() || !root.is_object()) {
    std::string start = reply.body.substr(0, 120);
    for (char& c : start) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return Status::IOError(where + ": HTTP " + std::to_string(reply.status) +
                           ", not a JSON-RPC reply: " + start);
  }
  if (root.contains("error") && !root["error"].is_null()) {
    const json& e = root["error"];
    std::string message = e.is_object() ? StringField(e, "message") : e.dump();
    if (e.is_object() && e.contains("data") && e["data"].is_string()) {
      message += ": " + e["data"].get<std::string>();
    }
    return Status::InvalidArgument(where + ": " + message);
  }
  if (!root.contains("result")) return Status::IOError(where + ": reply has no result");
  return root["result"];
}

Result<json> RpcClient::Get(std::string_view method,
                            const std::vector<std::pair<std::string, std::string>>& args) {
  std::string target = "/" + std::string(method);
  char sep = '?';
  for (const auto& [name, value] : args) {
    target += sep + PercentEncode(name) + "=" + PercentEncode(value);
    sep = '&';
  }
  Result<HttpReply> reply = Exchange(false, target, "");
  if (!reply.ok()) return reply.status();
  return Decode(method, *reply);
}

Result<json> RpcClient::Call(std::string_view method, const json& params) {
  const json request = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
  Result<HttpReply> reply = Exchange(true, "/", request.dump());
  if (!reply.ok()) return reply.status();
  return Decode(method, *reply);
}

Result<std::string> RpcClient::ChainId() {
  Result<json> status = Get("status", {});
  if (!status.ok()) return status.status();
  try {
    const std::string network = status->at("node_info").at("network").get<std::string>();
    if (!network.empty()) return network;
  } catch (const json::exception&) {
  }
  return Status::IOError("status at " + node_.text + ": no node_info.network (chain id)");
}

Result<AbciQueryResponse> RpcClient::AbciQuery(std::string_view path, std::string_view data,
                                               std::int64_t height) {
  Result<json> result = Get("abci_query", {{"path", "\"" + std::string(path) + "\""},
                                           {"data", "0x" + app::HexEncode(data)},
                                           {"height", std::to_string(height)},
                                           {"prove", "false"}});
  if (!result.ok()) return result.status();
  try {
    const json& r = result->at("response");
    AbciQueryResponse out;
    out.code = static_cast<std::uint32_t>(JsonInt(r, "code"));
    out.codespace = StringField(r, "codespace");
    out.log = StringField(r, "log");
    out.height = JsonInt(r, "height");
    std::optional<std::string> value = Base64Decode(StringField(r, "value"));
    if (!value) throw std::runtime_error("value is not base64");
    out.value = std::move(*value);
    return out;
  } catch (const std::exception& e) {
    return Status::IOError("abci_query at " + node_.text + ": unexpected reply: " + e.what());
  }
}

Result<BroadcastResponse> RpcClient::BroadcastTxSync(std::string_view tx) {
  Result<json> result = Call("broadcast_tx_sync", {{"tx", Base64Encode(tx)}});
  if (!result.ok()) return result.status();
  try {
    BroadcastResponse out;
    out.hash = StringField(*result, "hash");
    out.code = static_cast<std::uint32_t>(JsonInt(*result, "code"));
    out.codespace = StringField(*result, "codespace");
    out.log = StringField(*result, "log");
    return out;
  } catch (const std::exception& e) {
    return Status::IOError("broadcast_tx_sync at " + node_.text +
                           ": unexpected reply: " + e.what());
  }
}

Result<std::optional<TxResponse>> RpcClient::FindTx(std::string_view hash) {
  Result<json> result =
      Get("tx", {{"hash", "0x" + app::HexEncode(hash, true)}, {"prove", "false"}});
  if (!result.ok()) {
    // CometBFT answers an unknown hash with a JSON-RPC error "tx (HASH) not found".
    if (result.status().message().find("not found") != std::string::npos) {
      return std::optional<TxResponse>();
    }
    return result.status();
  }
  try {
    TxResponse out;
    out.height = JsonInt(*result, "height");
    const json& r = result->at("tx_result");
    out.code = static_cast<std::uint32_t>(JsonInt(r, "code"));
    out.codespace = StringField(r, "codespace");
    out.log = StringField(r, "log");
    out.gas_wanted = JsonInt(r, "gas_wanted");
    out.gas_used = JsonInt(r, "gas_used");
    return std::optional<TxResponse>(std::move(out));
  } catch (const std::exception& e) {
    return Status::IOError("tx at " + node_.text + ": unexpected reply: " + e.what());
  }
}

}  // namespace kairos::client
