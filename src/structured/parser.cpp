#include "structured/parser.h"

#include <algorithm>

#include "common/check.h"

namespace izwi::structured {

namespace {

// A closure that pushes this many frames is a left-recursive grammar, which the schema compiler
// rejects; the bound turns a compiler bug into an error instead of an endless loop.
constexpr size_t kMaxPushesPerClosure = 1 << 20;

}  // namespace

Parser::Parser(const Grammar& grammar)
    : grammar_(&grammar), stamp_(grammar.nodes.size(), 0), stamp_stack_(grammar.nodes.size(), 0) {}

bool Parser::visit(Thread thread) {
  const size_t node = static_cast<size_t>(thread.node);
  if (stamp_[node] != generation_) {
    stamp_[node] = generation_;
    stamp_stack_[node] = thread.stack;
    return true;
  }
  if (stamp_stack_[node] == thread.stack) return false;
  for (const Thread& seen : more_visited_) {
    if (seen.node == thread.node && seen.stack == thread.stack) return false;
  }
  more_visited_.push_back(thread);
  return true;
}

void Parser::closure(StackPool& stacks, const std::vector<Thread>& seeds, ParseState& out) {
  if (++generation_ == 0) {  // wrapped: old stamps could collide
    std::fill(stamp_.begin(), stamp_.end(), 0);
    generation_ = 1;
  }
  more_visited_.clear();
  out.threads.clear();
  out.complete = false;
  out.left_rule = false;
  work_.assign(seeds.begin(), seeds.end());
  size_t pushes = 0;
  while (!work_.empty()) {
    const Thread thread = work_.back();
    work_.pop_back();
    if (!visit(thread)) continue;
    const Grammar::Node& node = grammar_->nodes[static_cast<size_t>(thread.node)];
    if (!node.byte_edges.empty()) out.threads.push_back(thread);
    for (const int32_t target : node.epsilon_edges) work_.push_back({target, thread.stack});
    for (const Grammar::CallEdge& call : node.call_edges) {
      IZWI_CHECK(++pushes < kMaxPushesPerClosure, "left-recursive grammar at rule {}",
                 grammar_->rules[static_cast<size_t>(call.rule)].name);
      work_.push_back(
          {grammar_->rules[static_cast<size_t>(call.rule)].start, stacks.push(call.return_node, thread.stack)});
    }
    if (node.rule_end) {
      if (thread.stack == kEmptyStack) {
        out.complete = true;
      } else if (thread.stack == kOpenStack) {
        out.left_rule = true;
      } else {
        const StackPool::Frame frame = stacks.at(thread.stack);
        work_.push_back({frame.return_node, frame.parent});
      }
    }
  }
}

bool Parser::advance(StackPool& stacks, const ParseState& in, uint8_t byte, ParseState& out) {
  seeds_.clear();
  for (const Thread& thread : in.threads) {
    for (const Grammar::ByteEdge& edge : grammar_->nodes[static_cast<size_t>(thread.node)].byte_edges) {
      if (edge.bytes.has(byte)) seeds_.push_back({edge.target, thread.stack});
    }
  }
  if (seeds_.empty()) {
    out.threads.clear();
    out.complete = false;
    out.left_rule = false;
    return false;
  }
  closure(stacks, seeds_, out);
  return true;
}

void Parser::start(StackPool& stacks, ParseState& out) {
  closure(stacks, {{grammar_->rules[static_cast<size_t>(grammar_->root_rule)].start, kEmptyStack}}, out);
}

void Parser::pop(StackPool& stacks, int32_t stack, ParseState& out) {
  if (stack == kEmptyStack) {
    out.threads.clear();
    out.complete = true;
    out.left_rule = false;
    return;
  }
  const StackPool::Frame frame = stacks.at(stack);
  closure(stacks, {{frame.return_node, frame.parent}}, out);
}

}  // namespace izwi::structured
