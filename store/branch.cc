#include "store/branch.h"

#include <cstdio>
#include <cstdlib>

namespace kairos::store {

namespace {

// Merges the branch's writes (which win, and may be deletes) with the parent's iterator.
class MergedIterator final : public KvIterator {
 public:
  using OwnIterator = std::map<std::string_view, const std::optional<std::string>*>::const_iterator;
  MergedIterator(OwnIterator it, OwnIterator end, std::unique_ptr<KvIterator> parent)
      : it_(it), end_(end), parent_(std::move(parent)) {
    Settle();
  }

  bool Valid() const override { return current_ != Source::kNone; }
  std::string_view key() const override {
    return current_ == Source::kOwn ? it_->first : parent_->key();
  }
  std::string_view value() const override {
    return current_ == Source::kOwn ? std::string_view(**it_->second) : parent_->value();
  }
  void Next() override {
    if (current_ == Source::kOwn) {
      ++it_;
    } else {
      parent_->Next();
    }
    Settle();
  }
  Status status() const override { return parent_->status(); }

 private:
  enum class Source { kNone, kOwn, kParent };

  // Positions on the smallest visible key: own entries shadow the parent's equal key, and own
  // deletes hide it.
  void Settle() {
    for (;;) {
      const bool own = it_ != end_;
      const bool parent = parent_->Valid();
      if (!own && !parent) {
        current_ = Source::kNone;
        return;
      }
      if (own && parent && parent_->key() == it_->first) {
        parent_->Next();  // shadowed
        continue;
      }
      if (own && (!parent || it_->first < parent_->key())) {
        if (!*it_->second) {  // a delete: skip it
          ++it_;
          continue;
        }
        current_ = Source::kOwn;
        return;
      }
      current_ = Source::kParent;
      return;
    }
  }

  OwnIterator it_, end_;
  std::unique_ptr<KvIterator> parent_;
  Source current_ = Source::kNone;
};

}  // namespace

Status KvLimits::Check(std::string_view key, const std::string_view* value) const {
  if (key.empty()) return Status::InvalidArgument("empty key");
  if (key.size() > max_key_bytes) {
    return Status::InvalidArgument("key of " + std::to_string(key.size()) +
                                   " bytes exceeds the limit of " +
                                   std::to_string(max_key_bytes) + " (genesis app_state.store.max_key_bytes)");
  }
  if (value != nullptr) {
    if (value->empty()) {
      return Status::InvalidArgument("empty value (delete the key instead)");
    }
    if (value->size() > max_value_bytes) {
      return Status::InvalidArgument("value of " + std::to_string(value->size()) +
                                     " bytes exceeds the limit of " +
                                     std::to_string(max_value_bytes) +
                                     " (genesis app_state.store.max_value_bytes)");
    }
  }
  return Status::OK();
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) != 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return end;
}

void Branch::Write(std::string_view key, std::optional<std::string_view> value) {
  auto it = entries_.find(key);
  if (it == entries_.end()) it = entries_.emplace(std::string(key), Entry{}).first;
  Entry& e = it->second;
  if (journal_open_) {
    // The new value is copied first (`value` may view the old one), then the old one moves
    // into the record.
    std::optional<std::string> next;
    if (value) next.emplace(*value);
    // The record exists before the old value moves into it: if growing the journal throws,
    // the entry still holds its value.
    Undo& undo = journal_.emplace_back(Undo{&*it, std::nullopt, e.written});
    undo.value = std::move(e.value);
    e.value = std::move(next);
    MarkWritten(&*it);
    return;
  }
  MarkWritten(&*it);
  // Rewriting a key: no new node or key string, and the value's buffer is reused.
  if (!value) {
    e.value.reset();
  } else if (e.value) {
    e.value->assign(*value);
  } else {
    e.value.emplace(*value);
  }
}

void Branch::MarkWritten(Entries::value_type* entry) {
  if (entry->second.written) return;
  entry->second.written = true;
  if (pending_.capacity() == 0) pending_.reserve(8);  // a tx's branch writes a handful
  pending_.push_back(entry);
}

void Branch::SortPending() const {
  if (journal_open_ && !pending_.empty()) journal_sorted_ = true;
  for (const auto* entry : pending_) {
    order_.emplace(std::string_view(entry->first), &entry->second.value);
  }
  pending_.clear();
}

void Branch::BeginJournal() {
  if (journal_open_) {
    // Checked in every build: a nested journal would clear the outer one's undo log, and its
    // rollback would then keep writes it must undo.
    std::fprintf(stderr, "store::Branch: BeginJournal with a journal already open\n");
    std::abort();
  }
  journal_open_ = true;
  journal_.clear();
  journal_pending_mark_ = pending_.size();
  journal_sorted_ = false;
}

void Branch::CommitJournal() {
  journal_open_ = false;
  journal_.clear();
}

void Branch::RollBackJournal() {
  journal_open_ = false;
  // Newest first, so a key written twice ends with its value from before the journal.
  for (auto r = journal_.rbegin(); r != journal_.rend(); ++r) {
    Entry& e = r->entry->second;
    e.value = std::move(r->value);
    if (!r->written && e.written && journal_sorted_) order_.erase(r->entry->first);
    e.written = r->written;
  }
  // The keys first written in the journal were appended to pending_ after the mark. If
  // SortPending ran meanwhile, it emptied pending_ (those it moved to order_ were erased above)
  // and everything added since is the journal's.
  if (journal_sorted_) {
    pending_.clear();
  } else {
    pending_.resize(journal_pending_mark_);
  }
  journal_.clear();
}

Status Branch::ParentAnswer(const Entry& e, std::string* value) {
  if (!e.parent) return Status::NotFound("absent");
  *value = *e.parent;
  return Status::OK();
}

Status Branch::GetFromParent(std::string_view key, std::string* value) const {
  if (!cache_reads_) return parent_->Get(key, value);
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.parent_known) return ParentAnswer(it->second, value);
  return ReadParent(key, it, value);
}

Status Branch::ReadParent(std::string_view key, Entries::iterator it,
                          std::string* value) const {
  if (!cache_reads_) return parent_->Get(key, value);
  Status s = parent_->Get(key, value);
  if (!s.ok() && !s.IsNotFound()) return s;  // a failure is not an answer to keep
  if (it == entries_.end()) it = entries_.emplace(std::string(key), Entry{}).first;
  Entry& e = it->second;
  e.parent_known = true;
  if (s.ok()) {
    e.parent.emplace(*value);
  } else {
    e.parent.reset();
  }
  return s;
}

Status Branch::Get(std::string_view key, std::string* value) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return ReadParent(key, it, value);  // one probe, not two
  const Entry& e = it->second;
  if (e.written) {
    if (!e.value) return Status::NotFound("deleted in this branch");
    *value = *e.value;
    return Status::OK();
  }
  if (e.parent_known) return ParentAnswer(e, value);
  return ReadParent(key, it, value);
}

std::unique_ptr<KvIterator> Branch::Iterate(std::string_view start, std::string_view end) const {
  SortPending();
  auto first = order_.lower_bound(start);
  auto last = end.empty() ? order_.end() : order_.lower_bound(end);
  if (!end.empty() && end <= start) last = first;  // an empty range, not a walk off the map
  return std::make_unique<MergedIterator>(first, last, parent_->Iterate(start, end));
}

Status Branch::Set(std::string_view key, std::string_view value) {
  if (Status s = limits_.Check(key, &value); !s.ok()) return s;
  Write(key, value);
  return Status::OK();
}

Status Branch::Delete(std::string_view key) {
  if (Status s = limits_.Check(key, nullptr); !s.ok()) return s;
  Write(key, std::nullopt);
  return Status::OK();
}

void Branch::Apply(const Branch& child) {
  for (const auto& [key, e] : child.entries_) {
    if (!e.written) continue;
    Write(key, e.value ? std::optional<std::string_view>(*e.value) : std::nullopt);
  }
}

void Branch::Apply(const ChangeSet& changes) {
  for (const auto& [key, value] : changes) {
    Write(key, value ? std::optional<std::string_view>(*value) : std::nullopt);
  }
}

ChangeSet Branch::changes() const {
  ChangeSet out;
  for (const auto& [key, e] : entries_) {
    if (e.written) out.emplace(key, e.value);
  }
  return out;
}

}  // namespace kairos::store
