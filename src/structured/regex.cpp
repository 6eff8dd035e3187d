#include "structured/regex.h"

#include <memory>
#include <vector>

#include "common/check.h"
#include "structured/json_lexemes.h"

namespace izwi::structured {

namespace {

// Repetition counts above this would only make the grammar huge.
constexpr size_t kMaxRepeat = 1000;

struct RegexNode {
  enum class Kind { Chars, Literal, Concat, Alt, Repeat } kind;
  ByteSet ascii;        ///< Chars: the ASCII characters it matches
  std::string literal;  ///< Literal: one non-ASCII code point's UTF-8 bytes
  std::vector<std::unique_ptr<RegexNode>> children;
  size_t min = 0;
  size_t max = 0;  ///< GrammarBuilder::kUnbounded for no bound
};

using NodePtr = std::unique_ptr<RegexNode>;

NodePtr make(RegexNode::Kind kind) {
  auto node = std::make_unique<RegexNode>();
  node->kind = kind;
  return node;
}

NodePtr chars(const ByteSet& set) {
  NodePtr node = make(RegexNode::Kind::Chars);
  node->ascii = set;
  return node;
}

ByteSet printable() { return ByteSet::range(0x20, 0x7E); }

ByteSet complement(const ByteSet& set) {
  ByteSet result;
  for (int c = 0x20; c <= 0x7E; ++c) {
    if (!set.has(static_cast<uint8_t>(c))) result.add(static_cast<uint8_t>(c));
  }
  return result;
}

ByteSet class_digit() { return ByteSet::range('0', '9'); }
ByteSet class_word() {
  ByteSet set = ByteSet::range('a', 'z');
  set.add_range('A', 'Z');
  set.add_range('0', '9');
  set.add('_');
  return set;
}
ByteSet class_space() {
  ByteSet set;
  for (const char c : std::string_view(" \t\n\r\f\v")) set.add(static_cast<uint8_t>(c));
  return set;
}

class RegexParser {
 public:
  RegexParser(std::string_view pattern, const std::string& field) : p_(pattern), field_(field) {}

  NodePtr parse() {
    NodePtr node = alternation();
    if (i_ < p_.size()) error(ErrorCode::InvalidArgument, "unbalanced ')'");
    return node;
  }

  [[noreturn]] void error(ErrorCode code, const std::string& what) const {
    fail(code, "{}: {} at offset {} of pattern \"{}\"", field_, what, i_, std::string(p_));
  }

 private:
  bool more() const { return i_ < p_.size(); }
  char peek() const { return p_[i_]; }

  NodePtr alternation() {
    NodePtr first = concatenation();
    if (!more() || peek() != '|') return first;
    NodePtr alt = make(RegexNode::Kind::Alt);
    alt->children.push_back(std::move(first));
    while (more() && peek() == '|') {
      ++i_;
      alt->children.push_back(concatenation());
    }
    return alt;
  }

  NodePtr concatenation() {
    NodePtr concat = make(RegexNode::Kind::Concat);
    while (more() && peek() != '|' && peek() != ')') concat->children.push_back(quantified());
    return concat;
  }

  size_t number() {
    size_t value = 0;
    const size_t start = i_;
    while (more() && peek() >= '0' && peek() <= '9') {
      value = value * 10 + static_cast<size_t>(peek() - '0');
      if (value > kMaxRepeat) error(ErrorCode::Unsupported, "repetition count above " + std::to_string(kMaxRepeat));
      ++i_;
    }
    if (i_ == start) error(ErrorCode::InvalidArgument, "expected a number in {m,n}");
    return value;
  }

  NodePtr quantified() {
    NodePtr atom_node = atom();
    while (more()) {
      size_t min = 0;
      size_t max = 0;
      const char c = peek();
      if (c == '*') {
        min = 0, max = GrammarBuilder::kUnbounded, ++i_;
      } else if (c == '+') {
        min = 1, max = GrammarBuilder::kUnbounded, ++i_;
      } else if (c == '?') {
        min = 0, max = 1, ++i_;
      } else if (c == '{') {
        ++i_;
        min = number();
        max = min;
        if (more() && peek() == ',') {
          ++i_;
          max = more() && peek() == '}' ? GrammarBuilder::kUnbounded : number();
        }
        if (!more() || peek() != '}') error(ErrorCode::InvalidArgument, "unterminated {m,n}");
        ++i_;
        if (max < min) error(ErrorCode::InvalidArgument, "{m,n} with n < m");
      } else {
        break;
      }
      if (more() && peek() == '?') ++i_;  // lazy: the same language
      NodePtr repeat = make(RegexNode::Kind::Repeat);
      repeat->min = min;
      repeat->max = max;
      repeat->children.push_back(std::move(atom_node));
      atom_node = std::move(repeat);
    }
    return atom_node;
  }

  /// One code point of the pattern as a node (UTF-8 passes through as a literal).
  NodePtr literal_char() {
    const unsigned char c = static_cast<unsigned char>(peek());
    if (c < 0x80) {
      ++i_;
      return chars(ByteSet::of(c));
    }
    const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (i_ + length > p_.size()) error(ErrorCode::InvalidArgument, "truncated UTF-8");
    NodePtr node = make(RegexNode::Kind::Literal);
    node->literal = std::string(p_.substr(i_, length));
    i_ += length;
    return node;
  }

  /// After a backslash: a class escape or an escaped character, as an ASCII set.
  ByteSet escape() {
    if (!more()) error(ErrorCode::InvalidArgument, "pattern ends with '\\'");
    const char c = p_[i_++];
    switch (c) {
      case 'd':
        return class_digit();
      case 'D':
        return complement(class_digit());
      case 'w':
        return class_word();
      case 'W':
        return complement(class_word());
      case 's':
        return class_space();
      case 'S':
        return complement(class_space());
      case 't':
        return ByteSet::of('\t');
      case 'n':
        return ByteSet::of('\n');
      case 'r':
        return ByteSet::of('\r');
      case 'f':
        return ByteSet::of('\f');
      case 'v':
        return ByteSet::of('\v');
      default:
        break;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        static_cast<unsigned char>(c) >= 0x80) {
      --i_;
      error(ErrorCode::Unsupported, std::string("escape \\") + c);
    }
    return ByteSet::of(static_cast<uint8_t>(c));  // escaped punctuation
  }

  NodePtr char_class() {
    ++i_;  // '['
    bool negated = false;
    if (more() && peek() == '^') negated = true, ++i_;
    ByteSet set;
    bool first = true;
    while (more() && (peek() != ']' || first)) {
      first = false;
      auto single = [&]() -> int {  // a single character, or -1 after a class escape
        if (static_cast<unsigned char>(peek()) >= 0x80) error(ErrorCode::Unsupported, "non-ASCII character in a class");
        if (peek() != '\\') return static_cast<unsigned char>(p_[i_++]);
        ++i_;
        const size_t at = i_;
        const ByteSet escaped = escape();
        if (i_ == at + 1 && std::string_view("dDwWsS").find(p_[at]) == std::string_view::npos) {
          for (int b = 0; b < 128; ++b) {
            if (escaped.has(static_cast<uint8_t>(b))) return b;
          }
        }
        set |= escaped;
        return -1;
      };
      const int lo = single();
      if (lo >= 0 && i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        const int hi = single();
        if (hi < 0 || hi < lo) error(ErrorCode::InvalidArgument, "bad class range");
        set.add_range(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
      } else if (lo >= 0) {
        set.add(static_cast<uint8_t>(lo));
      }
    }
    if (!more()) error(ErrorCode::InvalidArgument, "unterminated '['");
    ++i_;  // ']'
    return chars(negated ? complement(set) : set);
  }

  NodePtr atom() {
    const char c = peek();
    switch (c) {
      case '(': {
        ++i_;
        if (p_.substr(i_, 2) == "?:") {
          i_ += 2;
        } else if (more() && peek() == '?') {
          error(ErrorCode::Unsupported, "lookaround or named group");
        }
        NodePtr inner = alternation();
        if (!more() || peek() != ')') error(ErrorCode::InvalidArgument, "unterminated '('");
        ++i_;
        return inner;
      }
      case '[':
        return char_class();
      case '.':
        ++i_;
        return chars(printable());
      case '\\':
        ++i_;
        return chars(escape());
      case '^':
      case '$':
        error(ErrorCode::Unsupported, std::string("anchor '") + c + "' other than at the start or end");
      case '*':
      case '+':
      case '?':
      case '{':
        error(ErrorCode::InvalidArgument, std::string("nothing to repeat before '") + c + "'");
      default:
        return literal_char();
    }
  }

  std::string_view p_;
  const std::string& field_;
  size_t i_ = 0;
};

class RegexEmitter {
 public:
  RegexEmitter(GrammarBuilder& builder, RegexTarget target) : b_(builder), target_(target) {}

  Fragment emit(const RegexNode& node) {
    switch (node.kind) {
      case RegexNode::Kind::Chars:
        return emit_chars(node.ascii);
      case RegexNode::Kind::Literal:
        return b_.literal(node.literal);
      case RegexNode::Kind::Concat: {
        std::vector<Fragment> parts;
        for (const NodePtr& child : node.children) parts.push_back(emit(*child));
        return b_.seq(parts);
      }
      case RegexNode::Kind::Alt: {
        std::vector<Fragment> choices;
        for (const NodePtr& child : node.children) choices.push_back(emit(*child));
        return b_.alt(choices);
      }
      case RegexNode::Kind::Repeat:
        return b_.repeat([&] { return emit(*node.children[0]); }, node.min, node.max);
    }
    return b_.empty();
  }

 private:
  Fragment emit_chars(const ByteSet& ascii) {
    if (target_ == RegexTarget::RawBytes) return b_.bytes(ascii);
    // JSON string content: printable characters as themselves, '"' and '\' and \t \n \r escaped;
    // other control characters are never generated.
    ByteSet raw;
    std::vector<Fragment> choices;
    for (int c = 0; c < 128; ++c) {
      if (!ascii.has(static_cast<uint8_t>(c))) continue;
      if (c == '"' || c == '\\') {
        choices.push_back(b_.literal(std::string("\\") + static_cast<char>(c)));
      } else if (c == '\t' || c == '\n' || c == '\r') {
        choices.push_back(b_.literal(c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r"));
      } else if (c >= 0x20 && c < 0x7F) {
        raw.add(static_cast<uint8_t>(c));
      }
    }
    if (!raw.empty()) choices.push_back(b_.bytes(raw));
    return choices.size() == 1 ? choices[0] : b_.alt(choices);
  }

  GrammarBuilder& b_;
  RegexTarget target_;
};

}  // namespace

Fragment compile_regex(GrammarBuilder& builder, std::string_view pattern, RegexTarget target,
                       const std::string& field) {
  const bool anchored_start = !pattern.empty() && pattern.front() == '^';
  if (anchored_start) pattern.remove_prefix(1);
  // A trailing '$' is an anchor unless escaped (an odd run of backslashes before it).
  bool anchored_end = false;
  if (!pattern.empty() && pattern.back() == '$') {
    size_t backslashes = 0;
    while (backslashes + 1 < pattern.size() && pattern[pattern.size() - 2 - backslashes] == '\\') ++backslashes;
    anchored_end = backslashes % 2 == 0;
    if (anchored_end) pattern.remove_suffix(1);
  }
  RegexParser parser(pattern, field);
  const NodePtr root = parser.parse();
  if ((anchored_start || anchored_end) && root->kind == RegexNode::Kind::Alt) {
    parser.error(ErrorCode::Unsupported, "an anchor next to a top-level '|' (write ^(a|b)$)");
  }
  RegexEmitter emitter(builder, target);
  const Fragment body = emitter.emit(*root);
  if (target == RegexTarget::RawBytes) return body;
  std::vector<Fragment> parts;
  if (!anchored_start) parts.push_back(builder.star(json_string_char(builder)));
  parts.push_back(body);
  if (!anchored_end) parts.push_back(builder.star(json_string_char(builder)));
  return builder.seq(parts);
}

}  // namespace izwi::structured
