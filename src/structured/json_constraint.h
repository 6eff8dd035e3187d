#pragma once
// One request's structured output as the sampler sees it (TokenConstraint): the masker shared by
// every request with the same schema and model, and this request's own matcher.

#include <cstdint>
#include <memory>
#include <vector>

#include "sampling/token_constraint.h"
#include "structured/matcher.h"
#include "structured/token_mask.h"

namespace izwi::structured {

class JsonConstraint final : public TokenConstraint {
 public:
  /// `masker`'s vocabulary covers the logits' row (its stop ids are the model's EOS ids). Of
  /// `request_stop_ids` (GenerationParams::stop_token_ids), those without text (special tokens)
  /// are allowed exactly when the document is complete, and end it there; those with text are
  /// never allowed: the output keeps a stop id's text, which would follow the document.
  JsonConstraint(std::shared_ptr<const TokenMasker> masker, std::vector<int32_t> request_stop_ids);

  int64_t bitmask_words() const override;
  void fill_bitmask(uint32_t* words) override;
  bool accept(int32_t id) override;
  bool must_end() const override { return matcher_.can_end() && !matcher_.can_continue(); }

  const GrammarMatcher& matcher() const { return matcher_; }

 private:
  std::shared_ptr<const TokenMasker> masker_;
  GrammarMatcher matcher_;
  std::vector<int32_t> end_ids_;    ///< request stop ids without text
  std::vector<int32_t> never_ids_;  ///< request stop ids with text
};

}  // namespace izwi::structured
