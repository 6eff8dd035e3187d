#include "template/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "template/py_string.h"

namespace izwi::jinja {
namespace {

bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Python's \s over the UTF-8 text from `from` on (at least one character).
bool all_space(const std::string& text, size_t from) {
  if (from >= text.size()) return false;
  for (const char32_t c : py::decode(std::string_view(text).substr(from))) {
    if (!py::is_space(c)) return false;
  }
  return true;
}

std::string rstrip_space(const std::string& text) { return py::strip(text, std::nullopt, false, true); }

// Python's "unicode-escape" decoding of a string literal's body (non-ASCII passes through).
std::string unescape(const std::string& body, int line) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    const auto hex = [&](size_t digits) {
      const std::string h = body.substr(i + 1, digits);
      if (h.size() != digits || h.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
        throw SyntaxError{line, "malformed \\x/\\u escape in a string literal"};
      }
      i += digits;
      return static_cast<char32_t>(std::stoul(h, nullptr, 16));
    };
    switch (c) {
      case '\n':
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
        out += py::encode(std::u32string(1, hex(2)));
        break;
      case 'u':
        out += py::encode(std::u32string(1, hex(4)));
        break;
      case 'U':
        out += py::encode(std::u32string(1, hex(8)));
        break;
      default:
        if (c >= '0' && c <= '7') {
          int v = 0, n = 0;
          while (n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') {
            v = v * 8 + (body[i] - '0');
            ++i;
            ++n;
          }
          --i;
          out += py::encode(std::u32string(1, static_cast<char32_t>(v)));
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : src_(std::move(source)) {
    for (int k = 0; k < 3; ++k) next_hit_[k] = src_.find(kOpeners[k]);
  }

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      const size_t start = next_opener();
      if (start == std::string::npos) {
        emit(Token::Kind::Text, src_.substr(pos_), pos_);
        break;
      }
      const char kind = src_[start + 1];
      const char sign =
          start + 2 < src_.size() && (src_[start + 2] == '-' || src_[start + 2] == '+') ? src_[start + 2] : 0;
      std::string text = src_.substr(pos_, start - pos_);
      if (sign == '-') {
        text = rstrip_space(text);
      } else if (sign != '+' && kind != '{') {      // lstrip_blocks
        const size_t l_pos = text.rfind('\n') + 1;  // npos + 1 == 0
        if ((l_pos > 0 || line_starting) && all_space(text, l_pos)) text.resize(l_pos);
      }
      if (!text.empty()) emit(Token::Kind::Text, text, pos_);
      pos_ = start + 2 + (sign ? 1 : 0);
      if (kind == '#') {
        line_starting = comment();
      } else if (kind == '%' && raw_block(start)) {
        line_starting = false;
      } else {
        line_starting = tag(kind == '{', start);
      }
    }
    tokens_.push_back({Token::Kind::End, "", line_at(src_.size())});
    return std::move(tokens_);
  }

 private:
  // The next "{{", "{%" or "{#" from pos_. Each opener's next hit is remembered until passed: searching
  // the rest of the text for every tag made a template without comments quadratic to lex.
  size_t next_opener() {
    size_t start = std::string::npos;
    for (int k = 0; k < 3; ++k) {
      if (next_hit_[k] != std::string::npos && next_hit_[k] < pos_) next_hit_[k] = src_.find(kOpeners[k], pos_);
      start = std::min(start, next_hit_[k]);
    }
    return start;
  }

  int line_at(size_t pos) {
    while (counted_ < pos && counted_ < src_.size()) line_ += src_[counted_++] == '\n';
    return line_;
  }
  void emit(Token::Kind kind, std::string text, size_t pos) {
    tokens_.push_back({kind, std::move(text), line_at(pos)});
  }

  // After a block or comment end: `-` eats all whitespace, `+` nothing, else trim_blocks eats one "\n".
  // Returns whether the consumed end ends with a newline (Jinja's line_starting).
  bool after_end(char sign) {
    bool newline = false;
    if (sign == '-') {
      while (pos_ < src_.size() && ascii_space_or_unicode()) newline = src_[pos_ - 1] == '\n';
    } else if (sign != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      newline = true;
    }
    return newline;
  }
  // Consumes one Python whitespace character at pos_, if there is one.
  bool ascii_space_or_unicode() {
    if (ascii_space(src_[pos_]) || src_[pos_] == '\x1c' || src_[pos_] == '\x1d' || src_[pos_] == '\x1e' ||
        src_[pos_] == '\x1f') {
      ++pos_;
      return true;
    }
    if (static_cast<unsigned char>(src_[pos_]) < 0x80) return false;
    size_t len = 1;
    while (pos_ + len < src_.size() && (static_cast<unsigned char>(src_[pos_ + len]) & 0xC0) == 0x80) ++len;
    const std::u32string c = py::decode(std::string_view(src_).substr(pos_, len));
    if (c.size() == 1 && py::is_space(c[0])) {
      pos_ += len;
      return true;
    }
    return false;
  }

  bool comment() {
    const size_t begin = pos_;
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) throw SyntaxError{line_at(begin), "missing end of comment tag"};
    const char sign = end > begin && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : 0;
    pos_ = end + 2;
    return after_end(sign);
  }

  // {% raw %}...{% endraw %}: the text between is data.
  bool raw_block(size_t tag_start) {
    size_t p = pos_;
    while (p < src_.size() && ascii_space(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < src_.size() && ascii_space(src_[p])) ++p;
    char sign = 0;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
    if (src_.compare(p, 2, "%}") != 0) return false;
    p += 2;
    if (sign == '-') {
      while (p < src_.size() && ascii_space(src_[p])) ++p;
    }
    // The end: {%[-+]? endraw [-+]?%}
    size_t search = p;
    while (true) {
      const size_t open = src_.find("{%", search);
      if (open == std::string::npos) throw SyntaxError{line_at(tag_start), "missing end of raw directive"};
      size_t q = open + 2;
      char open_sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) open_sign = src_[q++];
      while (q < src_.size() && ascii_space(src_[q])) ++q;
      if (src_.compare(q, 6, "endraw") != 0) {
        search = open + 2;
        continue;
      }
      q += 6;
      while (q < src_.size() && ascii_space(src_[q])) ++q;
      char close_sign = 0;
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) close_sign = src_[q++];
      if (src_.compare(q, 2, "%}") != 0) {
        search = open + 2;
        continue;
      }
      std::string body = src_.substr(p, open - p);
      if (open_sign == '-') {
        body = rstrip_space(body);
      } else if (open_sign != '+') {
        const size_t l_pos = body.rfind('\n') + 1;
        if (l_pos > 0 && all_space(body, l_pos)) body.resize(l_pos);
      }
      if (!body.empty()) emit(Token::Kind::Text, body, p);
      pos_ = q + 2;
      after_end(close_sign);
      return true;
    }
  }

  // The inside of {{ }} or {% %}; returns Jinja's line_starting after the end.
  bool tag(bool variable, size_t tag_start) {
    emit(variable ? Token::Kind::VariableBegin : Token::Kind::BlockBegin, "", tag_start);
    int depth = 0;
    while (true) {
      while (pos_ < src_.size() && ascii_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size()) throw SyntaxError{line_at(tag_start), variable ? "unclosed '{{'" : "unclosed '{%'"};
      if (depth == 0) {
        const char* close = variable ? "}}" : "%}";
        for (const char sign : {'-', '+', '\0'}) {
          if (sign == '+' && variable) continue;
          const size_t at = pos_ + (sign ? 1 : 0);
          if ((sign && src_[pos_] != sign) || src_.compare(at, 2, close) != 0) continue;
          emit(variable ? Token::Kind::VariableEnd : Token::Kind::BlockEnd, "", pos_);
          pos_ = at + 2;
          if (variable) {
            bool newline = false;
            if (sign == '-') {
              while (pos_ < src_.size() && ascii_space_or_unicode()) newline = src_[pos_ - 1] == '\n';
            }
            return newline;
          }
          return after_end(sign);
        }
      }
      expression_token(depth);
    }
  }

  void expression_token(int& depth) {
    const size_t begin = pos_;
    const char c = src_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const auto digits = [&] {
        while (pos_ < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[pos_])) ||
                                      (src_[pos_] == '_' && pos_ + 1 < src_.size() &&
                                       std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))))) {
          ++pos_;
        }
      };
      digits();
      bool is_float = false;
      if (pos_ + 1 < src_.size() && src_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
        ++pos_;
        digits();
        is_float = true;
      }
      if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
        size_t p = pos_ + 1;
        if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
        if (p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p]))) {
          pos_ = p;
          digits();
          is_float = true;
        }
      }
      std::string text = src_.substr(begin, pos_ - begin);
      text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
      emit(is_float ? Token::Kind::Float : Token::Kind::Int, text, begin);
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
      emit(Token::Kind::Name, src_.substr(begin, pos_ - begin), begin);
      return;
    }
    if (c == '\'' || c == '"') {
      size_t p = pos_ + 1;
      while (p < src_.size() && src_[p] != c) p += src_[p] == '\\' ? 2 : 1;
      if (p >= src_.size()) throw SyntaxError{line_at(begin), "unterminated string literal"};
      const int line = line_at(begin);
      tokens_.push_back({Token::Kind::String, unescape(src_.substr(pos_ + 1, p - pos_ - 1), line), line});
      pos_ = p + 1;
      return;
    }
    static const char* const operators[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
                                            "]",  "(",  ")",  "{",  "}",  "=",  ">", "<", ".", ":", "|", ",", ";"};
    for (const char* op : operators) {
      const size_t n = std::strlen(op);
      if (src_.compare(pos_, n, op) == 0) {
        if (n == 1 && (c == '(' || c == '[' || c == '{')) ++depth;
        if (n == 1 && (c == ')' || c == ']' || c == '}')) {
          if (depth == 0) throw SyntaxError{line_at(begin), std::string("unexpected '") + c + "'"};
          --depth;
        }
        pos_ += n;
        emit(Token::Kind::Operator, op, begin);
        return;
      }
    }
    throw SyntaxError{line_at(begin), std::string("unexpected character '") + c + "'"};
  }

  std::string src_;
  size_t pos_ = 0;
  static constexpr const char* kOpeners[3] = {"{{", "{%", "{#"};
  size_t next_hit_[3];  // each opener's first hit at or after pos_ (npos: none left), once refreshed
  size_t counted_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) {
  // Jinja normalises newlines to "\n" and drops one trailing newline (keep_trailing_newline=False).
  std::string text;
  text.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      text += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      text += source[i];
    }
  }
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return Lexer(std::move(text)).run();
}

}  // namespace izwi::jinja
