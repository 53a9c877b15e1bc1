// FlatIndex: an open-addressing hash index of pointers (linear probing, backward-shift deletion),
// keyed by something the pointed-to object holds. One pointer per slot and no node per entry,
// so it costs 8 bytes / load factor (between 1/4 and 3/4) per entry; the mempool's own indexes
// by tx hash, by sender and of recent removals use it.
//
// Traits provide `using Key`, `static Key KeyOf(const T*)` and `static std::uint64_t HashOf(const
// Key&)`; keys compare with ==. The bucket is taken from the high bits of (Hash ^ seed) times a
// constant, and the seed is chosen per index at random, so a peer cannot aim txs at one bucket.
//
// Thread-compatible. Never iterated for anything observable, so its layout (which depends on the
// seed) cannot make the pool's decisions nondeterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kairos::mempool {

template <class T, class Traits>
class FlatIndex {
 public:
  using Key = typename Traits::Key;

  explicit FlatIndex(std::uint64_t seed) : seed_(seed | 1) {}

  std::size_t size() const { return size_; }

  T* Find(const Key& key) const {
    if (size_ == 0) return nullptr;
    for (std::size_t i = Home(key);; i = (i + 1) & mask_) {
      T* v = slots_[i];
      if (v == nullptr) return nullptr;
      if (Traits::KeyOf(v) == key) return v;
    }
  }

  // REQUIRES: no value with the same key is present.
  void Insert(T* value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 16 : slots_.size() * 2);
    Place(value);
    ++size_;
  }

  // Removes the value with `key`; returns it, or nullptr when there is none.
  T* Erase(const Key& key) {
    if (size_ == 0) return nullptr;
    std::size_t i = Home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i] == nullptr) return nullptr;
      if (Traits::KeyOf(slots_[i]) == key) break;
    }
    T* found = slots_[i];
    // Backward-shift deletion: pull later members of the probe run into the hole when their home
    // is not cyclically within (hole, j].
    for (std::size_t j = (i + 1) & mask_; slots_[j] != nullptr; j = (j + 1) & mask_) {
      const std::size_t home = Home(Traits::KeyOf(slots_[j]));
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = nullptr;
    --size_;
    if (slots_.size() > 64 && size_ * 8 < slots_.size()) Rehash(slots_.size() / 2);
    return found;
  }

  template <class F>
  void ForEach(F&& f) const {
    for (T* v : slots_) {
      if (v != nullptr) f(v);
    }
  }

 private:
  std::size_t Home(const Key& key) const {
    return static_cast<std::size_t>(((Traits::HashOf(key) ^ seed_) * 0x9E3779B97F4A7C15ull) >>
                                    shift_);
  }

  void Place(T* value) {
    std::size_t i = Home(Traits::KeyOf(value));
    while (slots_[i] != nullptr) i = (i + 1) & mask_;
    slots_[i] = value;
  }

  void Rehash(std::size_t capacity) {  // capacity: a power of two >= 16
    std::vector<T*> old(capacity, nullptr);
    old.swap(slots_);
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (T* v : old) {
      if (v != nullptr) Place(v);
    }
  }

  std::uint64_t seed_;
  std::vector<T*> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  int shift_ = 64;
};

}  // namespace kairos::mempool
