// libFuzzer target for config.toml: app::ParseConfig, then the options kairosd opens the store
// and the app with (app/node_options.h). The input is the TOML text (seeds: kairosd init's file
// and the unit tests' snippets; config_fuzz.dict lists the sections and keys).
//
// Checked properties, beyond "no crash, no sanitizer report":
// - parsing is deterministic (the same text gives the same answer and warnings twice);
// - a refusal names the file: its message starts with the origin passed in;
// - an accepted config passes ValidateConfig (what `kairosd start` checks again after its
//   flags), and the options built from it are what kairosd needs: AppOptionsFor and
//   StoreOptionsFor read every duration and gas price without failing.
//
// Thread-safety: libFuzzer calls LLVMFuzzerTestOneInput from one thread.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/config.h"
#include "app/node_options.h"

namespace {

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "property violated: %s\n", what.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 1 << 16) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto parsed = kairos::app::ParseConfig(text, "fuzz.toml");
  const auto again = kairos::app::ParseConfig(text, "fuzz.toml");
  Check(parsed.ok() == again.ok() && parsed.status().message() == again.status().message(),
        "ParseConfig answered the same text differently");
  if (!parsed.ok()) {
    Check(parsed.status().message().rfind("fuzz.toml", 0) == 0,
          "a refusal that does not name the file: " + parsed.status().message());
    return 0;
  }
  Check(parsed->warnings == again->warnings, "ParseConfig warned differently");
  const kairos::Status valid = kairos::app::ValidateConfig(*parsed);
  Check(valid.ok(), "an accepted config fails ValidateConfig: " + valid.message());
  const kairos::app::AppOptions app = kairos::app::AppOptionsFor(*parsed);
  Check(app.mempool_recheck_budget_nanos >= 0 && app.mempool.ttl_nanos >= 0,
        "a negative duration from an accepted config");
  const kairos::store::StoreOptions store = kairos::app::StoreOptionsFor(*parsed, "/nonexistent");
  Check(store.keep_recent != 1, "keep_recent 1 from an accepted config");
  return 0;
}
