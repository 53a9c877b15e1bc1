// Unit tests for app/config: parsing config.toml, its error messages, and the default file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "app/config.h"
#include "app/node_options.h"
#include "temp_dir.h"

using kairos::app::Config;
using kairos::app::DefaultConfigToml;
using kairos::app::LoadConfig;
using kairos::app::ParseConfig;
using kairos::app::ValidateConfig;

namespace {

constexpr char kOrigin[] = "node/config.toml";

void CheckSame(const Config& got, const Config& want) {
  CHECK(got.abci_address == want.abci_address);
  CHECK(got.max_frame_bytes == want.max_frame_bytes);
  CHECK(got.max_pending_requests == want.max_pending_requests);
  CHECK(got.io_threads == want.io_threads);
  CHECK(got.log_level == want.log_level);
  CHECK(got.log_format == want.log_format);
  CHECK(got.db_dir == want.db_dir);
  CHECK(got.keep_recent == want.keep_recent);
  CHECK(got.prune_interval == want.prune_interval);
  CHECK(got.checkpoint_interval == want.checkpoint_interval);
  CHECK(got.page_cache_pages == want.page_cache_pages);
  CHECK(got.block_cache_bytes == want.block_cache_bytes);
  CHECK(got.verify_on_open == want.verify_on_open);
  CHECK(got.metrics_address == want.metrics_address);
}

Config MustParse(const std::string& toml) {
  auto r = ParseConfig(toml, kOrigin);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

// The error message of a text that must not parse. Every message starts with the origin.
std::string ErrorOf(const std::string& toml) {
  auto r = ParseConfig(toml, kOrigin);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == kairos::Status::Code::kInvalidArgument);
  CHECK_THAT(r.status().message(), Catch::StartsWith(std::string(kOrigin) + ":"));
  return r.status().message();
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const char kAbciKeys[] = "address, io_threads, max_frame_bytes, max_pending_requests";
const char kIntForm[] = "must be an integer from 1024 to 2147483647";

}  // namespace

TEST_CASE("an empty config gives the defaults", "[config]") {
  const Config defaults;
  CHECK(defaults.abci_address == "tcp://127.0.0.1:26658");
  CHECK(defaults.max_frame_bytes == 256u << 20);
  CHECK(defaults.max_pending_requests == 4096);
  CHECK(defaults.io_threads == 1);
  CHECK(defaults.log_level == "info");
  CHECK(defaults.log_format == "plain");
  CHECK(defaults.db_dir == "data");
  CheckSame(MustParse(""), defaults);
  CheckSame(MustParse("# only a comment\n\n[abci]\n[log]\n[db]\n"), defaults);
  CHECK(ValidateConfig(defaults).ok());
}

TEST_CASE("every key is parsed", "[config]") {
  const Config c = MustParse(
      "[abci]\n"
      "address = \"unix:///run/kairos.sock\"\n"
      "max_frame_bytes = 2147483647\n"
      "max_pending_requests = 1048576\n"
      "io_threads = 64\n"
      "[log]\n"
      "level = \"trace\"\n"
      "format = \"json\"\n"
      "[db]\n"
      "dir = \"/var/lib/kairos\"\n");
  CHECK(c.abci_address == "unix:///run/kairos.sock");
  CHECK(c.max_frame_bytes == 2147483647u);
  CHECK(c.max_pending_requests == 1048576u);
  CHECK(c.io_threads == 64u);
  CHECK(c.log_level == "trace");
  CHECK(c.log_format == "json");
  CHECK(c.db_dir == "/var/lib/kairos");
}

TEST_CASE("the lower bounds of the integer keys are accepted", "[config]") {
  const Config c = MustParse(
      "abci.max_frame_bytes = 1024\n"
      "abci.max_pending_requests = 1\n"
      "abci.io_threads = 1\n");
  CHECK(c.max_frame_bytes == 1024u);
  CHECK(c.max_pending_requests == 1u);
}

TEST_CASE("every log level and format is accepted", "[config]") {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    CHECK(MustParse(std::string("[log]\nlevel = \"") + level + "\"\n").log_level == level);
  }
  CHECK(MustParse("[log]\nformat = \"plain\"\n").log_format == "plain");
}

TEST_CASE("an unknown key is an error naming it and the known keys", "[config]") {
  const std::string e = ErrorOf("[abci]\nadress = \"tcp://127.0.0.1:1\"\n");
  CHECK_THAT(e, Catch::Contains("unknown key 'abci.adress'"));
  CHECK_THAT(e, Catch::Contains(kAbciKeys));
  CHECK_THAT(ErrorOf("[log]\nlvl = \"info\"\n"),
             Catch::Contains("'log.lvl'") && Catch::Contains("format, level"));
  CHECK_THAT(ErrorOf("[db]\npath = \"x\"\n"),
             Catch::Contains("'db.path'") && Catch::Contains("dir"));
}

TEST_CASE("an unknown section is an error naming it and the known sections", "[config]") {
  const std::string known = "[abci], [api], [db], [grpc], [log]";
  CHECK_THAT(ErrorOf("[abcd]\naddress = \"x\"\n"),
             Catch::Contains("unknown key 'abcd'") && Catch::Contains(known));
  CHECK_THAT(ErrorOf("address = \"tcp://127.0.0.1:1\"\n"),
             Catch::Contains("unknown key 'address'") && Catch::Contains(known));
  CHECK_THAT(ErrorOf("abci = 5\n"), Catch::Contains("'abci' must be a table"));
}

TEST_CASE("a value of the wrong type or out of range names the key and the form", "[config]") {
  const std::string pre = std::string("abci.max_frame_bytes ") + kIntForm + ", got ";
  CHECK_THAT(ErrorOf("[abci]\nmax_frame_bytes = \"big\"\n"), Catch::EndsWith(pre + "\"big\""));
  CHECK_THAT(ErrorOf("[abci]\nmax_frame_bytes = 10\n"), Catch::EndsWith(pre + "10"));
  CHECK_THAT(ErrorOf("[abci]\nmax_frame_bytes = 1023\n"), Catch::EndsWith(pre + "1023"));
  CHECK_THAT(ErrorOf("[abci]\nmax_frame_bytes = 2147483648\n"),
             Catch::EndsWith(pre + "2147483648"));
  CHECK_THAT(ErrorOf("[abci]\nmax_frame_bytes = -1\n"), Catch::EndsWith(pre + "-1"));
  CHECK_THAT(ErrorOf("[abci]\nmax_frame_bytes = 1.5\n"), Catch::EndsWith(pre + "1.5 (a float)"));
  CHECK_THAT(ErrorOf("[abci]\nmax_pending_requests = 0\n"),
             Catch::Contains("abci.max_pending_requests must be an integer from 1 to 1048576"));
  CHECK_THAT(ErrorOf("[abci]\nio_threads = 65\n"),
             Catch::Contains("abci.io_threads must be an integer from 1 to 64, got 65"));
  CHECK_THAT(ErrorOf("[abci]\nio_threads = true\n"), Catch::EndsWith("got true (a boolean)"));
  CHECK_THAT(ErrorOf("[abci]\naddress = 26658\n"),
             Catch::Contains("abci.address must be a string, tcp://HOST:PORT or unix:///PATH"));
  CHECK_THAT(ErrorOf("[log]\nlevel = 3\n"),
             Catch::Contains("log.level must be one of \"trace\"") && Catch::EndsWith("got 3"));
  CHECK_THAT(ErrorOf("[db]\ndir = [\"a\"]\n"), Catch::Contains("db.dir must be a string"));
}

TEST_CASE("tx.index_events takes an array of \"type.key\" strings", "[config]") {
  CHECK(MustParse("").index_events.empty());
  const Config c = MustParse("[tx]\nindex_events = [\"transfer.recipient\", \"message.sender\"]\n");
  CHECK(c.index_events == std::vector<std::string>{"transfer.recipient", "message.sender"});
  for (const char* bad : {"\"transfer\"", "[\"transfer\"]", "[\".key\"]", "[\"type.\"]", "[1]"}) {
    INFO(bad);
    CHECK_THAT(ErrorOf(std::string("[tx]\nindex_events = ") + bad + "\n"),
               Catch::Contains("tx.index_events must be an array of \"type.key\" strings"));
  }
}

TEST_CASE("a bad listen address names the key and the expected form", "[config]") {
  for (const char* bad : {"http://x:1", "tcp://host", "tcp://host:99999", "unix://", "x"}) {
    INFO(bad);
    CHECK_THAT(ErrorOf(std::string("[abci]\naddress = \"") + bad + "\"\n"),
               Catch::Contains("abci.address") && Catch::Contains(bad) &&
                   Catch::Contains("tcp://HOST:PORT or unix:///PATH"));
  }
}

TEST_CASE("a bad log level or format names the key, the choices and the value", "[config]") {
  CHECK_THAT(ErrorOf("[log]\nlevel = \"verbose\"\n"), Catch::Contains("log.level must be one of") &&
                                                          Catch::Contains("\"critical\"") &&
                                                          Catch::EndsWith("got \"verbose\""));
  CHECK_THAT(ErrorOf("[log]\nlevel = \"INFO\"\n"), Catch::EndsWith("got \"INFO\""));
  CHECK_THAT(ErrorOf("[log]\nformat = \"xml\"\n"),
             Catch::Contains("log.format must be one of \"plain\", \"json\", got \"xml\""));
  CHECK_THAT(ErrorOf("[db]\ndir = \"\"\n"), Catch::Contains("db.dir must not be empty"));
}

TEST_CASE("invalid TOML is reported with line and column", "[config]") {
  CHECK_THAT(ErrorOf("[abci]\naddress = \n"),
             Catch::Matches("node/config\\.toml:2:[0-9]+: not valid TOML: .+"));
  CHECK_THAT(ErrorOf("# ok\n\n[abci\n"),
             Catch::Matches("node/config\\.toml:3:[0-9]+: not valid TOML: .+"));
  CHECK_THAT(ErrorOf("[abci]\nio_threads = 1\nio_threads = 2\n"),
             Catch::Matches("node/config\\.toml:3:[0-9]+: not valid TOML: .+"));
}

TEST_CASE("ValidateConfig checks values that flags may set", "[config]") {
  Config c;
  c.abci_address = "tcp://127.0.0.1";
  CHECK_THAT(ValidateConfig(c).message(),
             Catch::Contains("abci.address") && Catch::Contains("tcp://HOST:PORT or unix:///PATH"));
  c = Config{};
  c.log_format = "JSON";
  CHECK_THAT(ValidateConfig(c).message(), Catch::Contains("log.format"));
  c = Config{};
  c.log_level = "";
  CHECK_THAT(ValidateConfig(c).message(), Catch::Contains("log.level"));
}

TEST_CASE("LoadConfig reads a file and names a missing one", "[config]") {
  kairos::test::TempDir dir;
  const std::string path = dir / "config.toml";
  auto missing = LoadConfig(path);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().IsNotFound());
  CHECK_THAT(missing.status().message(), Catch::Contains(path) && Catch::Contains("kairosd init"));

  std::ofstream(path) << "[log]\nlevel = \"debug\"\n";
  auto loaded = LoadConfig(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->log_level == "debug");

  std::ofstream(path) << "[log]\nlevel = \"loud\"\n";
  auto bad = LoadConfig(path);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::StartsWith(path + ": log.level"));
}

TEST_CASE("the default config text mentions every key and parses to the defaults", "[config]") {
  const std::string text = DefaultConfigToml();
  for (const char* line :
       {"[abci]\n", "\naddress = ", "\nmax_frame_bytes = ", "\nmax_pending_requests = ",
        "\nio_threads = ", "[log]\n", "\nlevel = ", "\nformat = ", "[db]\n", "\ndir = ", "[store]\n", "\nkeep_recent = ",
        "\nprune_interval = ", "\ncheckpoint_interval = ",
        "\npage_cache_pages = ", "\nblock_cache_bytes = ", "\nverify_on_open = ",
        "[metrics]\n"}) {
    CHECK_THAT(text, Catch::Contains(line));
  }
  CheckSame(MustParse(text), Config{});
}

TEST_CASE("config.toml.example is exactly what kairosd init writes", "[config]") {
  // The source tree, from the build (not __FILE__, which a compiler cache or a prefix map may
  // make relative).
  const std::string example =
      ReadFile(std::filesystem::path(KAIROS_SOURCE_DIR) / "config.toml.example");
  CHECK(example == DefaultConfigToml());
  CheckSame(MustParse(example), Config{});
}

TEST_CASE("the [store] keys are read and checked", "[config]") {
  const Config c = MustParse(
      "[store]\nkeep_recent = 0\nprune_interval = 5\ncheckpoint_interval = 30\n"
      "page_cache_pages = 10\nblock_cache_bytes = 0\n"
      "verify_on_open = false\n");
  CHECK(c.keep_recent == 0);
  CHECK(c.prune_interval == 5);
  CHECK(c.checkpoint_interval == 30);
  CHECK(c.page_cache_pages == 10);
  CHECK(c.block_cache_bytes == 0);
  CHECK_FALSE(c.verify_on_open);
  CHECK_THAT(ErrorOf("[store]\nkeep_recent = -1\n"),
             Catch::Contains("store.keep_recent must be 0 (keep all) or an integer from 2"));
  CHECK_THAT(ErrorOf("[store]\nkeep_recent = 1\n"),
             Catch::Contains("store.keep_recent must be 0 (keep all) or at least 2"));
  CHECK_THAT(ErrorOf("[store]\nprune_interval = 0\n"),
             Catch::Contains("store.prune_interval must be an integer from 1"));
  CHECK_THAT(ErrorOf("[store]\ncheckpoint_interval = 0\n"),
             Catch::Contains("store.checkpoint_interval must be an integer from 1"));
  CHECK_THAT(ErrorOf("[store]\nverify_on_open = \"yes\"\n"),
             Catch::Contains("store.verify_on_open must be a boolean, got \"yes\""));
  CHECK_THAT(ErrorOf("[store]\nkeep = 1\n"),
             Catch::Contains("unknown key 'store.keep'") && Catch::Contains("keep_recent"));
}

TEST_CASE("the old size-limit keys are ignored with a warning naming where they moved",
          "[config]") {
  // Every config.toml an earlier `kairosd init` wrote has them; they are genesis params now.
  CHECK(MustParse(DefaultConfigToml()).warnings.empty());
  const Config c = MustParse("[store]\nmax_key_bytes = 64\nmax_value_bytes = \"x\"\n");
  CheckSame(c, Config{});
  REQUIRE(c.warnings.size() == 2);
  CHECK(c.warnings[0] ==
        std::string(kOrigin) +
            ": store.max_key_bytes = 64 is ignored: the largest key a tx may write is a chain "
            "parameter now, app_state.store.max_key_bytes in genesis.json (default 4096), so that "
            "every validator computes the same state (a chain that has started keeps the limit "
            "it has in its state). Delete the line to silence this warning.");
  CHECK_THAT(c.warnings[1],
             Catch::StartsWith(std::string(kOrigin) + ": store.max_value_bytes = \"x\" is "
                               "ignored: the largest value a tx may write is a chain parameter "
                               "now, app_state.store.max_value_bytes in genesis.json"));
  // Other unknown [store] keys are still errors.
  CHECK_THAT(ErrorOf("[store]\nmax_key_byte = 64\n"),
             Catch::Contains("unknown key 'store.max_key_byte'"));
}

TEST_CASE("tx.min_gas_prices is parsed, and a bad one names the key and the entry", "[config]") {
  CHECK(MustParse("[tx]\nmin_gas_prices = \"0.025stake\"\n").min_gas_prices == "0.025stake");
  const std::string e = ErrorOf("[tx]\nmin_gas_prices = \"0.025\"\n");
  CHECK_THAT(e, Catch::Contains("tx.min_gas_prices: invalid gas price \"0.025\": bad denom"));
  CHECK_THAT(ErrorOf("[tx]\nmin_gas_prices = \"1.2.3stake\"\n"),
             Catch::Contains("invalid gas price \"1.2.3stake\": bad amount"));
}

TEST_CASE("[mempool] keys are parsed, and bad ones name the key", "[config]") {
  const auto c = MustParse(
      "[mempool]\nmax_txs = 7\nmax_bytes = 4096\nmax_tx_bytes = 1024\nmax_txs_per_sender = 2\n"
      "replace_bump_percent = 25\nttl_blocks = 3\nttl_duration = \"90s\"\n"
      "recheck_budget = \"50ms\"\nparked_ttl_blocks = 0\nregossip_interval = \"2s\"\n"
      "max_parked_per_sender = 3\nmax_parked = 40\n");
  CHECK(c.mempool_max_parked_per_sender == 3);
  CHECK(c.mempool_max_parked == 40);
  CHECK(Config{}.mempool_max_parked_per_sender == 16);
  CHECK(Config{}.mempool_max_parked == 1000);
  // And they reach the node's mempool (main builds its options with AppOptionsFor).
  const kairos::app::AppOptions options = kairos::app::AppOptionsFor(c);
  CHECK(options.mempool.max_txs == 7);
  CHECK(options.mempool.max_txs_per_sender == 2);
  CHECK(options.mempool.max_parked_per_sender == 3);
  CHECK(options.mempool.max_parked == 40);
  CHECK(options.mempool.replace_bump_percent == 25);
  CHECK(options.mempool_parked_ttl_blocks == 0);
  CHECK_THAT(ErrorOf("[mempool]\nmax_parked = -1\n"),
             Catch::Contains("mempool.max_parked must be an integer from 0 to 100000000"));
  CHECK_THAT(ErrorOf("[mempool]\nmax_parked_per_sender = 100001\n"),
             Catch::Contains("mempool.max_parked_per_sender"));
  CHECK(*kairos::app::ParseConfigDuration(c.mempool_regossip_interval, "k") == 2'000'000'000);
  CHECK(Config{}.mempool_regossip_interval == "10s");
  CHECK(c.mempool_max_txs == 7);
  CHECK(c.mempool_parked_ttl_blocks == 0);
  CHECK(Config{}.mempool_parked_ttl_blocks == 20);
  CHECK(c.mempool_max_bytes == 4096);
  CHECK(c.mempool_max_tx_bytes == 1024);
  CHECK(c.mempool_max_txs_per_sender == 2);
  CHECK(c.mempool_replace_bump_percent == 25);
  CHECK(c.mempool_ttl_blocks == 3);
  CHECK(*kairos::app::ParseConfigDuration(c.mempool_ttl_duration, "k") == 90'000'000'000);
  CHECK(*kairos::app::ParseConfigDuration(c.mempool_recheck_budget, "k") == 50'000'000);
  CHECK(*kairos::app::ParseConfigDuration("0s", "k") == 0);
  CHECK_THAT(ErrorOf("[mempool]\nmax_txs = 0\n"), Catch::Contains("mempool.max_txs"));
  CHECK_THAT(ErrorOf("[mempool]\nparked_ttl_blocks = -1\n"),
             Catch::Contains("mempool.parked_ttl_blocks"));
  CHECK_THAT(ErrorOf("[mempool]\nttl_duration = \"soon\"\n"),
             Catch::Contains("mempool.ttl_duration"));
  CHECK_THAT(ErrorOf("[mempool]\nrecheck_budget = \"-5s\"\n"),
             Catch::Contains("mempool.recheck_budget"));
  CHECK_THAT(ErrorOf("[mempool]\nregossip_interval = \"often\"\n"),
             Catch::Contains("mempool.regossip_interval"));
  CHECK_THAT(ErrorOf("[mempool]\nmax_bytes = 2048\nmax_tx_bytes = 4096\n"),
             Catch::Contains("mempool.max_tx_bytes (4096) must not exceed mempool.max_bytes (2048)"));
  CHECK_THAT(ErrorOf("[mempool]\nsize = 5\n"), Catch::Contains("size"));
  CHECK_THAT(ErrorOf("[store]\nvalue_cache_bytes = -1\n"), Catch::Contains("value_cache_bytes"));
}

TEST_CASE("[metrics] address: off by default, HOST:PORT forms accepted, bad ones name the key",
          "[config]") {
  CHECK(Config{}.metrics_address.empty());  // off unless configured (and so in every test)
  CHECK_THAT(DefaultConfigToml(), Catch::Contains("[metrics]\n") &&
                                      Catch::Contains("\naddress = \"\"\n"));
  for (const char* good : {"127.0.0.1:26661", "0.0.0.0:9100", "[::1]:26661", ":26661",
                           "127.0.0.1:0"}) {
    INFO(good);
    CHECK(MustParse(std::string("[metrics]\naddress = \"") + good + "\"\n").metrics_address ==
          good);
  }
  CHECK(MustParse("[metrics]\naddress = \"\"\n").metrics_address.empty());
  for (const char* bad : {"26661", "localhost:26661", "127.0.0.1:", "127.0.0.1:65536",
                          "127.0.0.1:x", "[::1:26661", "::1:26661", "tcp://127.0.0.1:26661",
                          "256.0.0.1:80"}) {
    INFO(bad);
    const std::string e = ErrorOf(std::string("[metrics]\naddress = \"") + bad + "\"\n");
    CHECK_THAT(e, Catch::Contains("metrics.address must be \"HOST:PORT\"") &&
                      Catch::Contains(std::string("got \"") + bad + "\""));
  }
  CHECK_THAT(ErrorOf("[metrics]\naddress = 26661\n"),
             Catch::Contains("metrics.address must be a string"));
  CHECK_THAT(ErrorOf("[metrics]\nport = 1\n"), Catch::Contains("unknown key 'metrics.port'"));
  Config c;
  c.metrics_address = "127.0.0.1";
  CHECK_THAT(ValidateConfig(c).message(), Catch::Contains("metrics.address") &&
                                              Catch::Contains("missing :PORT"));
}

TEST_CASE("[grpc] and [api]: on loopback by default, HOST:PORT or off, bad forms name the key",
          "[config]") {
  const Config d;
  CHECK(d.grpc_address == "127.0.0.1:9090");  // the Cosmos SDK's ports, on loopback only
  CHECK(d.api_address == "127.0.0.1:1317");
  CHECK_FALSE(d.api_enabled_unsafe_cors);
  CHECK_THAT(DefaultConfigToml(), Catch::Contains("[grpc]\n") && Catch::Contains("[api]\n"));
  const Config off = MustParse("[grpc]\naddress = \"\"\n[api]\naddress = \"\"\n");
  CHECK(off.grpc_address.empty());
  CHECK(off.api_address.empty());
  const Config set = MustParse(
      "[grpc]\naddress = \"[::1]:9191\"\nmax_recv_msg_bytes = 4096\n"
      "[api]\naddress = \"localhost:0\"\nenabled_unsafe_cors = true\nmax_open_connections = 7\n"
      "max_body_bytes = 2048\n[query]\napi_threads = 3\napi_max_pending = 9\n");
  CHECK(set.grpc_address == "[::1]:9191");
  CHECK(set.grpc_max_recv_msg_bytes == 4096);
  CHECK(set.api_address == "localhost:0");
  CHECK(set.api_enabled_unsafe_cors);
  CHECK(set.api_max_open_connections == 7);
  CHECK(set.api_max_body_bytes == 2048);
  CHECK(set.api_threads == 3);
  CHECK(set.api_max_pending == 9);
  for (const char* bad : {"9090", "127.0.0.1:", ":9090", "127.0.0.1:65536", "127.0.0.1:x",
                          "::1:9090", "[::1:9090", "tcp://127.0.0.1:9090"}) {
    INFO(bad);
    CHECK_THAT(ErrorOf(std::string("[grpc]\naddress = \"") + bad + "\"\n"),
               Catch::Contains("grpc.address must be \"HOST:PORT\"") &&
                   Catch::Contains(std::string("\"") + bad + "\""));
    CHECK_THAT(ErrorOf(std::string("[api]\naddress = \"") + bad + "\"\n"),
               Catch::Contains("api.address must be \"HOST:PORT\""));
  }
  CHECK_THAT(ErrorOf("[grpc]\naddress = \"127.0.0.1:5000\"\n[api]\naddress = \"127.0.0.1:5000\"\n"),
             Catch::Contains("grpc.address and api.address are both \"127.0.0.1:5000\""));
  CHECK_THAT(ErrorOf("[api]\nenabled_unsafe_cors = \"yes\"\n"),
             Catch::Contains("api.enabled_unsafe_cors must be a boolean"));
  CHECK_THAT(ErrorOf("[query]\napi_threads = 0\n"),
             Catch::Contains("query.api_threads must be an integer from 1 to 64"));
}
