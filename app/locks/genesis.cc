#include "app/locks/genesis.h"

#include "crypto/bech32.h"

namespace kairos::app::locks {

namespace {

Status Bad(const std::string& path, const std::string& why) {
  return Status::InvalidArgument("genesis app_state.locks." + path + ": " + why);
}

Status Write(store::KvStore& kv, std::string_view key, std::string_view value) {
  Status s = kv.Set(key, value);
  return s.ok() ? s : Status::InvalidArgument("writing the locks genesis: " + s.message());
}

}  // namespace

Status InitGenesis(store::KvStore& kv, const LocksKeeper& keeper, const GenesisState& g,
                   std::int64_t initial_height) {
  if (!g.present) return Status::OK();
  if (Status s = keeper.SetParams(kv, g.params); !s.ok()) return s;
  ante::Uint256 held_in_escrow = 0;
  for (std::size_t i = 0; i < g.sessions.size(); ++i) {
    const auto& [address, session] = g.sessions[i];
    if (session.start > initial_height) {
      return Bad("sessions[" + std::to_string(i) + "].start",
                 std::to_string(session.start) + " is after the initial height " +
                     std::to_string(initial_height));
    }
    held_in_escrow += session.deposit;
    for (const ante::LockSlot& slot : session.held) {
      if (Status s = Write(kv, LocksKeeper::LockKey(slot), address); !s.ok()) return s;
    }
    if (Status s = Write(kv, LocksKeeper::QueueKey(session.expiry, address), "\x01"); !s.ok()) {
      return s;
    }
    if (Status s = keeper.SetSessionRecord(kv, address, session); !s.ok()) return s;
  }
  for (std::size_t i = 0; i < g.last_session_ends.size(); ++i) {
    const auto& [address, height] = g.last_session_ends[i];
    if (height > initial_height) {
      return Bad("last_session_ends[" + std::to_string(i) + "].height",
                 std::to_string(height) + " is after the initial height " +
                     std::to_string(initial_height));
    }
    if (Status s = keeper.SetLastEnd(kv, address, height); !s.ok()) return s;
  }
  for (const auto& [address, registration] : g.registrations) {
    held_in_escrow += registration.bond;
    if (Status s = keeper.SetRegistration(kv, address, registration); !s.ok()) return s;
  }
  for (const auto& [slot, value] : g.vars) {
    if (Status s = keeper.SetVar(kv, slot, value); !s.ok()) return s;
  }

  auto denom = keeper.GetDenom(kv);
  if (!denom.ok()) return denom.status();
  auto escrow = keeper.bank().GetBalance(kv, EscrowAddress(), *denom);
  if (!escrow.ok()) return escrow.status();
  if (*escrow != held_in_escrow) {
    return Status::InvalidArgument(
        "genesis app_state.locks: the escrow account " +
        crypto::EncodeAccountAddress(EscrowAddress()) + " holds " + ante::ToString(*escrow) +
        *denom + " in app_state.bank.balances, but the sessions' deposits plus the "
        "registrations' bonds are " + ante::ToString(held_in_escrow) + *denom);
  }
  return Status::OK();
}

}  // namespace kairos::app::locks
