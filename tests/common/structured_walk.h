#pragma once
// Random walks through a grammar's token masks, for the constrained-decoding tests: each step
// samples uniformly among the tokens the mask allows, as a random-weight model at temperature 1
// with a flat distribution would.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "structured/token_mask.h"

namespace izwi::testing {

struct Walk {
  std::string text;
  std::vector<int32_t> ids;  ///< the tokens of `text`
  bool finished = false;     ///< ended with the stop token (the text is a complete document)
  std::string failure;       ///< the first broken invariant, "" if none
};

/// Walks up to `max_tokens` tokens. Checks on every step that the mask is never empty, that the
/// stop token is allowed exactly when the matcher can end, that every allowed token is accepted,
/// and, when `schema` is given, that whenever the matcher can end the text parses and validates.
/// Past half the budget it steers to the end: it takes, among the allowed single bytes and a
/// sample of the other allowed tokens, one that leaves the fewest bytes to a complete document
/// (so the walk ends, whatever the schema demands, once the budget allows).
Walk random_walk(const structured::TokenMasker& masker, structured::GrammarMatcher& matcher, std::mt19937& rng,
                 size_t max_tokens, const nlohmann::json* schema);

/// "" if `text` parses as JSON and validates against `schema`, else why not.
std::string document_violation(const std::string& text, const nlohmann::json& schema);

}  // namespace izwi::testing
