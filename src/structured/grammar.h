#pragma once
// A grammar over bytes as a recursive transition network: each rule is a small NFA whose edges
// consume one byte of a set, take no input, or call another rule (push the return node, run the
// callee to its end node, pop). Recursion (e.g. a recursive $ref) is a call cycle; the schema
// compiler never emits left recursion, so every cycle of calls consumes a byte.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace izwi::structured {

/// A set of byte values: the terminal of one edge.
struct ByteSet {
  std::array<uint64_t, 4> bits{};

  static ByteSet of(uint8_t byte);
  static ByteSet range(uint8_t lo, uint8_t hi);
  void add(uint8_t byte) { bits[byte >> 6] |= uint64_t{1} << (byte & 63); }
  void add_range(uint8_t lo, uint8_t hi);
  bool has(uint8_t byte) const { return (bits[byte >> 6] >> (byte & 63)) & 1; }
  bool empty() const { return (bits[0] | bits[1] | bits[2] | bits[3]) == 0; }
  ByteSet& operator|=(const ByteSet& other);
};

struct Grammar {
  struct ByteEdge {
    ByteSet bytes;
    int32_t target;
  };
  struct CallEdge {
    int32_t rule;
    int32_t return_node;
  };
  struct Node {
    std::vector<ByteEdge> byte_edges;
    std::vector<int32_t> epsilon_edges;
    std::vector<CallEdge> call_edges;
    bool rule_end = false;  ///< reaching it completes the rule: pop to the caller's return node
  };
  struct Rule {
    int32_t start = -1;
    int32_t end = -1;
    std::string name;  ///< for debugging (schema path or built-in name)
  };

  std::vector<Node> nodes;
  std::vector<Rule> rules;
  int32_t root_rule = -1;
};

}  // namespace izwi::structured
