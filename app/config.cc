#include "app/config.h"

#include "ante/context.h"

#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include <toml++/toml.h>

#include "abci/server.h"
#include "app/metrics.h"

namespace kairos::app {

namespace {

// One accepted key: how to read it into a Config, and its expected form for messages.
struct KeySpec {
  const char* form;
  std::function<bool(const toml::node&, Config*)> read;
};

std::function<bool(const toml::node&, Config*)> ReadString(std::string Config::*field) {
  return [field](const toml::node& n, Config* c) {
    if (!n.is_string()) return false;
    c->*field = *n.value<std::string>();
    return true;
  };
}

// An integer key in [min, max], stored in a field of integer type T.
template <class T>
std::function<bool(const toml::node&, Config*)> ReadInteger(T Config::*field, std::int64_t min,
                                                            std::int64_t max) {
  return [=](const toml::node& n, Config* c) {
    if (!n.is_integer()) return false;
    const std::int64_t v = *n.value<std::int64_t>();
    if (v < min || v > max) return false;
    c->*field = static_cast<T>(v);
    return true;
  };
}

// An array of "type.key" strings (event attributes), each of 3 to 256 characters with a '.'
// neither first nor last.
std::function<bool(const toml::node&, Config*)> ReadEventKeys(
    std::vector<std::string> Config::*field) {
  return [field](const toml::node& n, Config* c) {
    const toml::array* a = n.as_array();
    if (a == nullptr || a->size() > 1000) return false;
    std::vector<std::string> out;
    for (const toml::node& e : *a) {
      if (!e.is_string()) return false;
      std::string s = *e.value<std::string>();
      const auto dot = s.find('.');
      if (s.size() < 3 || s.size() > 256 || dot == std::string::npos || dot == 0 ||
          dot + 1 == s.size()) {
        return false;
      }
      out.push_back(std::move(s));
    }
    c->*field = std::move(out);
    return true;
  };
}

std::function<bool(const toml::node&, Config*)> ReadBool(bool Config::*field) {
  return [field](const toml::node& n, Config* c) {
    if (!n.is_boolean()) return false;
    c->*field = *n.value<bool>();
    return true;
  };
}

const std::map<std::string, std::map<std::string, KeySpec>>& Schema() {
  static const auto* schema = new std::map<std::string, std::map<std::string, KeySpec>>{
      {"abci",
       {
           {"address", {"a string, tcp://HOST:PORT or unix:///PATH",
                        ReadString(&Config::abci_address)}},
           {"max_frame_bytes", {"an integer from 1024 to 2147483647",
                                ReadInteger(&Config::max_frame_bytes, 1024, 2147483647)}},
           {"max_pending_requests", {"an integer from 1 to 1048576",
                                     ReadInteger(&Config::max_pending_requests, 1, 1 << 20)}},
           {"io_threads", {"an integer from 1 to 64", ReadInteger(&Config::io_threads, 1, 64)}},
           {"query_threads", {"an integer from 0 to 16",
                              ReadInteger(&Config::query_threads, 0, 16)}},
       }},
      {"log",
       {
           {"level", {"one of \"trace\", \"debug\", \"info\", \"warn\", \"error\", \"critical\", "
                      "\"off\"",
                      ReadString(&Config::log_level)}},
           {"format", {"one of \"plain\", \"json\"", ReadString(&Config::log_format)}},
       }},
      {"db",
       {
           {"dir", {"a string, a directory path (relative to the home directory)",
                    ReadString(&Config::db_dir)}},
       }},
      {"store",
       {
           {"keep_recent", {"0 (keep all) or an integer from 2 to 1000000000",
                            ReadInteger(&Config::keep_recent, 0, 1'000'000'000)}},
           {"prune_interval", {"an integer from 1 to 1000000",
                               ReadInteger(&Config::prune_interval, 1, 1'000'000)}},
           {"checkpoint_interval", {"an integer from 1 to 100000",
                                    ReadInteger(&Config::checkpoint_interval, 1, 100'000)}},
           {"page_cache_pages", {"an integer from 0 to 100000000",
                                 ReadInteger(&Config::page_cache_pages, 0, 100'000'000)}},
           {"block_cache_bytes", {"an integer from 0 to 68719476736",
                                  ReadInteger(&Config::block_cache_bytes, 0, 64ll << 30)}},
           {"value_cache_bytes", {"an integer from 0 to 68719476736",
                                  ReadInteger(&Config::value_cache_bytes, 0, 64ll << 30)}},
           {"verify_on_open", {"a boolean", ReadBool(&Config::verify_on_open)}},
           {"recent_versions", {"an integer from 0 to 1000",
                                ReadInteger(&Config::recent_versions, 0, 1000)}},
           {"rebuild_cache", {"an integer from 0 to 64",
                              ReadInteger(&Config::rebuild_cache, 0, 64)}},
       }},
      {"query",
       {
           {"simulate_max_tx_bytes", {"an integer from 64 to 104857600",
                                      ReadInteger(&Config::simulate_max_tx_bytes, 64, 100 << 20)}},
           {"simulate_max_msgs", {"an integer from 1 to 100000",
                                  ReadInteger(&Config::simulate_max_msgs, 1, 100'000)}},
           {"simulate_max_gas", {"an integer from 1 to 9223372036854775807",
                                 ReadInteger(&Config::simulate_max_gas, 1,
                                             std::numeric_limits<std::int64_t>::max())}},
           {"api_threads", {"an integer from 1 to 64",
                            ReadInteger(&Config::api_threads, 1, 64)}},
           {"api_max_pending", {"an integer from 1 to 1000000",
                                ReadInteger(&Config::api_max_pending, 1, 1'000'000)}},
           {"cometbft_rpc", {"a string, \"http://HOST:PORT\" or \"\" for none",
                             ReadString(&Config::cometbft_rpc)}},
       }},
      {"grpc",
       {
           {"address", {"a string, \"HOST:PORT\" (e.g. \"127.0.0.1:9090\") or \"\" for none",
                        ReadString(&Config::grpc_address)}},
           {"max_recv_msg_bytes", {"an integer from 1024 to 1073741824",
                                   ReadInteger(&Config::grpc_max_recv_msg_bytes, 1024, 1 << 30)}},
       }},
      {"api",
       {
           {"address", {"a string, \"HOST:PORT\" (e.g. \"127.0.0.1:1317\") or \"\" for none",
                        ReadString(&Config::api_address)}},
           {"enabled_unsafe_cors", {"a boolean", ReadBool(&Config::api_enabled_unsafe_cors)}},
           {"max_open_connections", {"an integer from 1 to 100000",
                                     ReadInteger(&Config::api_max_open_connections, 1, 100'000)}},
           {"max_body_bytes", {"an integer from 1024 to 1073741824",
                               ReadInteger(&Config::api_max_body_bytes, 1024, 1 << 30)}},
       }},
      {"tx",
       {
           {"min_gas_prices", {"a string of gas prices such as \"0.025stake\" (\"\" for none)",
                               ReadString(&Config::min_gas_prices)}},
           {"signature_threads", {"an integer from 1 to 64",
                                  ReadInteger(&Config::signature_threads, 1, 64)}},
           {"index_events", {"an array of \"type.key\" strings such as [\"transfer.recipient\"] "
                             "([] for every attribute)",
                             ReadEventKeys(&Config::index_events)}},
       }},
      {"mempool",
       {
           {"max_txs", {"an integer from 1 to 100000000",
                        ReadInteger(&Config::mempool_max_txs, 1, 100'000'000)}},
           {"max_bytes", {"an integer from 1024 to 1099511627776",
                          ReadInteger(&Config::mempool_max_bytes, 1024, 1ll << 40)}},
           {"max_tx_bytes", {"an integer from 64 to 104857600",
                             ReadInteger(&Config::mempool_max_tx_bytes, 64, 100 << 20)}},
           {"max_txs_per_sender", {"an integer from 1 to 100000",
                                   ReadInteger(&Config::mempool_max_txs_per_sender, 1, 100'000)}},
           {"replace_bump_percent", {"an integer from 0 to 1000",
                                     ReadInteger(&Config::mempool_replace_bump_percent, 0, 1000)}},
           {"ttl_blocks", {"an integer from 0 (off) to 1000000000",
                           ReadInteger(&Config::mempool_ttl_blocks, 0, 1'000'000'000)}},
           {"parked_ttl_blocks",
            {"an integer from 0 (off) to 1000000000",
             ReadInteger(&Config::mempool_parked_ttl_blocks, 0, 1'000'000'000)}},
           {"max_parked_per_sender",
            {"an integer from 0 to 100000",
             ReadInteger(&Config::mempool_max_parked_per_sender, 0, 100'000)}},
           {"max_parked", {"an integer from 0 to 100000000",
                           ReadInteger(&Config::mempool_max_parked, 0, 100'000'000)}},
           {"ttl_duration", {"a duration string such as \"10m\" or \"0s\" (off)",
                             ReadString(&Config::mempool_ttl_duration)}},
           {"recheck_budget", {"a duration string such as \"200ms\"",
                               ReadString(&Config::mempool_recheck_budget)}},
           {"regossip_interval", {"a duration string such as \"10s\" or \"0s\" (every time)",
                                  ReadString(&Config::mempool_regossip_interval)}},
       }},
      {"state_sync",
       {
           {"snapshot_dir", {"a string, a directory path (relative to the home directory)",
                             ReadString(&Config::snapshot_dir)}},
           {"snapshot_interval", {"an integer from 0 to 1000000000",
                                  ReadInteger(&Config::snapshot_interval, 0, 1'000'000'000)}},
           {"snapshot_keep_recent", {"an integer from 1 to 1000",
                                     ReadInteger(&Config::snapshot_keep_recent, 1, 1000)}},
           {"chunk_bytes", {"an integer from 1024 to 12582912",
                            ReadInteger(&Config::snapshot_chunk_bytes, 1024, 12u << 20)}},
           {"corrupt_chunks_unsafe", {"a boolean",
                                      ReadBool(&Config::snapshot_corrupt_chunks_unsafe)}},
       }},
      {"metrics",
       {
           {"address", {"a string, \"HOST:PORT\" (e.g. \"127.0.0.1:26661\") or \"\" for none",
                        ReadString(&Config::metrics_address)}},
       }},
  };
  return *schema;
}

// Keys older versions read that are now set elsewhere: section.key -> what to tell the operator.
const std::map<std::string, std::string>& MovedKeys() {
  static const auto* moved = new std::map<std::string, std::string>{
      {"store.max_key_bytes",
       "the largest key a tx may write is a chain parameter now, app_state.store.max_key_bytes "
       "in genesis.json (default 4096), so that every validator computes the same state"},
      {"store.max_value_bytes",
       "the largest value a tx may write is a chain parameter now, "
       "app_state.store.max_value_bytes in genesis.json (default 4194304), so that every "
       "validator computes the same state"},
  };
  return *moved;
}

std::string Known(const std::map<std::string, KeySpec>& keys) {
  std::string out;
  for (const auto& [name, spec] : keys) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The offending value, for error messages: the value itself when it is a scalar.
std::string Describe(const toml::node& n) {
  std::ostringstream os;
  if (auto s = n.value_exact<std::string>()) {
    os << '"' << *s << '"';
  } else if (auto i = n.value_exact<std::int64_t>()) {
    os << *i;
  } else if (auto f = n.value_exact<double>()) {
    os << *f << " (a float)";
  } else if (auto b = n.value_exact<bool>()) {
    os << (*b ? "true" : "false") << " (a boolean)";
  } else {
    os << "a value of type " << n.type();
  }
  return os.str();
}

}  // namespace

Result<Config> ParseConfig(const std::string& toml_text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << origin << ":" << e.source().begin.line << ":" << e.source().begin.column
       << ": not valid TOML: " << e.description();
    return Status::InvalidArgument(os.str());
  }
  Config config;
  const auto& schema = Schema();
  for (const auto& [section_key, section_node] : root) {
    const std::string section(section_key.str());
    const auto it = schema.find(section);
    if (it == schema.end()) {
      std::string known;
      for (const auto& [name, keys] : schema) known += (known.empty() ? "[" : ", [") + name + "]";
      return Status::InvalidArgument(origin + ": unknown key '" + section +
                                     "' (known sections: " + known + ")");
    }
    const toml::table* table = section_node.as_table();
    if (table == nullptr) {
      return Status::InvalidArgument(origin + ": '" + section + "' must be a table, [" +
                                     section + "]");
    }
    for (const auto& [key_node, value] : *table) {
      const std::string key(key_node.str());
      if (auto moved = MovedKeys().find(section + "." + key); moved != MovedKeys().end()) {
        config.warnings.push_back(origin + ": " + moved->first + " = " + Describe(value) +
                                  " is ignored: " + moved->second +
                                  " (a chain that has started keeps the limit it has in its "
                                  "state). Delete the line to silence this warning.");
        continue;
      }
      const auto spec = it->second.find(key);
      if (spec == it->second.end()) {
        return Status::InvalidArgument(origin + ": unknown key '" + section + "." + key +
                                       "' (known keys in [" + section +
                                       "]: " + Known(it->second) + ")");
      }
      if (!spec->second.read(value, &config)) {
        return Status::InvalidArgument(origin + ": " + section + "." + key + " must be " +
                                       spec->second.form + ", got " + Describe(value));
      }
    }
  }
  if (Status s = ValidateConfig(config); !s.ok()) {
    return Status::InvalidArgument(origin + ": " + s.message());
  }
  return config;
}

Result<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open (run `kairosd init` first?)");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseConfig(text.str(), path);
}

Result<std::int64_t> ParseConfigDuration(const std::string& text, const std::string& key) {
  if (text == "0" || text == "0s") return std::int64_t{0};
  auto d = ante::ParseDuration(text);
  if (!d.ok()) return Status::InvalidArgument(key + ": " + d.status().message());
  return *d;
}

namespace {

// "HOST:PORT" for a server's listen address ("" = off): HOST an IPv4 address, a name, or a
// [bracketed] IPv6 address, PORT a decimal from 0 to 65535 (0: any free port).
Status CheckHostPort(const char* key, const std::string& address) {
  if (address.empty()) return Status::OK();
  const auto fail = [&](const std::string& why) {
    return Status::InvalidArgument(std::string(key) + " must be \"HOST:PORT\" (e.g. " +
                                   "\"127.0.0.1:9090\") or \"\" for none; \"" + address +
                                   "\" " + why);
  };
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) return fail("has no port");
  const std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.empty()) return fail("has no host");
  if (host.front() == '[' ? host.back() != ']' : host.find(':') != std::string::npos) {
    return fail("has an IPv6 host without [brackets]");
  }
  if (host.front() != '[' &&
      host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
          std::string::npos) {
    return fail("has a host that is not an IP address or a name");
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return fail("has a port that is not a number from 0 to 65535");
  }
  return Status::OK();
}

}  // namespace

Status ValidateConfig(const Config& c) {
  if (auto prices = ante::ParseGasPrices(c.min_gas_prices); !prices.ok()) {
    return Status::InvalidArgument("tx.min_gas_prices: " + prices.status().message());
  }
  if (auto d = ParseConfigDuration(c.mempool_ttl_duration, "mempool.ttl_duration"); !d.ok()) {
    return d.status();
  }
  if (auto d = ParseConfigDuration(c.mempool_recheck_budget, "mempool.recheck_budget"); !d.ok()) {
    return d.status();
  }
  if (auto d = ParseConfigDuration(c.mempool_regossip_interval, "mempool.regossip_interval");
      !d.ok()) {
    return d.status();
  }
  if (c.keep_recent == 1) {
    return Status::InvalidArgument(
        "store.keep_recent must be 0 (keep all) or at least 2, got 1 (the store keeps the "
        "latest version and at least one before it)");
  }
  if (c.mempool_max_tx_bytes > c.mempool_max_bytes) {
    return Status::InvalidArgument(
        "mempool.max_tx_bytes (" + std::to_string(c.mempool_max_tx_bytes) +
        ") must not exceed mempool.max_bytes (" + std::to_string(c.mempool_max_bytes) + ")");
  }
  abci::ListenAddress address;
  std::string error;
  if (!abci::ParseListenAddress(c.abci_address, &address, &error)) {
    return Status::InvalidArgument("abci.address: " + error);
  }
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  bool level_ok = false;
  for (const char* l : kLevels) level_ok = level_ok || c.log_level == l;
  if (!level_ok) {
    return Status::InvalidArgument("log.level must be " +
                                   std::string(Schema().at("log").at("level").form) +
                                   ", got \"" + c.log_level + "\"");
  }
  if (c.log_format != "plain" && c.log_format != "json") {
    return Status::InvalidArgument("log.format must be " +
                                   std::string(Schema().at("log").at("format").form) +
                                   ", got \"" + c.log_format + "\"");
  }
  if (c.db_dir.empty()) return Status::InvalidArgument("db.dir must not be empty");
  if (!c.metrics_address.empty()) {
    std::string bind;
    if (Status s = ParseMetricsAddress(c.metrics_address, &bind); !s.ok()) return s;
  }
  for (const auto& [key, address] :
       {std::pair<const char*, const std::string&>{"grpc.address", c.grpc_address},
        {"api.address", c.api_address}}) {
    if (Status s = CheckHostPort(key, address); !s.ok()) return s;
  }
  if (!c.cometbft_rpc.empty() && c.cometbft_rpc.rfind("http://", 0) != 0 &&
      c.cometbft_rpc.rfind("tcp://", 0) != 0) {
    return Status::InvalidArgument("query.cometbft_rpc must be \"http://HOST:PORT\" (CometBFT's "
                                   "rpc.laddr) or \"\" for none, got \"" + c.cometbft_rpc + "\"");
  }
  if (!c.grpc_address.empty() && c.grpc_address == c.api_address) {
    return Status::InvalidArgument("grpc.address and api.address are both \"" + c.grpc_address +
                                   "\": the gRPC and REST servers need ports of their own");
  }
  return Status::OK();
}

std::string DefaultConfigToml() {
  const Config d;
  std::ostringstream os;
  os << "# kairosd configuration. Every key is optional; the values shown are the defaults.\n"
        "# An unknown key or a bad value stops kairosd with a message naming it.\n"
        "\n"
        "[abci]\n"
        "# Where kairosd listens for CometBFT's four ABCI connections:\n"
        "# tcp://HOST:PORT or unix:///PATH. CometBFT's proxy_app must point here.\n"
        "address = \""
     << d.abci_address
     << "\"\n"
        "# Largest ABCI frame accepted, in bytes. A longer length prefix closes that connection.\n"
        "# Must exceed the largest block (CometBFT caps blocks at 100 MB) plus the genesis.\n"
        "max_frame_bytes = "
     << d.max_frame_bytes
     << "\n"
        "# Requests read ahead on one connection before reading pauses (backpressure).\n"
        "max_pending_requests = "
     << d.max_pending_requests
     << "\n"
        "# Threads serving the sockets. The application always runs on one executor thread.\n"
        "io_threads = "
     << d.io_threads
     << "\n"
        "# Threads answering Info and Query (CometBFT's query connection) from committed state,\n"
        "# beside the executor and at a lower CPU priority, so no query delays a block.\n"
        "# 0: queries run on the executor, between blocks.\n"
        "query_threads = "
     << d.query_threads
     << "\n"
        "\n"
        "[log]\n"
        "# trace | debug | info | warn | error | critical | off. Each request is logged at trace.\n"
        "level = \""
     << d.log_level
     << "\"\n"
        "# plain | json (one JSON object per line).\n"
        "format = \""
     << d.log_format
     << "\"\n"
        "\n"
        "[db]\n"
        "# The LevelDB directory holding committed state, relative to the home directory.\n"
        "dir = \""
     << d.db_dir
     << "\"\n"
        "\n"
        "[store]\n"
        "# Committed versions (heights) kept for queries and proofs at past heights; 0 keeps all.\n"
        "keep_recent = "
     << d.keep_recent
     << "\n"
        "# The kept window's target start moves every this many blocks; each commit prunes an\n"
        "# equal share of the way (inside the commit, so a crash cannot half-prune).\n"
        "prune_interval = "
     << d.prune_interval
     << "\n"
        "# Tree pages reach the disk every this many blocks, spread over the following blocks;\n"
        "# in between, each commit writes only the block's values and its changeset, and the\n"
        "# pages stay in memory. Larger: faster commits, more memory, a longer replay when\n"
        "# kairosd starts. Never part of the app hash; may change between restarts.\n"
        "checkpoint_interval = "
     << d.checkpoint_interval
     << "\n"
        "# (The largest key and value a tx may write are chain parameters in genesis.json,\n"
        "# app_state.store, not node settings.)\n"
        "# On-disk tree pages kept in memory (about 0.6 KiB each with their index; only the\n"
        "# latest tree's, and a tree has about a third as many pages as keys), and LevelDB's\n"
        "# block cache in bytes.\n"
        "page_cache_pages = "
     << d.page_cache_pages
     << "\n"
        "block_cache_bytes = "
     << d.block_cache_bytes
     << "\n"
        "# Latest values kept in memory, written through at each commit (0: off): the accounts\n"
        "# and balances a block wrote are what the next txs read, and proofs find their leaves\n"
        "# there.\n"
        "value_cache_bytes = "
     << d.value_cache_bytes
     << "\n"
        "# Read every table with checksums when kairosd starts, naming a corrupt file.\n"
        "# Costs one full read of the database (seconds per GB).\n"
        "verify_on_open = "
     << (d.verify_on_open ? "true" : "false")
     << "\n"
        "# Queries and proofs at the latest height and the recent_versions before it read trees\n"
        "# in memory (the pages a commit replaces are freed that many commits later: about a\n"
        "# block's changed pages each). Older heights are rebuilt from the newest checkpoint,\n"
        "# up to two checkpoint intervals of changesets; the last rebuild_cache rebuilds are kept\n"
        "# for the next queries near them (each holds the pages its replayed blocks changed).\n"
        "recent_versions = "
     << d.recent_versions
     << "\n"
        "rebuild_cache = "
     << d.rebuild_cache
     << "\n"
        "\n"
        "[query]\n"
        "# Limits of /cosmos.tx.v1beta1.Service/Simulate, which runs a tx on the latest state for\n"
        "# anyone who asks, without a fee: its size and message count are checked before it runs,\n"
        "# and it stops with code 11 (out of gas) after this much gas (or the block's max gas\n"
        "# when lower).\n"
        "simulate_max_tx_bytes = "
     << d.simulate_max_tx_bytes
     << "\n"
        "simulate_max_msgs = "
     << d.simulate_max_msgs
     << "\n"
        "simulate_max_gas = "
     << d.simulate_max_gas
     << "\n"
        "# The threads that run gRPC and REST calls (below the block executor's priority,\n"
        "# never on it), and how many calls may wait or run at once: past that a call is\n"
        "# refused at once (gRPC RESOURCE_EXHAUSTED, HTTP 429).\n"
        "api_threads = "
     << d.api_threads
     << "\n"
        "api_max_pending = "
     << d.api_max_pending
     << "\n"
        "# This node's CometBFT RPC (its rpc.laddr), which the gRPC and REST servers read the\n"
        "# node info, blocks and validator sets from (cosmos.base.tendermint.v1beta1.Service).\n"
        "# \"\": those methods answer UNAVAILABLE.\n"
        "cometbft_rpc = \""
     << d.cometbft_rpc
     << "\"\n"
        "\n"
        "[tx]\n"
        "# This node's minimum gas prices, checked in CheckTx only (never in consensus): a tx\n"
        "# must pay at least price x gas limit in one of the denoms, e.g. \"0.025stake\".\n"
        "# \"\" accepts any fee, zero included.\n"
        "min_gas_prices = \""
     << d.min_gas_prices
     << "\"\n"
        "# Threads that verify a block's signatures: the executor and signature_threads - 1\n"
        "# helpers that work from the back of the block while its txs run (a verified signature\n"
        "# only fills a cache, so the outcome does not depend on this).\n"
        "signature_threads = "
     << d.signature_threads
     << "\n"
        "# The event attributes (\"type.key\") FinalizeBlock marks for CometBFT's tx indexer, as\n"
        "# the Cosmos SDK's index-events: [] marks every one. Indexing every attribute of every\n"
        "# tx is most of CometBFT's CPU per tx under load; a node that serves searches by a few\n"
        "# keys (e.g. [\"message.sender\", \"transfer.recipient\"]) can list only those. tx.hash\n"
        "# and tx.height are always indexed. Local to this node: events are not in consensus.\n"
        "index_events = []\n"
        "\n"
        "[mempool]\n"
        "# The app-side priority mempool that CheckTx (CometBFT v0.38) or InsertTx (v0.40,\n"
        "# mempool.type = \"app\") fills and PrepareProposal builds blocks from. Local policy,\n"
        "# never consensus. Capacity: a new tx that does not fit evicts strictly lower-priority\n"
        "# txs (each sender's highest sequence first, so no gap appears), else it is refused\n"
        "# with code 20 and the fee it would need. Priority = fee per unit of gas, compared\n"
        "# exactly (gas prices below 1 per gas order too). A tx is admitted only if its payer's\n"
        "# committed balance covers it after every pooled tx's fee and sends (code 5).\n"
        "max_txs = "
     << d.mempool_max_txs
     << "\n"
        "max_bytes = "
     << d.mempool_max_bytes
     << "\n"
        "# Largest single tx, in bytes (code 21 above it).\n"
        "max_tx_bytes = "
     << d.mempool_max_tx_bytes
     << "\n"
        "# Txs one sender (first signer) may have waiting, ordered and unordered together.\n"
        "max_txs_per_sender = "
     << d.mempool_max_txs_per_sender
     << "\n"
        "# A tx with the same sender and sequence as one in the pool replaces it only if its\n"
        "# priority is at least this many percent higher (code 13 otherwise, with the need).\n"
        "replace_bump_percent = "
     << d.mempool_replace_bump_percent
     << "\n"
        "# Drop a tx after this many blocks in the pool, or after this long (0 / \"0s\": never).\n"
        "ttl_blocks = "
     << d.mempool_ttl_blocks
     << "\n"
        "ttl_duration = \""
     << d.mempool_ttl_duration
     << "\"\n"
        "# A tx parked behind a sequence gap (its sender's earlier sequence never arrived) is\n"
        "# dropped after this many blocks (0: never), so an unfilled gap cannot hold the\n"
        "# sender's txs and the mempool's space forever.\n"
        "parked_ttl_blocks = "
     << d.mempool_parked_ttl_blocks
     << "\n"
        "# Parked txs (code 0, but not proposed, and paying nothing, until the gap fills) one\n"
        "# sender may have, and the whole pool (code 20 above either). A parked tx never\n"
        "# evicts a ready one, and parked txs are evicted first.\n"
        "max_parked_per_sender = "
     << d.mempool_max_parked_per_sender
     << "\n"
        "max_parked = "
     << d.mempool_max_parked
     << "\n"
        "# After each commit the pool's txs are re-validated (sequence, fee balance, unordered\n"
        "# nonce) for at most this long inside Commit; the rest on demand.\n"
        "recheck_budget = \""
     << d.mempool_recheck_budget
     << "\"\n"
        "# CometBFT v0.40 app-mempool mode (mempool.type = \"app\"): CometBFT gossips what\n"
        "# ReapTxs returns, to every peer, each time. A ready tx is returned once, and the\n"
        "# whole pool again every this long, for peers that connected since (\"0s\": the whole\n"
        "# pool at every ReapTxs). Unused with CometBFT v0.38.\n"
        "regossip_interval = \""
     << d.mempool_regossip_interval
     << "\"\n"
        "\n"
        "[grpc]\n"
        "# The gRPC server: the Cosmos SDK's query and tx services (cosmos.auth, cosmos.bank,\n"
        "# cosmos.tx, cosmos.base.node) and Kairos's own (kairos.*), with server reflection for\n"
        "# grpcurl. \"HOST:PORT\"; \"\" turns it off. Ask for a past height with the metadata\n"
        "# x-cosmos-block-height. kairosd does not start if it cannot listen there.\n"
        "address = \""
     << d.grpc_address
     << "\"\n"
        "# Largest request message, in bytes.\n"
        "max_recv_msg_bytes = "
     << d.grpc_max_recv_msg_bytes
     << "\n"
        "\n"
        "[api]\n"
        "# The REST API (the LCD): the same services at the Cosmos SDK's paths, e.g.\n"
        "# GET /cosmos/bank/v1beta1/balances/{address}, for wallets (Keplr's chain info\n"
        "# \"rest\") and explorers. \"HOST:PORT\"; \"\" turns it off. kairosd does not start if it\n"
        "# cannot listen there.\n"
        "address = \""
     << d.api_address
     << "\"\n"
        "# Answer browsers from any origin (Access-Control-Allow-Origin: *), as the Cosmos SDK's\n"
        "# enabled-unsafe-cors: needed by browser wallets and explorers on another origin.\n"
        "enabled_unsafe_cors = "
     << (d.api_enabled_unsafe_cors ? "true" : "false")
     << "\n"
        "# Open connections at once (more are refused), and the largest request body, in bytes\n"
        "# (413 above it).\n"
        "max_open_connections = "
     << d.api_max_open_connections
     << "\n"
        "max_body_bytes = "
     << d.api_max_body_bytes
     << "\n"
        "\n"
        "[state_sync]\n"
        "# Snapshots of the state that CometBFT serves to nodes joining by state sync\n"
        "# (statesync.enable in their config.toml): one every snapshot_interval heights (0: none,\n"
        "# the default; turn it on for a few full nodes), written in the background from that\n"
        "# height's committed state while blocks go on, into snapshot_dir (relative to the home\n"
        "# directory); the snapshot_keep_recent newest are kept. A snapshot is cut into chunks\n"
        "# of about chunk_bytes of keys and values, each compressed and each verifiable on its\n"
        "# own against the app hash, so a joining node checks every chunk as it arrives\n"
        "# (CometBFT refuses chunks of 16 MB or more). `kairosd snapshots` lists, exports and\n"
        "# restores them by hand. store.keep_recent must keep a snapshot's height while it is\n"
        "# written (a view pins it: pruning waits).\n"
        "snapshot_dir = \""
     << d.snapshot_dir
     << "\"\n"
        "snapshot_interval = "
     << d.snapshot_interval
     << "\n"
        "snapshot_keep_recent = "
     << d.snapshot_keep_recent
     << "\n"
        "chunk_bytes = "
     << d.snapshot_chunk_bytes
     << "\n"
        "# Test only: serve every chunk with one byte changed (a bad peer, for tests).\n"
        "corrupt_chunks_unsafe = false\n"
        "\n"
        "[metrics]\n"
        "# The Prometheus endpoint (GET http://ADDRESS/metrics): ABCI request counts and\n"
        "# latencies per method, block execution time, txs per block by result code, the\n"
        "# mempool, the store commit (docs/metrics.md). \"HOST:PORT\" with HOST an IPv4 or a\n"
        "# [bracketed] IPv6 address, e.g. \"127.0.0.1:26661\" (CometBFT's own metrics default to\n"
        "# 26660); \":PORT\" listens on every IPv4 interface. \"\" (the default): no endpoint and\n"
        "# nothing recorded. kairosd does not start if it cannot listen there.\n"
        "address = \""
     << d.metrics_address << "\"\n";
  return os.str();
}

}  // namespace kairos::app
