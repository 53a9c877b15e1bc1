// TxHashSet: a set of 32-byte tx hashes in one flat array (open addressing, linear probing,
// backward-shift deletion: no tombstones). The mempool's gossip set (TxPool::Reap) is probed
// for every pooled tx at every reap; a node-based std::unordered_set costs a bucket, then a
// chain of nodes, each a likely cache miss at ten thousand txs and more, and a malloc per
// insert. Here a probe is one slot, usually one cache line.
//
// The slot index comes from 8 bytes of the hash mixed with a per-set random seed, so a peer
// cannot aim txs at one run of slots (tx hashes are SHA-256, but a peer can grind them). The
// all-zero hash marks an empty slot; a real tx hash that is all zeros (a SHA-256 preimage of
// zero) is kept aside in a flag. Capacity is a power of two, at most 3/4 full. Thread-compatible.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kairos::app {

class TxHashSet {
 public:
  using Hash = std::array<std::uint8_t, 32>;

  explicit TxHashSet(std::uint64_t seed) : seed_(seed) {}

  bool contains(const Hash& h) const {
    if (IsZero(h)) return has_zero_;
    if (slots_.empty()) return false;
    for (std::size_t i = Home(h);; i = (i + 1) & mask_) {
      if (slots_[i] == h) return true;
      if (IsZero(slots_[i])) return false;
    }
  }

  // True when `h` was not in the set.
  bool insert(const Hash& h) {
    if (IsZero(h)) {
      const bool fresh = !has_zero_;
      has_zero_ = true;
      return fresh;
    }
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    std::size_t i = Home(h);
    for (; !IsZero(slots_[i]); i = (i + 1) & mask_) {
      if (slots_[i] == h) return false;
    }
    slots_[i] = h;
    ++size_;
    return true;
  }

  // True when `h` was in the set.
  bool erase(const Hash& h) {
    if (IsZero(h)) {
      const bool had = has_zero_;
      has_zero_ = false;
      return had;
    }
    if (slots_.empty()) return false;
    std::size_t i = Home(h);
    for (; slots_[i] != h; i = (i + 1) & mask_) {
      if (IsZero(slots_[i])) return false;
    }
    // Backward shift: move later members of the run into the hole when their home allows it.
    for (std::size_t j = (i + 1) & mask_; !IsZero(slots_[j]); j = (j + 1) & mask_) {
      const std::size_t home = Home(slots_[j]);
      // Movable into hole i unless home lies cyclically in (i, j].
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Hash{};
    --size_;
    return true;
  }

  // Empties the set. Keeps the array (the next block's txs will need about as many slots),
  // unless it was under 1/8 full: then it is freed, so that a pool that once held a million
  // txs does not clear tens of MB at every block.
  void clear() {
    if (slots_.size() > 64 && size_ * 8 < slots_.size()) {
      std::vector<Hash>().swap(slots_);
      mask_ = 0;
      shift_ = 64;
    } else {
      std::fill(slots_.begin(), slots_.end(), Hash{});
    }
    size_ = 0;
    has_zero_ = false;
  }

  std::size_t size() const { return size_ + (has_zero_ ? 1 : 0); }

 private:
  static bool IsZero(const Hash& h) {
    std::uint64_t w[4];
    std::memcpy(w, h.data(), sizeof w);
    return (w[0] | w[1] | w[2] | w[3]) == 0;
  }
  std::size_t Home(const Hash& h) const {
    std::uint64_t x;
    std::memcpy(&x, h.data(), sizeof x);
    x = (x ^ seed_) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(x >> shift_);
  }
  void Grow() {
    std::vector<Hash> old = std::move(slots_);
    const std::size_t capacity = old.empty() ? 64 : old.size() * 2;
    slots_.assign(capacity, Hash{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    for (const Hash& h : old) {
      if (IsZero(h)) continue;
      std::size_t i = Home(h);
      while (!IsZero(slots_[i])) i = (i + 1) & mask_;
      slots_[i] = h;
    }
  }

  std::uint64_t seed_;
  std::vector<Hash> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;  // non-zero members
  bool has_zero_ = false;
};

}  // namespace kairos::app
