#pragma once
// Jinja's lexer with transformers' settings (trim_blocks, lstrip_blocks, no trailing newline):
// template text becomes Text tokens and the inside of {{ }} / {% %} tags becomes expression tokens.
// Comments are dropped; whitespace control (-, +) is applied here.

#include <cstdint>
#include <string>
#include <vector>

namespace izwi::jinja {

struct Token {
  enum class Kind { Text, VariableBegin, VariableEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Operator, End };
  Kind kind;
  std::string text;  ///< Text: the data; String: the decoded literal; Name/Operator/Int/Float: as written
  int line = 1;
};

/// Throws SyntaxError.
std::vector<Token> tokenize(const std::string& source);

/// A template that cannot be parsed; the front adds the template name.
struct SyntaxError {
  int line;
  std::string message;
};

}  // namespace izwi::jinja
