#pragma once
// Compiled constraints kept by the schema's text: compiling a schema and warming its per-node token
// masks costs milliseconds to seconds, so requests that send the same schema share one
// TokenMasker (and its caches). One cache per vocabulary (model); least recently used out first.

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "structured/schema_compiler.h"
#include "structured/token_mask.h"
#include "structured/token_vocabulary.h"

namespace izwi::structured {

class MaskerCache {
 public:
  MaskerCache(std::shared_ptr<const TokenVocabulary> vocabulary, SchemaCompileOptions options, size_t capacity);

  /// The masker of `schema`, compiled on first use (errors as compile_json_schema's, not cached).
  /// Equal schemas (as compact JSON text) share one. Thread-safe.
  std::shared_ptr<const TokenMasker> for_schema(const nlohmann::json& schema);
  /// The masker of any JSON object (response_format {"type": "json_object"}).
  std::shared_ptr<const TokenMasker> for_any_json_object();

  size_t size() const;

 private:
  std::shared_ptr<const TokenMasker> find_or_compile(const std::string& key,
                                                     const std::function<std::shared_ptr<const Grammar>()>& compile);

  std::shared_ptr<const TokenVocabulary> vocabulary_;
  SchemaCompileOptions options_;
  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const TokenMasker>>> entries_;  ///< most recent first
  std::unordered_map<std::string, decltype(entries_)::iterator> by_key_;
};

}  // namespace izwi::structured
