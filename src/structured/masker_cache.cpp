#include "structured/masker_cache.h"

#include <utility>

namespace izwi::structured {

MaskerCache::MaskerCache(std::shared_ptr<const TokenVocabulary> vocabulary, SchemaCompileOptions options,
                         size_t capacity)
    : vocabulary_(std::move(vocabulary)), options_(options), capacity_(capacity) {}

std::shared_ptr<const TokenMasker> MaskerCache::for_schema(const nlohmann::json& schema) {
  return find_or_compile("schema:" + schema.dump(), [&] { return compile_json_schema(schema, options_); });
}

std::shared_ptr<const TokenMasker> MaskerCache::for_any_json_object() {
  return find_or_compile("json_object", [&] { return compile_any_json_object(options_); });
}

size_t MaskerCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

std::shared_ptr<const TokenMasker> MaskerCache::find_or_compile(
    const std::string& key, const std::function<std::shared_ptr<const Grammar>()>& compile) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = by_key_.find(key);
    if (found != by_key_.end()) {
      entries_.splice(entries_.begin(), entries_, found->second);
      return found->second->second;
    }
  }
  // Compiled outside the lock: a large schema must not stall requests with other schemas. Two
  // requests compiling the same schema at once both compile; the first stored is kept.
  auto masker = std::make_shared<const TokenMasker>(compile(), vocabulary_);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = by_key_.find(key);
  if (found != by_key_.end()) return found->second->second;
  entries_.emplace_front(key, masker);
  by_key_[key] = entries_.begin();
  while (entries_.size() > capacity_) {
    by_key_.erase(entries_.back().first);
    entries_.pop_back();
  }
  return masker;
}

}  // namespace izwi::structured
