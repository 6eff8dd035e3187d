#include "tokenizer/token_ids.h"

#include <functional>

#include "common/check.h"

namespace izwi {
namespace {

uint64_t hash_of(std::string_view s) { return std::hash<std::string_view>{}(s); }

}  // namespace

void TokenIds::reserve(size_t count) {
  size_t capacity = 16;
  while (capacity < count + count / 2) capacity *= 2;  // load factor at most 2/3
  if (capacity <= slots_.size()) return;
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(capacity, Slot{});
  for (const Slot& s : old) {
    if (s.length == kEmpty) continue;
    size_t i = s.hash & (slots_.size() - 1);
    while (slots_[i].length != kEmpty) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = s;
  }
}

void TokenIds::grow() { reserve(slots_.empty() ? 16 : slots_.size()); }

size_t TokenIds::locate(std::string_view token, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.length == kEmpty) return i;
    if (s.hash == hash && s.length == token.size() && arena_.compare(s.offset, s.length, token) == 0) return i;
  }
}

bool TokenIds::emplace(std::string_view token, int32_t id) {
  if ((size_ + 1) * 3 > slots_.size() * 2) grow();
  const uint64_t hash = hash_of(token);
  Slot& s = slots_[locate(token, hash)];
  if (s.length != kEmpty) return false;
  if (arena_.size() + token.size() > UINT32_MAX) fail(ErrorCode::ResourceExhausted, "vocabulary text above 4 GiB");
  s = Slot{hash, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(token.size()), id};
  arena_.append(token);
  ++size_;
  return true;
}

void TokenIds::assign(std::string_view token, int32_t id) {
  if (!emplace(token, id)) slots_[locate(token, hash_of(token))].id = id;
}

std::optional<int32_t> TokenIds::find(std::string_view token) const {
  if (slots_.empty()) return std::nullopt;
  const Slot& s = slots_[locate(token, hash_of(token))];
  if (s.length == kEmpty) return std::nullopt;
  return s.id;
}

}  // namespace izwi
