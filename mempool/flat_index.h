// FlatIndex: an open-addressing hash index of pointers (linear probing, backward-shift deletion),
// keyed by something the pointed-to object holds. One 8-byte slot per entry and no node per
// entry, so it costs 8 bytes / load factor (between 1/4 and 3/4) per entry; the mempool's own
// indexes by tx hash, by sender and of recent removals use it.
//
// A slot holds the pointer with a 16-bit tag of the key's hash in its top bits (user-space
// pointers fit in 48 bits on x86-64 and AArch64 Linux), so a lookup dereferences a slot's object
// only when the tags match: a miss in a large pool costs the slot's cache line, not one line per
// occupied slot of the probe run. Should a pointer ever not fit, the index drops the tags for
// good (and compares every key, as without them).
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
  // Counts every slot a lookup, insert or erase inspects into *probes (a debug statistic).
  void set_probe_counter(std::uint64_t* probes) { probes_ = probes; }

  T* Find(const Key& key) const {
    if (size_ == 0) return nullptr;
    const std::uint64_t mixed = Mix(key);
    const std::uintptr_t tag = TagOf(mixed);
    for (std::size_t i = Home(mixed);; i = (i + 1) & mask_) {
      Count();
      const std::uintptr_t s = slots_[i];
      if (s == 0) return nullptr;
      if ((s & tag_mask_) == tag && Traits::KeyOf(Ptr(s)) == key) return Ptr(s);
    }
  }

  // Starts loading the slot where a lookup of `key` begins (a hint; no effect on the contents).
  void Prefetch(const Key& key) const {
    if (size_ != 0) __builtin_prefetch(slots_.data() + Home(Mix(key)));
  }

  // REQUIRES: no value with the same key is present.
  void Insert(T* value) {
    if ((reinterpret_cast<std::uintptr_t>(value) & kTagBits) != 0 && tag_mask_ != 0) DropTags();
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 16 : slots_.size() * 2);
    Place(value);
    ++size_;
  }

  // Removes the value with `key`; returns it, or nullptr when there is none.
  T* Erase(const Key& key) {
    if (size_ == 0) return nullptr;
    const std::uint64_t mixed = Mix(key);
    const std::uintptr_t tag = TagOf(mixed);
    std::size_t i = Home(mixed);
    for (;; i = (i + 1) & mask_) {
      Count();
      const std::uintptr_t s = slots_[i];
      if (s == 0) return nullptr;
      if ((s & tag_mask_) == tag && Traits::KeyOf(Ptr(s)) == key) break;
    }
    T* found = Ptr(slots_[i]);
    // Backward-shift deletion: pull later members of the probe run into the hole when their home
    // is not cyclically within (hole, j].
    for (std::size_t j = (i + 1) & mask_; slots_[j] != 0; j = (j + 1) & mask_) {
      Count();
      const std::size_t home = Home(Mix(Traits::KeyOf(Ptr(slots_[j]))));
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = 0;
    --size_;
    if (slots_.size() > 64 && size_ * 8 < slots_.size()) Rehash(slots_.size() / 2);
    return found;
  }

  template <class F>
  void ForEach(F&& f) const {
    for (std::uintptr_t s : slots_) {
      if (s != 0) f(Ptr(s));
    }
  }

 private:
  static constexpr int kTagShift = 48;
  static constexpr std::uintptr_t kTagBits = ~std::uintptr_t{0} << kTagShift;
  static_assert(sizeof(std::uintptr_t) == 8, "tags need 64-bit pointers");

  void Count() const {
    if (probes_ != nullptr) ++*probes_;
  }
  std::uint64_t Mix(const Key& key) const {
    return (Traits::HashOf(key) ^ seed_) * 0x9E3779B97F4A7C15ull;
  }
  // The bucket comes from the top bits of the mixed hash, the tag from its low bits.
  std::size_t Home(std::uint64_t mixed) const { return static_cast<std::size_t>(mixed >> shift_); }
  std::uintptr_t TagOf(std::uint64_t mixed) const {
    return (static_cast<std::uintptr_t>(mixed) << kTagShift) & tag_mask_;
  }
  T* Ptr(std::uintptr_t slot) const { return reinterpret_cast<T*>(slot & ~tag_mask_); }

  void Place(T* value) {
    const std::uint64_t mixed = Mix(Traits::KeyOf(value));
    std::size_t i = Home(mixed);
    Count();
    while (slots_[i] != 0) {
      i = (i + 1) & mask_;
      Count();
    }
    slots_[i] = reinterpret_cast<std::uintptr_t>(value) | TagOf(mixed);
  }

  void DropTags() {
    for (std::uintptr_t& s : slots_) s &= ~tag_mask_;
    tag_mask_ = 0;
  }

  void Rehash(std::size_t capacity) {  // capacity: a power of two >= 16
    std::vector<std::uintptr_t> old(capacity, 0);
    old.swap(slots_);
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (std::uintptr_t s : old) {
      if (s != 0) Place(Ptr(s));
    }
  }

  std::uint64_t seed_;
  std::vector<std::uintptr_t> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  int shift_ = 64;
  std::uintptr_t tag_mask_ = kTagBits;  // 0 once the tags are dropped
  std::uint64_t* probes_ = nullptr;
};

}  // namespace kairos::mempool
