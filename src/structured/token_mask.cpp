#include "structured/token_mask.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <utility>

namespace izwi::structured {

struct TokenMasker::NodeMask {
  std::vector<uint32_t> accepted;     ///< tokens that stay inside the node's rule, or end exactly with it
  TokenTrie suffixes;                 ///< what undecided tokens still need after leaving the rule
  std::vector<int32_t> suffix_begin;  ///< tokens of suffix i: suffix_tokens[suffix_begin[i] .. suffix_begin[i+1])
  std::vector<int32_t> suffix_tokens;
};

namespace {

void set_bit(uint32_t* bitmask, int32_t id) { bitmask[id >> 5] |= uint32_t{1} << (id & 31); }

bool alive(const ParseState& state) { return !state.threads.empty() || state.complete || state.left_rule; }

/// Walks `trie` depth-first from `root`, advancing the parse by each node's byte and skipping the
/// subtrees the parse rejects; calls on_alive(node, state) for every node reached.
template <typename OnAlive>
void walk(const TokenTrie& trie, Parser& parser, StackPool& stacks, const ParseState& root,
          std::vector<ParseState>& states, OnAlive&& on_alive) {
  states.resize(static_cast<size_t>(trie.max_depth()) + 1);
  states[0] = root;
  const std::vector<TokenTrie::Node>& nodes = trie.nodes();
  int32_t u = 1;
  while (u < static_cast<int32_t>(nodes.size())) {
    const TokenTrie::Node& node = nodes[static_cast<size_t>(u)];
    ParseState& state = states[static_cast<size_t>(node.depth)];
    parser.advance(stacks, states[static_cast<size_t>(node.depth) - 1], node.byte, state);
    if (!alive(state)) {
      u = node.subtree_end;
      continue;
    }
    on_alive(u, state);
    u = state.threads.empty() ? node.subtree_end : u + 1;
  }
}

}  // namespace

TokenMasker::TokenMasker(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocabulary)
    : grammar_(std::move(grammar)), vocabulary_(std::move(vocabulary)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id++;
}

TokenMasker::~TokenMasker() = default;

std::unique_ptr<TokenMasker::NodeMask> TokenMasker::classify(int32_t grammar_node) const {
  auto mask = std::make_unique<NodeMask>();
  mask->accepted.assign(vocabulary_->bitmask_words(), 0);
  const TokenTrie& trie = vocabulary_->trie();
  const std::vector<TokenTrie::Node>& nodes = trie.nodes();
  const std::vector<int32_t>& items = trie.items();

  Parser parser(*grammar_);
  StackPool stacks;
  ParseState root;
  root.threads.push_back({grammar_node, kOpenStack});
  std::vector<ParseState> states;
  std::vector<int32_t> exits;  // trie nodes at which the parse leaves the rule
  walk(trie, parser, stacks, root, states, [&](int32_t u, const ParseState& state) {
    const TokenTrie::Node& node = nodes[static_cast<size_t>(u)];
    for (int32_t i = node.items_begin; i < node.items_end; ++i)
      set_bit(mask->accepted.data(), items[static_cast<size_t>(i)]);
    if (state.left_rule) exits.push_back(u);
  });

  // Undecided tokens: those below an exit, grouped by the bytes they have left after it.
  std::map<std::string, std::vector<int32_t>> by_suffix;
  for (const int32_t u : exits) {
    const TokenTrie::Node& exit = nodes[static_cast<size_t>(u)];
    for (int32_t v = u + 1; v < exit.subtree_end; ++v) {
      const TokenTrie::Node& node = nodes[static_cast<size_t>(v)];
      for (int32_t i = node.items_begin; i < node.items_end; ++i) {
        const int32_t id = items[static_cast<size_t>(i)];
        by_suffix[vocabulary_->bytes(id).substr(static_cast<size_t>(exit.depth))].push_back(id);
      }
    }
  }
  std::vector<std::string> suffixes;
  suffixes.reserve(by_suffix.size());
  for (auto& [suffix, ids] : by_suffix) {
    suffixes.push_back(suffix);
    mask->suffix_begin.push_back(static_cast<int32_t>(mask->suffix_tokens.size()));
    mask->suffix_tokens.insert(mask->suffix_tokens.end(), ids.begin(), ids.end());
  }
  mask->suffix_begin.push_back(static_cast<int32_t>(mask->suffix_tokens.size()));
  mask->suffixes = TokenTrie(suffixes);
  return mask;
}

const TokenMasker::NodeMask& TokenMasker::node_mask(int32_t node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<NodeMask>& slot = cache_[node];
  if (!slot) slot = classify(node);
  return *slot;
}

size_t TokenMasker::cached_nodes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

void TokenMasker::fill_next_token_bitmask(GrammarMatcher& matcher, uint32_t* bitmask) const {
  const size_t words = vocabulary_->bitmask_words();
  std::memset(bitmask, 0, words * sizeof(uint32_t));
  const ParseState& state = matcher.state();
  GrammarMatcher::ExitMemo& memo = matcher.exit_memo();
  if (memo.owner != id_) {
    memo.accepted.clear();
    memo.owner = id_;
  }
  ParseState after_rule;
  std::vector<ParseState> states;
  for (const Thread& thread : state.threads) {
    const NodeMask& mask = node_mask(thread.node);
    for (size_t w = 0; w < words; ++w) bitmask[w] |= mask.accepted[w];
    if (mask.suffixes.empty()) continue;
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(thread.node)) << 32) | static_cast<uint32_t>(thread.stack);
    auto [entry, inserted] = memo.accepted.try_emplace(key);
    std::vector<int32_t>& accepted = entry->second;
    if (inserted) {  // walk the suffixes against the real stack
      matcher.parser().pop(matcher.stacks(), thread.stack, after_rule);
      const std::vector<TokenTrie::Node>& nodes = mask.suffixes.nodes();
      const std::vector<int32_t>& items = mask.suffixes.items();
      walk(mask.suffixes, matcher.parser(), matcher.stacks(), after_rule, states, [&](int32_t u, const ParseState&) {
        const TokenTrie::Node& node = nodes[static_cast<size_t>(u)];
        accepted.insert(accepted.end(), items.begin() + node.items_begin, items.begin() + node.items_end);
      });
    }
    for (const int32_t suffix : accepted) {
      for (int32_t t = mask.suffix_begin[static_cast<size_t>(suffix)];
           t < mask.suffix_begin[static_cast<size_t>(suffix) + 1]; ++t) {
        set_bit(bitmask, mask.suffix_tokens[static_cast<size_t>(t)]);
      }
    }
  }
  if (state.complete) {
    for (const int32_t id : vocabulary_->stop_ids()) set_bit(bitmask, id);
  }
}

bool TokenMasker::accept_token(GrammarMatcher& matcher, int32_t id) const {
  if (id < 0 || id >= vocabulary_->size()) return false;
  if (vocabulary_->is_stop(id)) return matcher.can_end();
  const std::string& bytes = vocabulary_->bytes(id);
  return !bytes.empty() && matcher.accept_bytes(bytes);
}

}  // namespace izwi::structured
