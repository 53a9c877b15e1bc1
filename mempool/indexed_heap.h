// IndexedHeap: a d-ary min-heap ("first" = comes out first) of keyed items, any of which can be
// erased or re-keyed through the 32-bit handle Push returned. The mempool's frontier (eviction
// order) and expiry (oldest arrival) heaps use it.
//
// Layout, for the cost of one sift in a large heap (every level below the cached top is a cache
// miss): the keys are in one array and the handles in a parallel one (structure of arrays, so a
// 16-byte key has no padding and a level's comparisons read keys only). The arrays start
// `kArity - 1` slots before a cache-line boundary, so the children of every item (positions
// kArity*p+1 .. kArity*p+kArity) fill whole aligned blocks: with 8 children and 16-byte keys, two
// adjacent cache lines (which the hardware fetches as a pair), with the mempool frontier's
// 24-byte keys (a 128-bit priority and the arrival) three, and 32 bytes of handles. Eight
// children give log8 n levels, two thirds of a 4-ary heap's, for 7 comparisons per level in
// lines already loaded. Positions and owners are dense arrays indexed by handle, so a sift reads
// and writes the key, handle and position arrays only, never an owner. A sift up knows every
// ancestor's position without reading anything, so it starts loading all of them at once.
//
// The arrays grow by a quarter (not double), so at most a fifth of their bytes is slack.
// Counts levels moved and comparisons into a WorkCounters (a debug statistic).
//
// Thread-compatible.
#pragma once

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "mempool/priority_mempool.h"

namespace kairos::mempool {

// Grows `v` by a quarter when it is full (std::vector doubles), so that at most a fifth of its
// capacity is unused.
template <class V>
void ReserveForOneMore(V& v) {
  if (v.size() == v.capacity()) v.reserve(v.size() + v.size() / 4 + 16);
}

template <class Key, class Owner, class First, std::size_t Arity = 8>
class IndexedHeap {
  static_assert(std::is_trivially_copyable_v<Key>);
  static_assert(Arity >= 2 && (Arity & (Arity - 1)) == 0);

 public:
  static constexpr std::size_t kArity = Arity;
  static constexpr std::uint32_t kNoHandle = 0xFFFFFFFFu;

  explicit IndexedHeap(WorkCounters* work) : work_(work) {}
  ~IndexedHeap() { Free(); }
  IndexedHeap(const IndexedHeap&) = delete;
  IndexedHeap& operator=(const IndexedHeap&) = delete;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // By position (0 = first out): what PlanEviction walks.
  const Key& KeyAt(std::size_t pos) const { return keys_[pos]; }
  Owner* OwnerAt(std::size_t pos) const { return owners_[handles_[pos]]; }
  // By handle.
  Owner* OwnerOf(std::uint32_t handle) const { return owners_[handle]; }
  const Key& KeyOf(std::uint32_t handle) const { return keys_[pos_[handle]]; }
  // Starts loading the key of `handle` (a hint).
  void PrefetchHandle(std::uint32_t handle) const { __builtin_prefetch(keys_ + pos_[handle]); }

  std::uint32_t Push(Owner* owner, const Key& key) {
    std::uint32_t h;
    if (!free_.empty()) {
      h = free_.back();
      free_.pop_back();
      owners_[h] = owner;
    } else {
      h = static_cast<std::uint32_t>(owners_.size());
      assert(h != kNoHandle);
      ReserveForOneMore(owners_);
      ReserveForOneMore(pos_);
      owners_.push_back(owner);
      pos_.push_back(0);
    }
    if (size_ == capacity_) Grow();
    keys_[size_] = key;
    handles_[size_] = h;
    pos_[h] = static_cast<std::uint32_t>(size_);
    ++size_;
    SiftUp(size_ - 1);
    return h;
  }

  void Erase(std::uint32_t handle) {
    const std::size_t i = pos_[handle];
    owners_[handle] = nullptr;
    ReserveForOneMore(free_);
    free_.push_back(handle);
    --size_;
    if (i == size_) return;
    Set(i, keys_[size_], handles_[size_]);
    if (!SiftUp(i)) SiftDown(i);
  }

  // The handle now stands for `owner` with `key` (one sift instead of an erase and a push).
  void Replace(std::uint32_t handle, Owner* owner, const Key& key) {
    owners_[handle] = owner;
    const std::size_t i = pos_[handle];
    keys_[i] = key;
    if (!SiftUp(i)) SiftDown(i);
  }

  void Clear() {
    size_ = 0;
    pos_.clear();
    owners_.clear();
    free_.clear();
  }

  // For tests: the heap order holds and positions, handles and owners agree.
  bool Valid() const {
    std::size_t live = 0;
    for (std::size_t h = 0; h < owners_.size(); ++h) {
      if (owners_[h] == nullptr) continue;
      ++live;
      if (pos_[h] >= size_ || handles_[pos_[h]] != h) return false;
    }
    if (live != size_ || live + free_.size() != owners_.size()) return false;
    for (std::size_t i = 1; i < size_; ++i) {
      if (First()(keys_[i], keys_[(i - 1) / kArity])) return false;
    }
    return true;
  }

 private:
  // Slots before the first item, so that each block of siblings starts on a block boundary.
  static constexpr std::size_t kPad = kArity - 1;
  static constexpr std::size_t kKeyBlock = kArity * sizeof(Key);
  // The largest power of two that divides a block (at least a cache line): every block then
  // starts on a line boundary (blocks of 3 lines, for 24-byte keys, start on any line).
  static constexpr std::size_t kAlign =
      std::max<std::size_t>(64, std::size_t{1} << std::countr_zero(kKeyBlock));

  bool Less(const Key& a, const Key& b) const {
    ++work_->heap_compares;
    return First()(a, b);
  }
  void Set(std::size_t i, const Key& key, std::uint32_t handle) {
    keys_[i] = key;
    handles_[i] = handle;
    pos_[handle] = static_cast<std::uint32_t>(i);
  }
  // Returns whether the item moved.
  bool SiftUp(std::size_t i) {
    if (i == 0) return false;
    // Every ancestor's position is known: start loading them all (the upper ones are cached).
    for (std::size_t a = (i - 1) / kArity; a > 0; a = (a - 1) / kArity) {
      __builtin_prefetch(keys_ + a);
    }
    const Key key = keys_[i];
    const std::uint32_t handle = handles_[i];
    const std::size_t start = i;
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!Less(key, keys_[parent])) break;
      Set(i, keys_[parent], handles_[parent]);
      i = parent;
      ++work_->heap_levels;
    }
    if (i == start) return false;
    Set(i, key, handle);
    return true;
  }
  void SiftDown(std::size_t i) {
    const Key key = keys_[i];
    const std::uint32_t handle = handles_[i];
    const std::size_t n = size_;
    for (;;) {
      const std::size_t first = kArity * i + 1;
      if (first >= n) break;
      const std::size_t end = std::min(first + kArity, n);
      std::size_t child = first;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (Less(keys_[c], keys_[child])) child = c;
      }
      if (!Less(keys_[child], key)) break;
      Set(i, keys_[child], handles_[child]);
      i = child;
      ++work_->heap_levels;
    }
    Set(i, key, handle);
  }

  void Grow() {
    const std::size_t cap = capacity_ + capacity_ / 4 + 64;
    char* keys = static_cast<char*>(
        ::operator new((cap + kPad) * sizeof(Key), std::align_val_t{kAlign}));
    char* handles = static_cast<char*>(
        ::operator new((cap + kPad) * sizeof(std::uint32_t), std::align_val_t{kAlign}));
    Key* new_keys = reinterpret_cast<Key*>(keys) + kPad;
    std::uint32_t* new_handles = reinterpret_cast<std::uint32_t*>(handles) + kPad;
    if (size_ != 0) {
      std::memcpy(static_cast<void*>(new_keys), keys_, size_ * sizeof(Key));
      std::memcpy(new_handles, handles_, size_ * sizeof(std::uint32_t));
    }
    Free();
    keys_ = new_keys;
    handles_ = new_handles;
    capacity_ = cap;
  }
  void Free() {
    if (keys_ == nullptr) return;
    ::operator delete(static_cast<void*>(keys_ - kPad), std::align_val_t{kAlign});
    ::operator delete(static_cast<void*>(handles_ - kPad), std::align_val_t{kAlign});
    keys_ = nullptr;
    handles_ = nullptr;
  }

  WorkCounters* work_;
  Key* keys_ = nullptr;               // by position; kPad slots before keys_[0] are unused
  std::uint32_t* handles_ = nullptr;  // by position, parallel to keys_
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::vector<std::uint32_t> pos_;  // by handle: position
  std::vector<Owner*> owners_;      // by handle; nullptr = free
  std::vector<std::uint32_t> free_;  // handles not in use
};

}  // namespace kairos::mempool
