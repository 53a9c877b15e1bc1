// BlockGate: tells background work (the state sync snapshot writer) when the node is working
// on a block, so that work waits between blocks instead of taking the cores a block needs.
//
// The executor closes the gate when a block's work starts (PrepareProposal, ProcessProposal,
// FinalizeBlock) and opens it when that work ends (the end of PrepareProposal or
// ProcessProposal, and Commit's end for FinalizeBlock: executing, committing and rechecking
// the mempool are one stretch). Background work waits (GateWaiter) between small units of its
// work (a leaf, a chunk), so a block that starts meets at most one unit in progress.
//
// Lowering the writer's priority alone was measured not to be enough on 2 cores
// (docs/benchmarks.md, "State sync snapshots"): a nice +19 thread still takes a core's cache,
// memory bandwidth and disk while a block runs.
//
// Thread-safety: thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kairos::app {

class BlockGate {
 public:
  using Clock = std::chrono::steady_clock;

  // The executor, as a block's work starts and ends. Close on a closed gate keeps its start.
  void Close() {
    std::lock_guard lock(mu_);
    if (!closed_) closed_since_ = Clock::now();
    closed_ = true;
    closed_flag_.store(true, std::memory_order_release);
  }
  void Open() {
    {
      std::lock_guard lock(mu_);
      closed_ = false;
      closed_flag_.store(false, std::memory_order_release);
    }
    cv_.notify_all();
  }

  // Waits until no block is being worked on, for at most `limit`, or until `*cancel` (may be
  // null; checked every 50 ms). Returns at once (one atomic load) while the gate is open.
  void WaitOpen(std::chrono::nanoseconds limit, const std::atomic<bool>* cancel) const {
    if (!closed_flag_.load(std::memory_order_acquire)) return;
    const Clock::time_point give_up = Clock::now() + limit;
    std::unique_lock lock(mu_);
    while (closed_ && (cancel == nullptr || !cancel->load())) {
      const Clock::time_point now = Clock::now();
      if (now >= give_up) break;
      cv_.wait_until(lock, std::min(give_up, now + std::chrono::milliseconds(50)));
    }
  }

  bool closed() const { return closed_flag_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool closed_ = false;                // guarded by mu_
  Clock::time_point closed_since_{};   // guarded by mu_
  std::atomic<bool> closed_flag_{false};  // closed_, for WaitOpen's fast path
};

// A background worker's side of a gate (the snapshot writer's): between its units of work it
// waits while a block is worked on, but for at most `max_share` of its time since it began
// (plus `head_start`, a second by default). On a node that has time between blocks (the usual case: a
// block's work is a fraction of the block interval) the worker never runs beside a block; on
// one whose blocks run back to back it still gets the rest of the time, at its low priority,
// and finishes in at most 1 / (1 - max_share) of the time it would take alone.
// Thread-safety: one worker thread.
class GateWaiter {
 public:
  GateWaiter(const BlockGate* gate, double max_share,
             std::chrono::nanoseconds head_start = std::chrono::seconds(1))
      : gate_(gate),
        max_share_(max_share),
        head_start_(head_start),
        began_(BlockGate::Clock::now()) {}

  void Wait(const std::atomic<bool>* cancel) {
    if (gate_ == nullptr || !gate_->closed()) return;
    const auto now = BlockGate::Clock::now();
    const auto allowed = std::chrono::duration_cast<std::chrono::nanoseconds>(
        (now - began_) * max_share_ + head_start_);
    if (waited_ >= allowed) return;
    gate_->WaitOpen(allowed - waited_, cancel);
    waited_ += BlockGate::Clock::now() - now;
  }
  // Time spent waiting for blocks.
  std::chrono::nanoseconds waited() const { return waited_; }

 private:
  const BlockGate* gate_;
  double max_share_;
  std::chrono::nanoseconds head_start_;
  BlockGate::Clock::time_point began_;
  std::chrono::nanoseconds waited_{0};
};

// Closes a gate for a scope: PrepareProposal, ProcessProposal.
class BlockWork {
 public:
  explicit BlockWork(BlockGate* gate) : gate_(gate) { gate_->Close(); }
  ~BlockWork() { gate_->Open(); }
  BlockWork(const BlockWork&) = delete;
  BlockWork& operator=(const BlockWork&) = delete;

 private:
  BlockGate* gate_;
};

}  // namespace kairos::app
