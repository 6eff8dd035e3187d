#pragma once
// The tokens a grammar allows next, as a bitmask over the vocabulary, computed as xgrammar does:
// for each grammar node a thread can sit at, a walk of the token trie against that node alone
// (its caller unknown) sorts every token into accepted (it stays inside the node's rule),
// rejected, or undecided (it leaves the rule after some bytes: the rest, its suffix, depends on
// the caller). That walk is done once per node and cached; per step only the undecided suffixes
// (a small trie) are walked against the real stack, once per (node, stack) a matcher meets.

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "structured/grammar.h"
#include "structured/matcher.h"
#include "structured/token_trie.h"
#include "structured/token_vocabulary.h"

namespace izwi::structured {

class TokenMasker {
 public:
  TokenMasker(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary);
  ~TokenMasker();

  /// Sets bit id of `bitmask` (vocabulary().bitmask_words() words) for each token allowed after
  /// the matcher's text, the stop ids when the document is complete, and clears the others. Safe
  /// to call from several threads at once for different matchers.
  void fill_next_token_bitmask(GrammarMatcher& matcher, uint32_t* bitmask) const;
  /// Advances `matcher` by token `id`; false (matcher unchanged) if the grammar rejects it. A stop
  /// id is accepted, without a step, exactly when the document is complete.
  bool accept_token(GrammarMatcher& matcher, int32_t id) const;

  const TokenVocabulary& vocabulary() const { return *vocabulary_; }
  /// The grammar, to start a GrammarMatcher per request.
  const std::shared_ptr<const Grammar>& grammar() const { return grammar_; }
  /// Grammar nodes whose token classification has been computed so far.
  size_t cached_nodes() const;

 private:
  struct NodeMask;
  const NodeMask& node_mask(int32_t node) const;
  std::unique_ptr<NodeMask> classify(int32_t node) const;

  std::shared_ptr<const Grammar> grammar_;
  std::shared_ptr<const TokenVocabulary> vocabulary_;
  uint64_t id_;  ///< names this masker in matchers' exit memos
  mutable std::mutex mutex_;
  mutable std::unordered_map<int32_t, std::unique_ptr<NodeMask>> cache_;
};

}  // namespace izwi::structured
