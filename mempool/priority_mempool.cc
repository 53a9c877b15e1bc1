// Stub so the integrator can build against the header; the implementation follows.
#include "mempool/priority_mempool.h"

namespace kairos::mempool {

struct PriorityMempool::State {};

const char* Name(RejectReason reason) {
  switch (reason) {
    case RejectReason::kDuplicate: return "duplicate";
    case RejectReason::kFull: return "full";
    case RejectReason::kReplacementUnderpriced: return "replacement_underpriced";
    case RejectReason::kSenderCap: return "sender_cap";
    case RejectReason::kTooLarge: return "too_large";
    case RejectReason::kNonceTooLow: return "nonce_too_low";
  }
  return "unknown";
}

const char* Name(RemoveReason reason) {
  switch (reason) {
    case RemoveReason::kIncluded: return "included";
    case RemoveReason::kEvicted: return "evicted";
    case RemoveReason::kReplaced: return "replaced";
    case RemoveReason::kExpiredBlocks: return "expired_blocks";
    case RemoveReason::kExpiredTime: return "expired_time";
    case RemoveReason::kRecheckFailed: return "recheck_failed";
    case RemoveReason::kStaleNonce: return "stale_nonce";
  }
  return "unknown";
}

PriorityMempool::PriorityMempool(Config config) : config_(config), state_(new State) {}
PriorityMempool::~PriorityMempool() = default;
InsertResult PriorityMempool::Insert(TxInfo, std::uint64_t, std::int64_t, std::int64_t) {
  InsertResult r;
  r.reject = RejectReason::kFull;
  r.message = "mempool not implemented yet";
  return r;
}
EntryPtr PriorityMempool::Find(const Hash&) const { return nullptr; }
EntryPtr PriorityMempool::FindOrdered(std::string_view, std::uint64_t) const { return nullptr; }
bool PriorityMempool::IsParked(const Hash&) const { return false; }
bool PriorityMempool::Remove(const Hash&, RemoveReason) { return false; }
std::vector<std::pair<EntryPtr, RemoveReason>> PriorityMempool::Update(
    std::int64_t, std::int64_t, const std::vector<Hash>&,
    const std::vector<std::pair<std::string, std::uint64_t>>&) {
  return {};
}
std::vector<std::pair<EntryPtr, RemoveReason>> PriorityMempool::PurgeExpired(std::int64_t,
                                                                             std::int64_t) {
  return {};
}
void PriorityMempool::Reap(const std::function<Verdict(const EntryPtr&)>&) const {}
std::vector<EntryPtr> PriorityMempool::ReapMax(std::uint64_t, std::uint64_t) const { return {}; }
std::vector<EntryPtr> PriorityMempool::RecheckOrder() const { return {}; }
std::optional<RemoveReason> PriorityMempool::RemovalReasonOf(const Hash&) const {
  return std::nullopt;
}
Stats PriorityMempool::stats() const { return {}; }

}  // namespace kairos::mempool
