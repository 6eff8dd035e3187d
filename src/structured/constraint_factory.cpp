#include "structured/constraint_factory.h"

#include <algorithm>
#include <utility>

#include "common/check.h"
#include "structured/json_constraint.h"
#include "structured/schema_compiler.h"
#include "structured/token_vocabulary.h"

namespace izwi {

namespace {

constexpr const char* kSchemaField = "params.structured_output.json_schema";

// A schema's error with the field named once (the compiler names the keyword, not the field).
std::string naming_field(const Error& e) {
  const std::string message = e.what();
  return message.rfind(kSchemaField, 0) == 0 ? message : std::string(kSchemaField) + ": " + message;
}

}  // namespace

void validate_structured_output(const StructuredOutput& output) {
  if (output.kind != StructuredOutput::Kind::JsonSchema) return;
  try {
    structured::compile_json_schema(structured::parse_schema_text(output));
  } catch (const Error& e) {
    throw Error(e.code(), naming_field(e));
  }
}

namespace structured {

nlohmann::json parse_schema_text(const StructuredOutput& output) {
  try {
    return nlohmann::json::parse(output.json_schema);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::InvalidArgument, "{} is not valid JSON: {}", kSchemaField, e.what());
  }
}

ConstraintFactory::ConstraintFactory(const Tokenizer* tokenizer, int32_t vocab_size, std::vector<int32_t> eos_ids,
                                     size_t capacity)
    : tokenizer_(tokenizer), vocab_size_(vocab_size), eos_ids_(std::move(eos_ids)), capacity_(capacity) {}

MaskerCache& ConstraintFactory::cache() {
  std::call_once(built_, [this] {
    // Every id of the logits' row: ids past the tokenizer's (padding rows of the embedding) and
    // special tokens have no bytes, so they are never allowed.
    std::vector<std::string> bytes(static_cast<size_t>(vocab_size_));
    const int32_t known = std::min(vocab_size_, tokenizer_->vocab_size());
    for (int32_t id = 0; id < known; ++id) {
      if (!tokenizer_->is_special(id)) bytes[static_cast<size_t>(id)] = tokenizer_->token_bytes(id);
    }
    auto vocabulary = std::make_shared<const TokenVocabulary>(std::move(bytes), eos_ids_);
    cache_ = std::make_unique<MaskerCache>(std::move(vocabulary), SchemaCompileOptions{}, capacity_);
  });
  return *cache_;
}

std::unique_ptr<TokenConstraint> ConstraintFactory::make(const GenerationParams& params,
                                                         const std::string& request_id) {
  const StructuredOutput& output = params.structured_output;
  if (output.kind == StructuredOutput::Kind::None) return nullptr;
  if (tokenizer_ == nullptr) {
    fail(ErrorCode::InvalidArgument,
         "request '{}': params.structured_output needs a tokenizer (each token's text), and the model folder has none",
         request_id);
  }
  if (params.ignore_eos) {
    fail(ErrorCode::InvalidArgument,
         "request '{}': params.ignore_eos cannot be combined with params.structured_output (the output ends where "
         "the document does)",
         request_id);
  }
  if (eos_ids_.empty() && params.stop_token_ids.empty()) {
    fail(ErrorCode::InvalidArgument,
         "request '{}': params.structured_output needs an id that ends the output: the model has no EOS id; give "
         "params.stop_token_ids",
         request_id);
  }
  std::shared_ptr<const TokenMasker> masker;
  try {
    masker = output.kind == StructuredOutput::Kind::JsonObject ? cache().for_any_json_object()
                                                               : cache().for_schema(parse_schema_text(output));
  } catch (const Error& e) {
    fail(e.code(), "request '{}': {}", request_id, naming_field(e));
  }
  auto constraint = std::make_unique<JsonConstraint>(std::move(masker), params.stop_token_ids);
  // The first mask, here rather than in the step loop: it warms the masker's caches for the
  // document's first positions (milliseconds on a schema's first use).
  std::vector<uint32_t> words(static_cast<size_t>(constraint->bitmask_words()));
  constraint->fill_bitmask(words.data());
  IZWI_CHECK(std::any_of(words.begin(), words.end(), [](uint32_t w) { return w != 0; }),
             "request '{}': the structured output allows no first token", request_id);
  return constraint;
}

}  // namespace structured
}  // namespace izwi
