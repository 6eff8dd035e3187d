#include "common/structured_walk.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "common/json_schema_check.h"

namespace izwi::testing {

namespace {

constexpr size_t kFar = std::numeric_limits<size_t>::max() / 4;

/// Per grammar node: the fewest bytes from it to the end of its rule (calls count their rule's
/// shortest text), by relaxation to a fixed point.
std::vector<size_t> bytes_to_rule_end(const structured::Grammar& grammar) {
  std::vector<size_t> to_end(grammar.nodes.size(), kFar);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < grammar.nodes.size(); ++n) {
      const structured::Grammar::Node& node = grammar.nodes[n];
      size_t best = node.rule_end ? 0 : kFar;
      for (const auto& edge : node.byte_edges) best = std::min(best, 1 + to_end[static_cast<size_t>(edge.target)]);
      for (const int32_t target : node.epsilon_edges) best = std::min(best, to_end[static_cast<size_t>(target)]);
      for (const auto& call : node.call_edges) {
        const size_t callee = to_end[static_cast<size_t>(grammar.rules[static_cast<size_t>(call.rule)].start)];
        best = std::min(best, callee + to_end[static_cast<size_t>(call.return_node)]);
      }
      if (best < to_end[n]) to_end[n] = best, changed = true;
    }
  }
  return to_end;
}

/// The fewest bytes from the matcher's state to a complete document.
size_t bytes_to_document_end(structured::GrammarMatcher& matcher, const std::vector<size_t>& to_end) {
  if (matcher.can_end()) return 0;
  size_t best = kFar;
  for (const structured::Thread& thread : matcher.state().threads) {
    size_t total = to_end[static_cast<size_t>(thread.node)];
    for (int32_t s = thread.stack; s >= 0; s = matcher.stacks().at(s).parent) {
      total += to_end[static_cast<size_t>(matcher.stacks().at(s).return_node)];
    }
    best = std::min(best, total);
  }
  return best;
}

}  // namespace

std::string document_violation(const std::string& text, const nlohmann::json& schema) {
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return std::string("does not parse: ") + e.what();
  }
  return json_schema_violation(value, schema);
}

Walk random_walk(const structured::TokenMasker& masker, structured::GrammarMatcher& matcher, std::mt19937& rng,
                 size_t max_tokens, const nlohmann::json* schema) {
  const structured::TokenVocabulary& vocabulary = masker.vocabulary();
  std::vector<uint32_t> mask(vocabulary.bitmask_words());
  Walk walk;
  std::vector<int32_t> allowed;
  std::vector<int32_t> candidates;
  const std::vector<size_t> to_end = bytes_to_rule_end(matcher.grammar());
  for (size_t step = 0; step < max_tokens; ++step) {
    masker.fill_next_token_bitmask(matcher, mask.data());
    allowed.clear();
    bool stop = false;
    for (int32_t id = 0; id < vocabulary.size(); ++id) {
      if (!((mask[static_cast<size_t>(id) / 32] >> (id % 32)) & 1)) continue;
      if (vocabulary.is_stop(id)) {
        stop = true;
        continue;
      }
      allowed.push_back(id);
    }
    if (stop != matcher.can_end()) {
      walk.failure = "stop token allowed: " + std::to_string(stop) + ", can_end: " + std::to_string(matcher.can_end());
      return walk;
    }
    if (matcher.can_end() && schema) {
      const std::string violation = document_violation(walk.text, *schema);
      if (!violation.empty()) {
        walk.failure = "may end but " + violation;
        return walk;
      }
    }
    if (allowed.empty() && !stop) {
      walk.failure = "no token allowed";
      return walk;
    }
    const bool late = step >= max_tokens / 2;
    if (stop && (allowed.empty() || std::bernoulli_distribution(late ? 0.9 : 0.2)(rng))) {
      walk.finished = true;
      return walk;
    }
    int32_t id = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    if (late) {  // the candidate leaving the fewest bytes to the end; every single byte is a candidate
      candidates.clear();
      for (const int32_t a : allowed) {
        if (vocabulary.bytes(a).size() == 1) candidates.push_back(a);
      }
      for (int i = 0; i < 32; ++i)
        candidates.push_back(allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)]);
      std::shuffle(candidates.begin(), candidates.end(), rng);
      size_t best = kFar + 1;
      for (const int32_t c : candidates) {
        if (!masker.accept_token(matcher, c)) continue;
        const size_t left = bytes_to_document_end(matcher, to_end);
        matcher.rollback(1);
        if (left < best) best = left, id = c;
      }
    }
    if (!masker.accept_token(matcher, id)) {
      walk.failure = "allowed token " + std::to_string(id) + " rejected after: " + walk.text;
      return walk;
    }
    walk.text += vocabulary.bytes(id);
    walk.ids.push_back(id);
  }
  return walk;
}

}  // namespace izwi::testing
