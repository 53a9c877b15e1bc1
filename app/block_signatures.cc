#include "app/block_signatures.h"

#include <exception>
#include <system_error>

namespace kairos::app {

BlockSignatureCheck::~BlockSignatureCheck() {
  if (state_) {
    for (std::size_t j = 0; j < jobs_.size(); ++j) Claim(j);
  }
  for (std::thread& t : threads_) t.join();
}

void BlockSignatureCheck::Start() {
  if (jobs_.empty() || helpers_ == 0) return;
  state_ = std::make_unique<std::atomic<std::uint8_t>[]>(jobs_.size());
  for (std::size_t j = 0; j < jobs_.size(); ++j) state_[j].store(kFree, std::memory_order_relaxed);
  back_.store(static_cast<std::ptrdiff_t>(jobs_.size()), std::memory_order_relaxed);
  threads_.reserve(helpers_);
  for (std::size_t t = 0; t < helpers_; ++t) {
    try {
      threads_.emplace_back([this] { Help(); });
    } catch (const std::system_error&) {
      break;  // no thread to be had: fewer helpers (none at worst) change nothing but time
    }
  }
}

void BlockSignatureCheck::Help() {
  for (;;) {
    const std::ptrdiff_t j = back_.fetch_sub(1, std::memory_order_relaxed) - 1;
    if (j < 0) return;
    std::uint8_t expected = kFree;
    // The executor claims front to back: once it holds job j it holds every job before it.
    if (!state_[j].compare_exchange_strong(expected, kBusy, std::memory_order_acquire)) return;
    const Job& job = jobs_[static_cast<std::size_t>(j)];
    try {
      (void)ante::VerifyTxSignature(job.key, job.sign_bytes, *job.signature, cache_);
      helper_verified_.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::exception&) {
      // Nothing cached (e.g. out of memory): the ante verifies it on the executor, where a
      // failure is handled like any other.
    }
    state_[j].store(kDone, std::memory_order_release);  // the cache entry is in before this
    state_[j].notify_all();
  }
}

void BlockSignatureCheck::Claim(std::size_t job) {
  std::uint8_t seen = kFree;
  if (state_[job].compare_exchange_strong(seen, kDone, std::memory_order_acquire)) return;
  while (seen == kBusy) {
    state_[job].wait(kBusy, std::memory_order_acquire);
    seen = state_[job].load(std::memory_order_acquire);
  }
}

void BlockSignatureCheck::BeforeTx(std::size_t tx_index) {
  if (!state_ || tx_index >= tx_first_job_.size()) return;
  const std::size_t end =
      tx_index + 1 < tx_first_job_.size() ? tx_first_job_[tx_index + 1] : jobs_.size();
  for (std::size_t j = tx_first_job_[tx_index]; j < end; ++j) Claim(j);
}

}  // namespace kairos::app
