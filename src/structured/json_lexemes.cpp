#include "structured/json_lexemes.h"

#include <initializer_list>
#include <string_view>

namespace izwi::structured {

namespace {

ByteSet continuation() { return ByteSet::range(0x80, 0xBF); }

Fragment digits(GrammarBuilder& b, size_t min, size_t max) {
  return b.repeat([&] { return b.bytes(ByteSet::range('0', '9')); }, min, max);
}

Fragment natural(GrammarBuilder& b) {
  return b.alt({b.literal("0"), b.seq({b.bytes(ByteSet::range('1', '9')), digits(b, 0, kMaxIntegerDigits - 1)})});
}

}  // namespace

void add_string_char_edges(GrammarBuilder& b, int32_t from, int32_t to) {
  // A chain of byte sets from `from` to `to` through fresh nodes.
  auto path = [&](std::initializer_list<ByteSet> sets) {
    int32_t at = from;
    size_t i = 0;
    for (const ByteSet& set : sets) {
      const int32_t next = ++i == sets.size() ? to : b.add_node();
      b.add_bytes(at, set, next);
      at = next;
    }
  };
  ByteSet plain = ByteSet::range(0x20, 0x7F);
  plain.bits['"' >> 6] &= ~(uint64_t{1} << ('"' & 63));
  plain.bits['\\' >> 6] &= ~(uint64_t{1} << ('\\' & 63));
  path({plain});
  // The well-formed UTF-8 sequences of Unicode's table 3-7 (no overlongs, no surrogates).
  ByteSet lead3 = ByteSet::range(0xE1, 0xEC);
  lead3.add_range(0xEE, 0xEF);
  path({ByteSet::range(0xC2, 0xDF), continuation()});
  path({ByteSet::of(0xE0), ByteSet::range(0xA0, 0xBF), continuation()});
  path({lead3, continuation(), continuation()});
  path({ByteSet::of(0xED), ByteSet::range(0x80, 0x9F), continuation()});
  path({ByteSet::of(0xF0), ByteSet::range(0x90, 0xBF), continuation(), continuation()});
  path({ByteSet::range(0xF1, 0xF3), continuation(), continuation(), continuation()});
  path({ByteSet::of(0xF4), ByteSet::range(0x80, 0x8F), continuation(), continuation()});
  // Escapes share the node after the backslash.
  const int32_t escape = b.add_node();
  b.add_bytes(from, ByteSet::of('\\'), escape);
  ByteSet simple_escape;
  for (const char c : std::string_view("\"\\/bfnrt")) simple_escape.add(static_cast<uint8_t>(c));
  b.add_bytes(escape, simple_escape, to);
  ByteSet hex = ByteSet::range('0', '9');
  hex.add_range('a', 'f');
  hex.add_range('A', 'F');
  ByteSet hex_not_d = ByteSet::range('0', '9');
  hex_not_d.add_range('a', 'c');
  hex_not_d.add_range('e', 'f');
  hex_not_d.add_range('A', 'C');
  hex_not_d.add_range('E', 'F');
  ByteSet d = ByteSet::of('d');
  d.add('D');
  const int32_t u = b.add_node();
  b.add_bytes(escape, ByteSet::of('u'), u);
  const int32_t two_left = b.add_node();
  const int32_t after_d = b.add_node();
  const int32_t one_left = b.add_node();
  const int32_t after_u = b.add_node();
  b.add_bytes(u, hex_not_d, after_u);
  b.add_bytes(after_u, hex, two_left);
  b.add_bytes(u, d, after_d);
  b.add_bytes(after_d, ByteSet::range('0', '7'), two_left);
  b.add_bytes(two_left, hex, one_left);
  b.add_bytes(one_left, hex, to);
}

Fragment json_string_char(GrammarBuilder& b) {
  const int32_t from = b.add_node();
  const int32_t to = b.add_node();
  add_string_char_edges(b, from, to);
  return {from, to};
}

Fragment json_whitespace(GrammarBuilder& b, size_t max_bytes) {
  ByteSet space;
  for (const char c : std::string_view(" \t\n\r")) space.add(static_cast<uint8_t>(c));
  return b.repeat([&] { return b.bytes(space); }, 0, max_bytes);
}

Fragment json_integer(GrammarBuilder& b) { return b.seq({b.optional(b.literal("-")), natural(b)}); }

Fragment json_number(GrammarBuilder& b) {
  ByteSet e = ByteSet::of('e');
  e.add('E');
  ByteSet sign = ByteSet::of('+');
  sign.add('-');
  return b.seq({json_integer(b), b.optional(b.seq({b.literal("."), b.plus(b.bytes(ByteSet::range('0', '9')))})),
                b.optional(b.seq({b.bytes(e), b.optional(b.bytes(sign)), digits(b, 1, 2)}))});
}

}  // namespace izwi::structured
