#pragma once
// An engine's structured outputs: turns a request's StructuredOutput into its TokenConstraint,
// through one MaskerCache over the model's vocabulary (built from the tokenizer on the first
// structured request, so engines that never see one pay nothing).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "izwi/request.h"
#include "izwi/tokenizer.h"
#include "sampling/token_constraint.h"
#include "structured/masker_cache.h"

namespace izwi::structured {

/// The schema of `output` (Kind::JsonSchema) parsed, or InvalidArgument naming
/// params.structured_output.json_schema.
nlohmann::json parse_schema_text(const StructuredOutput& output);

class ConstraintFactory {
 public:
  /// `tokenizer` (null: structured requests are refused) must outlive the factory; `vocab_size`
  /// is the logits' width; `eos_ids` end a complete document. `capacity` schemas stay compiled.
  ConstraintFactory(const Tokenizer* tokenizer, int32_t vocab_size, std::vector<int32_t> eos_ids, size_t capacity = 64);

  /// The constraint of a validated request, or null when its output is free. Compiles the schema
  /// (or finds it compiled) and computes the first mask on the caller's thread, so the step loop
  /// meets warm caches. Throws izwi::Error naming the field: Unsupported for a schema keyword
  /// outside the subset, InvalidArgument for a bad or oversized schema, no tokenizer, ignore_eos,
  /// or no id that can end the output.
  std::unique_ptr<TokenConstraint> make(const GenerationParams& params, const std::string& request_id);

 private:
  MaskerCache& cache();

  const Tokenizer* tokenizer_;
  int32_t vocab_size_;
  std::vector<int32_t> eos_ids_;
  size_t capacity_;
  std::once_flag built_;
  std::unique_ptr<MaskerCache> cache_;
};

}  // namespace izwi::structured
