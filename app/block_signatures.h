// BlockSignatureCheck: verifies a block's signatures on helper threads while the block runs.
//
// FinalizeBlock lists the block's signatures (jobs, grouped by tx in block order) and starts
// `helpers` threads; they take jobs from the back of the block. The executor thread calls
// BeforeTx(i) just before it runs tx i: it claims tx i's jobs that no helper has taken (the
// ante then verifies those itself, as it would without this class) and waits for any a helper
// is verifying at that moment. The two sides meet in the middle, no signature is verified
// twice, and on 2 cores the verifies overlap the execution instead of preceding it.
//
// A helper only puts a verified signature into the signature cache (ante::VerifyTxSignature);
// a verification is a pure function of its inputs, so which thread verified what cannot change
// any tx's outcome, and the block's results stay deterministic.
//
// Thread-safety: BeforeTx and the destructor on the executor thread only; the helpers share the
// job list read-only, the per-job states atomically, and the cache (which locks itself).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ante/decorators.h"
#include "ante/tx.h"

namespace kairos::app {

class BlockSignatureCheck {
 public:
  struct Job {
    ante::PubKey key;
    std::string sign_bytes;
    const std::string* signature;  // into the block's decoded txs, which outlive this object
  };

  // Jobs are added tx by tx in block order: AddTx() opens tx i (every tx of the block, with or
  // without jobs), Add() appends a job to the tx opened last. Start() launches the helpers.
  BlockSignatureCheck(ante::SignatureCache* cache, std::size_t helpers)
      : cache_(cache), helpers_(helpers) {}
  BlockSignatureCheck(const BlockSignatureCheck&) = delete;
  BlockSignatureCheck& operator=(const BlockSignatureCheck&) = delete;
  // Claims every job not yet taken and joins the helpers (also when the block ends early).
  ~BlockSignatureCheck();

  void AddTx() { tx_first_job_.push_back(jobs_.size()); }
  // REQUIRES: AddTx() was called, Start() was not.
  void Add(Job job) { jobs_.push_back(std::move(job)); }

  // Starts the helpers; none when there are no jobs or no helpers were asked for.
  void Start();

  // Executor thread, before tx `tx_index` runs. REQUIRES: called with increasing indices.
  void BeforeTx(std::size_t tx_index);

  // Jobs verified by the helpers so far (a helper that failed to verify one, e.g. out of
  // memory, leaves it to the ante and does not count it): for tests and logs.
  std::size_t helper_verified() const { return helper_verified_.load(std::memory_order_relaxed); }

 private:
  enum : std::uint8_t { kFree, kBusy, kDone };
  void Help();
  void Claim(std::size_t job);

  ante::SignatureCache* cache_;
  std::size_t helpers_;
  std::vector<Job> jobs_;
  std::vector<std::size_t> tx_first_job_;  // tx i's jobs: [tx_first_job_[i], next tx's first)
  std::unique_ptr<std::atomic<std::uint8_t>[]> state_;
  std::atomic<std::ptrdiff_t> back_{0};  // the next job a helper takes is back_ - 1
  std::atomic<std::size_t> helper_verified_{0};
  std::vector<std::thread> threads_;
};

}  // namespace kairos::app
