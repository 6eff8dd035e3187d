#include "structured/json_constraint.h"

#include <algorithm>
#include <utility>

namespace izwi::structured {

JsonConstraint::JsonConstraint(std::shared_ptr<const TokenMasker> masker, std::vector<int32_t> request_stop_ids)
    : masker_(std::move(masker)), matcher_(masker_->grammar()) {
  const TokenVocabulary& vocabulary = masker_->vocabulary();
  for (const int32_t id : request_stop_ids) {
    if (id < 0 || id >= vocabulary.size() || vocabulary.is_stop(id)) continue;  // the masker's own
    (vocabulary.bytes(id).empty() ? end_ids_ : never_ids_).push_back(id);
  }
}

int64_t JsonConstraint::bitmask_words() const { return static_cast<int64_t>(masker_->vocabulary().bitmask_words()); }

void JsonConstraint::fill_bitmask(uint32_t* words) {
  masker_->fill_next_token_bitmask(matcher_, words);
  const auto set = [words](int32_t id, bool allowed) {
    const uint32_t bit = 1u << (id % 32);
    words[id / 32] = allowed ? (words[id / 32] | bit) : (words[id / 32] & ~bit);
  };
  const bool end = matcher_.can_end();
  for (const int32_t id : end_ids_) set(id, end);
  for (const int32_t id : never_ids_) set(id, false);  // the masker may allow its bytes as text
}

bool JsonConstraint::accept(int32_t id) {
  if (std::find(end_ids_.begin(), end_ids_.end(), id) != end_ids_.end()) return matcher_.can_end();  // no step
  if (std::find(never_ids_.begin(), never_ids_.end(), id) != never_ids_.end()) return false;
  return masker_->accept_token(matcher_, id);
}

}  // namespace izwi::structured
