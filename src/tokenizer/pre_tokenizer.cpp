#include "tokenizer/pre_tokenizer.h"

#include <algorithm>

#include "common/check.h"
#include "common/enum_names.h"
#include "common/json_fields.h"
#include "tokenizer/json_input.h"
#include "tokenizer/utf8.h"

namespace izwi {
namespace {

// The regex the ByteLevel pre-tokenizer uses when use_regex is true (GPT-2's).
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// The Whitespace pre-tokenizer's \w+|[^\w\s]+ with Rust regex's Unicode \w and \s spelled out.
#define IZWI_WORD R"(\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D})"
#define IZWI_SPACE R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})"
constexpr const char* kWhitespacePattern = "[" IZWI_WORD "]+|[^" IZWI_WORD IZWI_SPACE "]+";
#undef IZWI_WORD
#undef IZWI_SPACE

// tokenizers' SplitDelimiterBehavior names.
constexpr EnumName<SplitBehavior> kSplitBehaviorNames[] = {
    {SplitBehavior::Removed, "Removed"},
    {SplitBehavior::Isolated, "Isolated"},
    {SplitBehavior::MergedWithPrevious, "MergedWithPrevious"},
    {SplitBehavior::MergedWithNext, "MergedWithNext"},
    {SplitBehavior::Contiguous, "Contiguous"},
};
static_assert(enum_names_in_order(kSplitBehaviorNames));

SplitBehavior behavior_of(const std::string& name, const std::string& origin) {
  if (const auto behavior = enum_from_name(kSplitBehaviorNames, name)) return *behavior;
  fail(ErrorCode::Unsupported, "{}: split behavior '{}' is not supported", origin, name);
}

struct Range {
  size_t start, end;
  bool flag;  ///< a match (before the behaviour), removed (after it)
};

// tokenizers' NormalizedString::split: `ranges` cover `piece` (matches flagged); the behaviour
// decides what becomes a pre-token. Empty pieces are dropped, as PreTokenizedString::split does.
void split_ranges(std::string_view piece, const std::vector<Range>& ranges, SplitBehavior behavior,
                  std::vector<std::string_view>& out, bool* first_at_zero) {
  thread_local std::vector<Range> splits;
  splits.clear();
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Range& r : ranges) splits.push_back({r.start, r.end, false});
      break;
    case SplitBehavior::Removed:
      splits = ranges;
      break;
    case SplitBehavior::Contiguous: {
      bool previous = false;
      for (const Range& r : ranges) {
        if (r.flag == previous && !splits.empty()) {
          splits.back().end = r.end;
        } else {
          splits.push_back({r.start, r.end, false});
        }
        previous = r.flag;
      }
      break;
    }
    case SplitBehavior::MergedWithPrevious: {
      bool previous = false;
      for (const Range& r : ranges) {
        if (r.flag && !previous && !splits.empty()) {
          splits.back().end = r.end;
        } else {
          splits.push_back({r.start, r.end, false});
        }
        previous = r.flag;
      }
      break;
    }
    case SplitBehavior::MergedWithNext: {
      bool previous = false;
      for (size_t i = ranges.size(); i-- > 0;) {
        const Range& r = ranges[i];
        if (r.flag && !previous && !splits.empty()) {
          splits.back().start = r.start;
        } else {
          splits.push_back({r.start, r.end, false});
        }
        previous = r.flag;
      }
      std::reverse(splits.begin(), splits.end());
      break;
    }
  }
  bool first = true;
  for (const Range& r : splits) {
    if (r.flag || r.end == r.start) continue;
    if (first && first_at_zero) *first_at_zero = r.start == 0;
    first = false;
    out.push_back(piece.substr(r.start, r.end - r.start));
  }
  if (first && first_at_zero) *first_at_zero = false;
}

// Pattern::find_matches of a regex: matches and the gaps between them, covering `piece`.
void regex_ranges(const Regex& regex, std::string_view piece, bool invert, std::vector<Range>& ranges) {
  thread_local std::vector<std::pair<size_t, size_t>> matches;
  matches.clear();
  ranges.clear();
  if (piece.empty()) return ranges.push_back({0, 0, invert});
  regex.find_matches(piece, matches);
  size_t prev = 0;
  for (const auto& [start, end] : matches) {
    if (prev != start) ranges.push_back({prev, start, invert});
    ranges.push_back({start, end, !invert});
    prev = end;
  }
  if (prev != piece.size()) ranges.push_back({prev, piece.size(), invert});
}

// Pattern::find_matches of a character predicate: every matching character is its own match.
template <typename Predicate>
void char_ranges(std::string_view piece, Predicate&& is_match, std::vector<Range>& ranges) {
  ranges.clear();
  if (piece.empty()) return ranges.push_back({0, 0, false});
  size_t last = 0;
  for (size_t pos = 0; pos < piece.size();) {
    size_t n = 0;
    const char32_t cp = utf8::decode_at(piece, pos, &n);
    if (is_match(cp)) {
      if (last < pos) ranges.push_back({last, pos, false});
      ranges.push_back({pos, pos + n, true});
      last = pos + n;
    }
    pos += n;
  }
  if (last < piece.size()) ranges.push_back({last, piece.size(), false});
}

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& value, const std::string& origin) {
  PreTokenizer p;
  p.parse(value, origin);
  return p;
}

void PreTokenizer::parse(const nlohmann::json& value, const std::string& origin) {
  if (value.is_null()) return;
  const std::string type = component_type(value);
  const JsonFields fields(value, origin + ": pre_tokenizer " + type);
  if (byte_level_ && type != "Sequence") {
    fail(ErrorCode::Unsupported,
         "{}: pre_tokenizer '{}' after ByteLevel is not supported (it would see the byte-level "
         "alphabet)",
         origin, type);
  }
  Step step;
  if (type == "Sequence") {
    const nlohmann::json list = fields.get<nlohmann::json>("pretokenizers");
    if (!list.is_array()) fail(ErrorCode::InvalidFormat, "{}: 'pretokenizers' is not a list", fields.origin());
    for (const auto& s : list) parse(s, origin);
    return;
  } else if (type == "Split") {
    step.behavior = behavior_of(fields.get<std::string>("behavior"), fields.origin());
    step.invert = fields.get_or("invert", false);
    step.regex = pattern_regex(fields);
  } else if (type == "Whitespace") {
    step.regex = std::make_shared<Regex>(kWhitespacePattern, false, fields.origin());
    step.behavior = SplitBehavior::Removed;
    step.invert = true;
  } else if (type == "WhitespaceSplit") {
    step.kind = Kind::Whitespace;
    step.behavior = SplitBehavior::Removed;
  } else if (type == "Digits") {
    step.kind = Kind::Numeric;
    step.behavior = fields.get_or("individual_digits", false) ? SplitBehavior::Isolated : SplitBehavior::Contiguous;
  } else if (type == "Punctuation") {
    step.kind = Kind::Punctuation;
    step.behavior = behavior_of(fields.get_or<std::string>("behavior", "Isolated"), fields.origin());
  } else if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
    byte_level_ = true;
    step.add_prefix_space = fields.get_or("add_prefix_space", false);
    if (fields.get_or("use_regex", true)) step.regex = std::make_shared<Regex>(kGpt2Pattern, false, fields.origin());
  } else if (type == "Metaspace") {
    step.kind = Kind::Metaspace;
    metaspace_ = fields.get<std::string>("replacement");
    size_t n = 0;
    if (metaspace_.empty() || (utf8::decode_at(metaspace_, 0, &n), n != metaspace_.size())) {
      fail(ErrorCode::InvalidFormat, "{}: 'replacement' must be one character", fields.origin());
    }
    const std::string scheme = fields.get_or<std::string>("prepend_scheme", "always");
    if (scheme == "always") {
      step.prepend = 2;
    } else if (scheme == "first") {
      step.prepend = 1;
    } else if (scheme == "never") {
      step.prepend = 0;
    } else {
      fail(ErrorCode::Unsupported, "{}: prepend_scheme '{}' is not supported", fields.origin(), scheme);
    }
    if (fields.has("add_prefix_space") && !fields.get<bool>("add_prefix_space")) {
      if (step.prepend != 0)
        fail(ErrorCode::InvalidFormat, "{}: add_prefix_space does not match prepend_scheme", fields.origin());
    }
    step.metaspace_split = fields.get_or("split", true);
  } else {
    fail(ErrorCode::Unsupported,
         "{}: pre_tokenizer '{}' is not supported (supported: Split, ByteLevel, Metaspace, Whitespace, "
         "WhitespaceSplit, Digits, Punctuation, Sequence)",
         origin, type);
  }
  steps_.push_back(std::move(step));
}

void PreTokenizer::apply(const Step& step, std::string_view piece, bool at_origin, PreTokens& out,
                         std::vector<std::string_view>& next, bool* first_at_zero) const {
  static thread_local std::vector<Range> ranges;
  switch (step.kind) {
    case Kind::Regex:
      if (step.behavior == SplitBehavior::Isolated) {  // the common case (Llama 3, Qwen): every piece kept
        const size_t before = next.size();
        step.regex->split_isolated(piece, next);
        if (first_at_zero) *first_at_zero = next.size() > before;
        return;
      }
      regex_ranges(*step.regex, piece, step.invert, ranges);
      return split_ranges(piece, ranges, step.behavior, next, first_at_zero);
    case Kind::Whitespace:
      char_ranges(piece, utf8::is_whitespace, ranges);
      return split_ranges(piece, ranges, step.behavior, next, first_at_zero);
    case Kind::Numeric:
      char_ranges(piece, utf8::is_numeric, ranges);
      return split_ranges(piece, ranges, step.behavior, next, first_at_zero);
    case Kind::Punctuation:
      char_ranges(piece, utf8::is_punctuation, ranges);
      return split_ranges(piece, ranges, step.behavior, next, first_at_zero);
    case Kind::ByteLevel:
      if (step.add_prefix_space && !piece.empty() && piece.front() != ' ') {
        piece = out.storage.emplace_back(" " + std::string(piece));
      }
      if (step.regex) {
        const size_t before = next.size();
        step.regex->split_isolated(piece, next);
        if (first_at_zero) *first_at_zero = next.size() > before;
      } else if (!piece.empty()) {
        next.push_back(piece);
        if (first_at_zero) *first_at_zero = true;
      }
      return;
    case Kind::Metaspace: {
      std::string replaced;
      replaced.reserve(piece.size() + 2 * metaspace_.size());
      const bool prepend = step.prepend == 2 || (step.prepend == 1 && at_origin);
      if (prepend && piece.compare(0, metaspace_.size(), metaspace_) != 0 &&
          !(piece.size() > 0 && piece.front() == ' ')) {
        replaced += metaspace_;
      }
      for (char c : piece) {
        if (c == ' ') {
          replaced += metaspace_;
        } else {
          replaced += c;
        }
      }
      const std::string_view stored = out.storage.emplace_back(std::move(replaced));
      if (!step.metaspace_split) {
        if (!stored.empty()) next.push_back(stored);
        if (first_at_zero) *first_at_zero = !stored.empty();
        return;
      }
      // split on the replacement character, MergedWithNext
      ranges.clear();
      size_t last = 0;
      for (size_t pos = stored.find(metaspace_); pos != std::string_view::npos;
           pos = stored.find(metaspace_, pos + metaspace_.size())) {
        if (last < pos) ranges.push_back({last, pos, false});
        ranges.push_back({pos, pos + metaspace_.size(), true});
        last = pos + metaspace_.size();
      }
      if (last < stored.size() || stored.empty()) ranges.push_back({last, stored.size(), false});
      return split_ranges(stored, ranges, SplitBehavior::MergedWithNext, next, first_at_zero);
    }
  }
}

void PreTokenizer::split(std::string_view text, bool at_origin, PreTokens& out) const {
  out.pieces.assign(1, text);
  out.first_at_origin = at_origin;
  std::vector<std::string_view> next;
  for (const Step& step : steps_) {
    // ByteLevel without its regex or prefix space leaves raw-byte pieces as they are.
    if (step.kind == Kind::ByteLevel && !step.regex && !step.add_prefix_space) continue;
    next.clear();
    bool first_at_origin = false;
    for (size_t i = 0; i < out.pieces.size(); ++i) {
      const bool piece_at_origin = i == 0 && out.first_at_origin;
      bool first_at_zero = false;
      const size_t before = next.size();
      apply(step, out.pieces[i], piece_at_origin, out, next, piece_at_origin ? &first_at_zero : nullptr);
      if (piece_at_origin && before == 0 && next.size() > 0) first_at_origin = first_at_zero;
    }
    out.first_at_origin = first_at_origin;
    out.pieces.swap(next);
  }
}

}  // namespace izwi
