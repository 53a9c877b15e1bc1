// The compact stored page (smt.h: Page) against the draft it is made from: every slot, every
// binary node, the encoding and the memory it takes, over random pages of every shape.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>

#include "store/smt.h"

using namespace kairos::store;

namespace {

Hash RandomHash(std::mt19937_64& rng) {
  Hash h;
  for (auto& b : h) b = static_cast<std::uint8_t>(rng());
  return h;
}

// A sealed draft whose slots are each empty, a leaf or a child page with the given odds.
PageDraft RandomDraft(std::mt19937_64& rng, int leaf_percent, int page_percent) {
  PageDraft d;
  for (Slot& s : d.slots) {
    const int roll = static_cast<int>(rng() % 100);
    if (roll < leaf_percent) {
      s = Slot::LeafWithHash(RandomHash(rng), RandomHash(rng),
                             static_cast<Version>(rng() % (Version{1} << 40)) + 1);
    } else if (roll < leaf_percent + page_percent) {
      s.kind = Slot::Kind::kPage;
      s.hash = RandomHash(rng);
      s.version = static_cast<Version>(rng() % 1000000) + 1;
    }
  }
  d.Seal();
  return d;
}

int Keys(const PageDraft& d) {
  int keys = 0;
  for (const Slot& s : d.slots) keys += s.kind == Slot::Kind::kLeaf ? 1 : s.kind == Slot::Kind::kPage ? 2 : 0;
  return keys;
}

void CheckSame(const Page& page, const PageDraft& draft) {
  for (int n = 0; n < kSlotsPerPage; ++n) {
    CHECK(page.slot(n) == draft.slots[n]);
    CHECK(page.slot_empty(n) == draft.slots[n].empty());
  }
  for (int i = 0; i < 2 * kSlotsPerPage - 1; ++i) {
    const PageNode got = page.Node(i), want = draft.Node(i);
    CHECK(got.hash == want.hash);
    CHECK(got.keys == want.keys);
    if (i < kSlotsPerPage - 1) CHECK(page.two_keys(i) == (want.keys == 2));
  }
  CHECK(page.hash() == draft.inner[0].hash);
}

}  // namespace

TEST_CASE("a compact page gives back every slot and node of its draft", "[store][smt]") {
  std::mt19937_64 rng(0x5eed);
  int pages = 0;
  for (const auto& [leaf, child] : {std::pair{10, 0}, {15, 5}, {50, 0}, {30, 30}, {100, 0},
                                    {0, 100}, {60, 40}, {5, 10}}) {
    for (int round = 0; round < 200; ++round) {
      const PageDraft draft = RandomDraft(rng, leaf, child);
      if (Keys(draft) < 2) continue;  // a smaller subtree collapses; no page is made for it
      ++pages;
      const auto page = Page::Make(draft);
      REQUIRE(page != nullptr);
      CheckSame(*page, draft);

      PageDraft expanded;
      page->Expand(&expanded);
      for (int n = 0; n < kSlotsPerPage; ++n) CHECK(expanded.slots[n] == draft.slots[n]);
      for (int i = 0; i < kSlotsPerPage - 1; ++i) {
        CHECK(expanded.inner[i].hash == draft.inner[i].hash);
        CHECK(expanded.inner[i].keys == draft.inner[i].keys);
      }

      // Decoding the encoding computes the same nodes, and encodes back to the same bytes.
      const std::string bytes = page->Encode();
      const auto decoded = Page::Decode(bytes);
      REQUIRE(decoded != nullptr);
      CheckSame(*decoded, draft);
      CHECK(decoded->Encode() == bytes);
      CHECK(decoded->bytes() == page->bytes());
    }
  }
  CHECK(pages > 1000);
}

TEST_CASE("a compact page keeps only its non-empty slots and its two-key nodes", "[store][smt]") {
  PageDraft two;  // two leaves in slots 0 and 15: only the page root joins them
  std::mt19937_64 rng(7);
  two.slots[0] = Slot::LeafWithHash(RandomHash(rng), RandomHash(rng), 3);
  two.slots[15] = Slot::LeafWithHash(RandomHash(rng), RandomHash(rng), 4);
  two.Seal();
  const auto small = Page::Make(two);
  CHECK(small->bytes() == 8 + 2 * 72 + 32);
  CHECK(small->hash() == InnerHash(two.slots[0].hash, two.slots[15].hash));
  // The nodes above one leaf are that leaf; above none, empty.
  CHECK(small->Node(1).hash == two.slots[0].hash);
  CHECK(small->Node(1).keys == 1);
  CHECK(small->Node(3).hash == two.slots[0].hash);
  CHECK(small->Node(15 + 1).keys == 0);
  CHECK(small->Node(15 + 1).hash == kEmptyHash);

  PageDraft full;
  for (Slot& s : full.slots) s = Slot::LeafWithHash(RandomHash(rng), RandomHash(rng), 9);
  full.Seal();
  CHECK(Page::Make(full)->bytes() == 8 + 16 * 72 + 15 * 32);
}

TEST_CASE("a malformed page encoding decodes to nothing", "[store][smt]") {
  PageDraft d;
  std::mt19937_64 rng(11);
  d.slots[2] = Slot::LeafWithHash(RandomHash(rng), RandomHash(rng), 5);
  d.slots[9].kind = Slot::Kind::kPage;
  d.slots[9].hash = RandomHash(rng);
  d.slots[9].version = 6;
  d.Seal();
  const std::string good = Page::Make(d)->Encode();
  REQUIRE(Page::Decode(good) != nullptr);
  CHECK(Page::Decode(good.substr(0, good.size() - 1)) == nullptr);  // truncated
  CHECK(Page::Decode(good + "x") == nullptr);                       // trailing bytes
  CHECK(Page::Decode("ab") == nullptr);                             // no masks
  std::string both = good;
  both[3] = static_cast<char>(both[3] | 0x04);  // slot 2 both a leaf and a page
  CHECK(Page::Decode(both) == nullptr);
}
