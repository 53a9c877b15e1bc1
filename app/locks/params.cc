#include "app/locks/params.h"

#include <limits>
#include <tuple>

#include "app/module.h"

namespace kairos::app::locks {

namespace {

Status Bad(std::string_view field, std::string_view why) {
  return Status::InvalidArgument(std::string(field) + ": " + std::string(why));
}

bool ValidModuleName(std::string_view name) {
  if (name.empty() || name.size() > 32 || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

Result<ante::Uint256> AmountOf(const std::string& text, std::string_view field) {
  if (text.empty()) return ante::Uint256(0);
  auto v = ante::ParseAmount(text);
  if (!v.ok()) return Bad(field, "not a decimal integer below 2^256: \"" + text + "\"");
  return *v;
}

}  // namespace

std::string AmountText(const ante::Uint256& v) {
  return v == 0 ? std::string() : ante::ToString(v);
}

Status Validate(const Params& p) {
  if (p.session_period < 1) return Bad("session_period", "must be at least 1");
  if (p.cooloff_period < 0 || p.cooloff_period > 64) {
    return Bad("cooloff_period", "must be between 0 and 64");
  }
  // D0 * 2^b must fit in 256 bits: D0 < 2^(256 - b).
  if (p.cooloff_period > 0 &&
      (p.base_deposit >> static_cast<unsigned>(256 - p.cooloff_period)) != 0) {
    return Bad("base_deposit", "base_deposit * 2^cooloff_period does not fit in 256 bits");
  }
  if (p.whitelist_period < 1) return Bad("whitelist_period", "must be at least 1");
  if (p.refund_holding_period < 0) return Bad("refund_holding_period", "must not be negative");
  if (p.max_locks_per_session < 1) return Bad("max_locks_per_session", "must be at least 1");
  if (p.release_bounty_bps > 10000) {
    return Bad("release_bounty_bps", "must be between 0 and 10000");
  }
  if (p.forfeit_sink != kBurn) {
    if (!ValidModuleName(p.forfeit_sink)) {
      return Bad("forfeit_sink", "must be \"burn\" or a module account name [a-z][a-z0-9_]{0,31}");
    }
    if (p.forfeit_sink == kModuleName) {
      return Bad("forfeit_sink", "\"locks\" is the escrow itself: forfeits must leave it");
    }
  }
  return Status::OK();
}

kairos::locks::v1::Params ToProto(const Params& p) {
  kairos::locks::v1::Params pb;
  pb.set_session_period(static_cast<std::uint64_t>(p.session_period));
  pb.set_cooloff_period(static_cast<std::uint64_t>(p.cooloff_period));
  pb.set_whitelist_period(static_cast<std::uint64_t>(p.whitelist_period));
  pb.set_refund_holding_period(static_cast<std::uint64_t>(p.refund_holding_period));
  pb.set_base_deposit(AmountText(p.base_deposit));
  pb.set_whitelist_fee(AmountText(p.whitelist_fee));
  pb.set_max_locks_per_session(p.max_locks_per_session);
  pb.set_scale_refund(p.scale_refund);
  pb.set_release_bounty_bps(p.release_bounty_bps);
  pb.set_forfeit_sink(p.forfeit_sink);
  pb.set_end_block_cleanup_limit(p.end_block_cleanup_limit);
  return pb;
}

Result<Params> FromProto(const kairos::locks::v1::Params& pb) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  Params p;
  for (auto [field, value, out] :
       {std::tuple{"session_period", pb.session_period(), &p.session_period},
        std::tuple{"cooloff_period", pb.cooloff_period(), &p.cooloff_period},
        std::tuple{"whitelist_period", pb.whitelist_period(), &p.whitelist_period},
        std::tuple{"refund_holding_period", pb.refund_holding_period(),
                   &p.refund_holding_period}}) {
    if (value > kMax) return Bad(field, "must be at most 9223372036854775807");
    *out = static_cast<std::int64_t>(value);
  }
  auto d0 = AmountOf(pb.base_deposit(), "base_deposit");
  if (!d0.ok()) return d0.status();
  auto y = AmountOf(pb.whitelist_fee(), "whitelist_fee");
  if (!y.ok()) return y.status();
  p.base_deposit = *d0;
  p.whitelist_fee = *y;
  p.max_locks_per_session = pb.max_locks_per_session();
  p.scale_refund = pb.scale_refund();
  p.release_bounty_bps = pb.release_bounty_bps();
  p.forfeit_sink = pb.forfeit_sink();
  p.end_block_cleanup_limit = pb.end_block_cleanup_limit();
  return p;
}

std::string ForfeitSinkAddress(const Params& p) {
  return p.forfeit_sink == kBurn ? std::string() : ModuleAddress(p.forfeit_sink);
}

const std::string& EscrowAddress() {
  static const std::string address = ModuleAddress(kModuleName);
  return address;
}

}  // namespace kairos::app::locks
