// FlatIndex: an open-addressing hash index of pointers (linear probing, backward-shift deletion),
// keyed by something the pointed-to object holds. One 8-byte slot per entry and no node per
// entry, so it costs 8 bytes / load factor per entry; the mempool's own indexes by tx hash, by
// sender and of recent removals use it. The table grows by half (not double) when it would be
// more than 3/4 full, so a growing index stays between 1/2 and 3/4 full (10.7-16 bytes per
// entry); it halves when it is less than 1/8 full. The capacity need not be a power of two: the
// bucket is the high 32 bits of the mixed hash scaled to the capacity (multiply and shift).
//
// A slot holds the pointer and, in its top 16 bits (user-space pointers fit in 48 bits on x86-64
// and AArch64 Linux), an 8-bit tag of the key's hash and the slot's distance from its home
// bucket (saturating at 255). A lookup dereferences a slot's object only when the tags match (a
// miss in a large pool costs the slot's cache line, not one line per occupied slot of the probe
// run), and a deletion's backward shift reads the distances, not the keys (so erasing from a
// large index does not load the object of every later slot in the run). Should a pointer ever not
// fit, the index drops these bits for good (and compares and hashes keys, as without them).
//
// Traits provide `using Key`, `static Key KeyOf(const T*)` and `static std::uint64_t HashOf(const
// Key&)`; keys compare with ==. The bucket is taken from the high bits of (Hash ^ seed) times a
// constant, and the seed is chosen per index at random, so a peer cannot aim txs at one bucket.
//
// Thread-compatible. Never iterated for anything observable, so its layout (which depends on the
// seed) cannot make the pool's decisions nondeterministic.
#pragma once

#include <algorithm>
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
    for (std::size_t i = Home(mixed);; i = Next(i)) {
      Count();
      const std::uintptr_t s = slots_[i];
      if (s == 0) return nullptr;
      if ((s & tag_mask_) == tag && Traits::KeyOf(Ptr(s)) == key) return Ptr(s);
    }
  }

  // For tests: every slot's distance bits agree with its key's home bucket.
  bool Valid() const {
    std::size_t n = 0;
    for (std::size_t j = 0; j < slots_.size(); ++j) {
      if (slots_[j] == 0) continue;
      ++n;
      const std::size_t home = Home(Mix(Traits::KeyOf(Ptr(slots_[j]))));
      const std::size_t d = Gap(home, j);
      if (meta_mask_ != 0 && (slots_[j] >> kDistShift) != std::min<std::size_t>(d, kMaxDist)) {
        return false;
      }
      for (std::size_t k = home; k != j; k = Next(k)) {  // no hole between home and the slot
        if (slots_[k] == 0) return false;
      }
    }
    return n == size_;
  }

  // Starts loading the slot where a lookup of `key` begins (a hint; no effect on the contents).
  void Prefetch(const Key& key) const {
    if (size_ != 0) __builtin_prefetch(slots_.data() + Home(Mix(key)));
  }

  // REQUIRES: no value with the same key is present.
  void Insert(T* value) {
    if ((reinterpret_cast<std::uintptr_t>(value) & kMetaBits) != 0 && meta_mask_ != 0) DropTags();
    if ((size_ + 1) * 4 > slots_.size() * 3) {
      Rehash(slots_.empty() ? 16 : slots_.size() + slots_.size() / 2);
    }
    Place(value);
    ++size_;
  }

  // Puts `value` in the place of the value with the same key (one lookup, nothing moves).
  // REQUIRES: a value with the key of `value` is present.
  void Replace(T* value) {
    if ((reinterpret_cast<std::uintptr_t>(value) & kMetaBits) != 0 && meta_mask_ != 0) DropTags();
    const Key& key = Traits::KeyOf(value);
    const std::uint64_t mixed = Mix(key);
    const std::uintptr_t tag = TagOf(mixed);
    for (std::size_t i = Home(mixed);; i = Next(i)) {
      Count();
      const std::uintptr_t s = slots_[i];
      if ((s & tag_mask_) == tag && Traits::KeyOf(Ptr(s)) == key) {
        slots_[i] = (s & meta_mask_) | reinterpret_cast<std::uintptr_t>(value);
        return;
      }
    }
  }

  // Removes the value with `key`; returns it, or nullptr when there is none.
  T* Erase(const Key& key) {
    if (size_ == 0) return nullptr;
    const std::uint64_t mixed = Mix(key);
    const std::uintptr_t tag = TagOf(mixed);
    std::size_t i = Home(mixed);
    for (;; i = Next(i)) {
      Count();
      const std::uintptr_t s = slots_[i];
      if (s == 0) return nullptr;
      if ((s & tag_mask_) == tag && Traits::KeyOf(Ptr(s)) == key) break;
    }
    T* found = Ptr(slots_[i]);
    // Backward-shift deletion: pull later members of the probe run into the hole when their home
    // is not cyclically within (hole, j], i.e. their distance is at least the hole's.
    for (std::size_t j = Next(i); slots_[j] != 0; j = Next(j)) {
      Count();
      const std::size_t d = Distance(j);
      const std::size_t gap = Gap(i, j);
      if (d >= gap) {
        slots_[i] = WithDistance(slots_[j], d - gap);
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
  static constexpr int kDistShift = 56;
  static constexpr std::size_t kMaxDist = 255;
  static constexpr std::uintptr_t kMetaBits = ~std::uintptr_t{0} << kTagShift;
  static constexpr std::uintptr_t kTagBits = std::uintptr_t{0xFF} << kTagShift;
  static_assert(sizeof(std::uintptr_t) == 8, "tags need 64-bit pointers");

  void Count() const {
    if (probes_ != nullptr) ++*probes_;
  }
  std::uint64_t Mix(const Key& key) const {
    return (Traits::HashOf(key) ^ seed_) * 0x9E3779B97F4A7C15ull;
  }
  // The bucket comes from the top 32 bits of the mixed hash (scaled to the capacity), the tag
  // from its low 8 bits.
  std::size_t Home(std::uint64_t mixed) const {
    return static_cast<std::size_t>(((mixed >> 32) * slots_.size()) >> 32);
  }
  std::size_t Next(std::size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }
  // Steps from slot `from` forward (cyclically) to slot `to`.
  std::size_t Gap(std::size_t from, std::size_t to) const {
    return to >= from ? to - from : to + slots_.size() - from;
  }
  std::uintptr_t TagOf(std::uint64_t mixed) const {
    return (static_cast<std::uintptr_t>(mixed) << kTagShift) & tag_mask_;
  }
  T* Ptr(std::uintptr_t slot) const { return reinterpret_cast<T*>(slot & ~meta_mask_); }
  // How far the occupied slot `j` is from its home bucket (from its bits unless they saturated
  // or were dropped; then from its key).
  std::size_t Distance(std::size_t j) const {
    const std::size_t d = meta_mask_ != 0 ? slots_[j] >> kDistShift : kMaxDist;
    if (d < kMaxDist) return d;
    return Gap(Home(Mix(Traits::KeyOf(Ptr(slots_[j])))), j);
  }
  std::uintptr_t WithDistance(std::uintptr_t slot, std::size_t d) const {
    if (meta_mask_ == 0) return slot;
    return (slot & ~(std::uintptr_t{0xFF} << kDistShift)) |
           (static_cast<std::uintptr_t>(std::min(d, kMaxDist)) << kDistShift);
  }

  void Place(T* value) {
    const std::uint64_t mixed = Mix(Traits::KeyOf(value));
    std::size_t i = Home(mixed);
    std::size_t d = 0;
    Count();
    while (slots_[i] != 0) {
      i = Next(i);
      ++d;
      Count();
    }
    slots_[i] = WithDistance(reinterpret_cast<std::uintptr_t>(value) | TagOf(mixed), d);
  }

  void DropTags() {
    for (std::uintptr_t& s : slots_) s &= ~meta_mask_;
    tag_mask_ = 0;
    meta_mask_ = 0;
  }

  void Rehash(std::size_t capacity) {  // capacity >= 16, < 2^32
    std::vector<std::uintptr_t> old(capacity, 0);
    old.swap(slots_);
    for (std::uintptr_t s : old) {
      if (s != 0) Place(Ptr(s));
    }
  }

  std::uint64_t seed_;
  std::vector<std::uintptr_t> slots_;
  std::size_t size_ = 0;
  std::uintptr_t tag_mask_ = kTagBits;    // 0 once the tags are dropped
  std::uintptr_t meta_mask_ = kMetaBits;  // tag and distance bits; 0 once dropped
  std::uint64_t* probes_ = nullptr;
};

}  // namespace kairos::mempool
