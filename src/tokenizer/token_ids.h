#pragma once
// Token text -> id, for vocabularies of 100k+ tokens that load in a fraction of a second: open
// addressing over one array, the texts in one arena, lookups by string_view without allocating.
// Copying is two buffer copies.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace izwi {

class TokenIds {
 public:
  void reserve(size_t count);
  /// Adds `token` -> `id` unless `token` is present (then returns false and keeps the old id).
  bool emplace(std::string_view token, int32_t id);
  /// Adds or overwrites `token` -> `id`.
  void assign(std::string_view token, int32_t id);
  std::optional<int32_t> find(std::string_view token) const;
  size_t size() const { return size_; }

  /// Calls f(token, id) for every entry, in no particular order. The views stay valid until the
  /// next insertion.
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.length != kEmpty) f(std::string_view(arena_).substr(s.offset, s.length), s.id);
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t length = kEmpty;
    int32_t id = 0;
  };
  /// Index of the slot holding `token`, or of the empty slot where it would go.
  size_t locate(std::string_view token, uint64_t hash) const;
  void grow();

  std::vector<Slot> slots_;
  std::string arena_;
  size_t size_ = 0;
};

}  // namespace izwi
