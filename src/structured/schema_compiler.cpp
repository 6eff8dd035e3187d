#include "structured/schema_compiler.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/check.h"
#include "structured/grammar_builder.h"
#include "structured/json_lexemes.h"
#include "structured/number_range.h"
#include "structured/regex.h"

namespace izwi::structured {

namespace {

using nlohmann::json;

// Keywords that describe without constraining: ignored.
const std::set<std::string> kAnnotations = {"title",   "description", "$schema",    "$id",      "$comment",
                                            "default", "examples",    "deprecated", "readOnly", "writeOnly",
                                            "$defs",   "definitions", "$anchor"};
const std::set<std::string> kConstraints = {"type",   "properties",  "required",  "additionalProperties",
                                            "items",  "prefixItems", "minItems",  "maxItems",
                                            "enum",   "const",       "anyOf",     "oneOf",
                                            "$ref",   "minLength",   "maxLength", "pattern",
                                            "format", "minimum",     "maximum"};

// Formats as RawBytes regexes; their characters never need escaping inside a JSON string. Dates
// stop at day 28 of February (no leap-year rule): a subset, never an invalid date.
const char* const kDate =
    "[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-"
    "9]|2[0-8]))";
const char* const kTime =
    "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
const char* const kUuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const char* const kEmail =
    "[A-Za-z0-9_+-]+(?:\\.[A-Za-z0-9_+-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*["
    "A-Za-z0-9])?)+";

bool matches_type(const json& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "string") return value.is_string();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    return value.is_number_integer() ||
           (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  }
  return false;
}

class SchemaCompiler {
 public:
  SchemaCompiler(const json& root, const SchemaCompileOptions& options)
      : root_(root), options_(options), b_(options.max_grammar_states) {}

  std::shared_ptr<const Grammar> document(const std::function<Fragment()>& value) {
    const int32_t rule = b_.declare_rule("document");
    const Fragment ws_before = ws();
    const Fragment body = value();
    b_.define_rule(rule, b_.seq({ws_before, body, ws()}));
    return std::make_shared<Grammar>(b_.finish(rule));
  }

  Fragment schema_value() { return b_.call(rule_of(root_, "")); }
  Fragment any_object() {
    return object_of_any([this] { return b_.call(any_value_rule()); });
  }

 private:
  static std::string where(const std::string& path) { return path.empty() ? "/" : path; }

  // Inline, not a shared rule: a token such as ` "name` then stays inside the caller's rule, so
  // the per-node token classification decides it once instead of at every step.
  Fragment ws() { return json_whitespace(b_, options_.max_whitespace); }

  int32_t string_rule() {
    if (string_rule_ < 0) {
      string_rule_ = b_.declare_rule("string");
      const Fragment open = b_.literal("\"");
      const int32_t inside = b_.add_node();
      const int32_t end = b_.add_node();
      b_.add_epsilon(open.end, inside);
      add_string_char_edges(b_, inside, inside);
      b_.add_bytes(inside, ByteSet::of('"'), end);
      b_.define_rule(string_rule_, {open.start, end});
    }
    return string_rule_;
  }

  int32_t lexeme_rule(int32_t& rule, const char* name, Fragment (*make)(GrammarBuilder&)) {
    if (rule < 0) {
      rule = b_.declare_rule(name);
      b_.define_rule(rule, make(b_));
    }
    return rule;
  }

  int32_t any_value_rule() {
    if (any_value_rule_ < 0) {
      any_value_rule_ = b_.declare_rule("any value");
      auto value = [this] { return b_.call(any_value_rule_); };
      const Fragment array =
          b_.seq({b_.literal("["), ws(),
                  b_.optional(b_.seq({value(), b_.star(b_.seq({ws(), b_.literal(","), ws(), value()})), ws()})),
                  b_.literal("]")});
      b_.define_rule(any_value_rule_, b_.alt({object_of_any(value), array, b_.call(string_rule()),
                                              b_.call(lexeme_rule(number_rule_, "number", json_number)),
                                              b_.literal("true"), b_.literal("false"), b_.literal("null")}));
    }
    return any_value_rule_;
  }

  /// An object with any keys and each value from make_value().
  Fragment object_of_any(const std::function<Fragment()>& make_value) {
    auto member = [&] { return b_.seq({b_.call(string_rule()), ws(), b_.literal(":"), ws(), make_value()}); };
    return b_.seq({b_.literal("{"), ws(),
                   b_.optional(b_.seq({member(), b_.star(b_.seq({ws(), b_.literal(","), ws(), member()})), ws()})),
                   b_.literal("}")});
  }

  /// The rule of the subschema `schema` (compiled on first use, then shared).
  int32_t rule_of(const json& schema, const std::string& path) {
    const auto found = rules_.find(&schema);
    if (found != rules_.end()) {
      if (std::find(unguarded_.begin(), unguarded_.end(), found->second) != unguarded_.end()) {
        fail(ErrorCode::InvalidArgument,
             "JSON schema: {} refers back to itself without an object or array in between (it would never end)",
             where(path));
      }
      return found->second;
    }
    const int32_t rule = b_.declare_rule(path);
    rules_.emplace(&schema, rule);
    unguarded_.push_back(rule);
    const Fragment body = value(schema, path);
    unguarded_.pop_back();
    b_.define_rule(rule, body);
    return rule;
  }

  /// Compiles the subschemas of an object or array: their rules start after a consumed byte.
  template <typename F>
  Fragment guarded(F&& make) {
    std::vector<int32_t> saved;
    saved.swap(unguarded_);
    const Fragment result = make();
    unguarded_.swap(saved);
    return result;
  }

  Fragment value(const json& schema, const std::string& path) {
    if (++depth_ > options_.max_depth) {
      fail(ErrorCode::InvalidArgument, "JSON schema: nested deeper than {} levels (max_depth) at {}",
           options_.max_depth, where(path));
    }
    const Fragment result = value_at_depth(schema, path);
    --depth_;
    return result;
  }

  Fragment value_at_depth(const json& schema, const std::string& path) {
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return b_.call(any_value_rule());
      fail(ErrorCode::InvalidArgument, "JSON schema: {} is false, which no value satisfies", where(path));
    }
    if (!schema.is_object()) {
      fail(ErrorCode::InvalidArgument, "JSON schema: {} must be an object or a boolean, not {}", where(path),
           schema.type_name());
    }
    std::vector<std::string> constraints;
    for (const auto& [key, unused] : schema.items()) {
      if (kConstraints.count(key)) {
        constraints.push_back(key);
      } else if (!kAnnotations.count(key)) {
        fail(ErrorCode::Unsupported, "JSON schema keyword '{}' at {} is not supported", key, where(path));
      }
    }
    auto only = [&](const std::string& keyword, const std::set<std::string>& allowed) {
      for (const std::string& key : constraints) {
        if (key != keyword && !allowed.count(key)) {
          fail(ErrorCode::Unsupported, "JSON schema: '{}' beside '{}' at {} is not supported", key, keyword,
               where(path));
        }
      }
    };
    if (schema.contains("$ref")) {
      only("$ref", {});
      return b_.call(resolve(schema["$ref"], path + "/$ref"));
    }
    for (const char* keyword : {"anyOf", "oneOf"}) {
      if (!schema.contains(keyword)) continue;
      only(keyword, {});
      const json& branches = schema[keyword];
      if (!branches.is_array() || branches.empty()) {
        fail(ErrorCode::InvalidArgument, "JSON schema: {}/{} must be a non-empty array", path, keyword);
      }
      std::vector<Fragment> choices;
      for (size_t i = 0; i < branches.size(); ++i) {
        choices.push_back(b_.call(rule_of(branches[i], path + "/" + keyword + "/" + std::to_string(i))));
      }
      return b_.alt(choices);
    }
    const std::vector<std::string> types = types_of(schema, path);
    if (schema.contains("enum") || schema.contains("const")) {
      const char* keyword = schema.contains("enum") ? "enum" : "const";
      only(keyword, {"type"});
      const json values = schema.contains("enum") ? schema["enum"] : json::array({schema["const"]});
      if (!values.is_array()) fail(ErrorCode::InvalidArgument, "JSON schema: {}/enum must be an array", path);
      std::vector<Fragment> choices;
      for (const json& v : values) {
        const bool typed =
            std::any_of(types.begin(), types.end(), [&](const std::string& t) { return matches_type(v, t); });
        if (types.empty() || typed) choices.push_back(b_.literal(v.dump()));
      }
      if (choices.empty()) {
        fail(ErrorCode::InvalidArgument, "JSON schema: {}/{} has no value of the schema's type", path, keyword);
      }
      return b_.alt(choices);
    }
    if (types.empty()) return b_.call(any_value_rule());
    std::vector<Fragment> choices;
    for (const std::string& type : types) choices.push_back(typed_value(schema, type, path));
    return choices.size() == 1 ? choices[0] : b_.alt(choices);
  }

  /// The types a schema allows: its `type`, else those its keywords constrain (generating only
  /// those is a subset of what validates); empty means any value.
  std::vector<std::string> types_of(const json& schema, const std::string& path) {
    std::vector<std::string> types;
    if (schema.contains("type")) {
      const json& type = schema["type"];
      const json list = type.is_array() ? type : json::array({type});
      for (const json& t : list) {
        static const std::set<std::string> known = {"null",   "boolean", "object", "array",
                                                    "number", "integer", "string"};
        if (!t.is_string() || !known.count(t.get<std::string>())) {
          fail(ErrorCode::InvalidArgument, "JSON schema: {}/type has an unknown type {}", path, t.dump());
        }
        types.push_back(t.get<std::string>());
      }
      if (types.empty()) fail(ErrorCode::InvalidArgument, "JSON schema: {}/type is an empty list", path);
      return types;
    }
    auto has_any = [&](std::initializer_list<const char*> keys) {
      return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return schema.contains(k); });
    };
    if (has_any({"properties", "required", "additionalProperties"})) types.push_back("object");
    if (has_any({"items", "prefixItems", "minItems", "maxItems"})) types.push_back("array");
    if (has_any({"minLength", "maxLength", "pattern", "format"})) types.push_back("string");
    if (has_any({"minimum", "maximum"})) types.push_back("number");
    return types;
  }

  Fragment typed_value(const json& schema, const std::string& type, const std::string& path) {
    if (type == "null") return b_.literal("null");
    if (type == "boolean") return b_.alt({b_.literal("true"), b_.literal("false")});
    if (type == "string") return string_value(schema, path);
    if (type == "integer" || type == "number") return number_value(schema, type == "integer", path);
    if (type == "object") return guarded([&] { return object_value(schema, path); });
    return guarded([&] { return array_value(schema, path); });
  }

  int32_t resolve(const json& ref, const std::string& path) {
    if (!ref.is_string()) fail(ErrorCode::InvalidArgument, "JSON schema: {} must be a string", path);
    const std::string target = ref.get<std::string>();
    if (target.empty() || target[0] != '#') {
      fail(ErrorCode::Unsupported, "JSON schema: {} \"{}\": only references inside the schema (#...) are supported",
           path, target);
    }
    try {
      const json::json_pointer pointer(target.substr(1));
      if (!root_.contains(pointer)) {
        fail(ErrorCode::InvalidArgument, "JSON schema: {} \"{}\" does not resolve", path, target);
      }
      return rule_of(root_.at(pointer), target.substr(1));
    } catch (const json::exception& e) {
      fail(ErrorCode::InvalidArgument, "JSON schema: {} \"{}\" is not a JSON pointer ({})", path, target, e.what());
    }
  }

  size_t count(const json& schema, const char* keyword, const std::string& path, size_t fallback) {
    if (!schema.contains(keyword)) return fallback;
    const json& v = schema[keyword];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      fail(ErrorCode::InvalidArgument, "JSON schema: {}/{} must be a non-negative integer", path, keyword);
    }
    return v.get<size_t>();
  }

  Fragment string_value(const json& schema, const std::string& path) {
    const bool lengths = schema.contains("minLength") || schema.contains("maxLength");
    const bool pattern = schema.contains("pattern");
    const bool format = schema.contains("format");
    if (pattern + format + lengths > 1) {
      fail(ErrorCode::Unsupported, "JSON schema: {} combines pattern, format and minLength/maxLength; use one",
           where(path));
    }
    if (!lengths && !pattern && !format) return b_.call(string_rule());
    const Fragment open = b_.literal("\"");
    Fragment content;
    if (pattern) {
      if (!schema["pattern"].is_string())
        fail(ErrorCode::InvalidArgument, "JSON schema: {}/pattern must be a string", path);
      content =
          compile_regex(b_, schema["pattern"].get<std::string>(), RegexTarget::JsonStringContent, path + "/pattern");
    } else if (format) {
      const json& f = schema["format"];
      const std::string name = f.is_string() ? f.get<std::string>() : f.dump();
      const std::string regex = name == "date"        ? kDate
                                : name == "date-time" ? std::string(kDate) + "T" + kTime
                                : name == "time"      ? kTime
                                : name == "uuid"      ? kUuid
                                : name == "email"     ? kEmail
                                                      : "";
      if (regex.empty()) fail(ErrorCode::Unsupported, "JSON schema: {}/format \"{}\" is not supported", path, name);
      content = compile_regex(b_, regex, RegexTarget::RawBytes, path + "/format");
    } else {
      content = length_bounded_chars(count(schema, "minLength", path, 0),
                                     count(schema, "maxLength", path, GrammarBuilder::kUnbounded), path);
    }
    return b_.seq({open, content, b_.literal("\"")});
  }

  /// min..max characters (code points; an escape is one), one node per count so far.
  Fragment length_bounded_chars(size_t min, size_t max, const std::string& path) {
    if (max < min) fail(ErrorCode::InvalidArgument, "JSON schema: {} has maxLength < minLength", where(path));
    const size_t last = max == GrammarBuilder::kUnbounded ? min : max;
    std::vector<int32_t> at(last + 1);
    for (int32_t& node : at) node = b_.add_node();
    const int32_t end = b_.add_node();
    for (size_t k = 0; k < last; ++k) add_string_char_edges(b_, at[k], at[k + 1]);
    if (max == GrammarBuilder::kUnbounded) add_string_char_edges(b_, at[last], at[last]);
    for (size_t k = min; k <= last; ++k) b_.add_epsilon(at[k], end);
    return {at[0], end};
  }

  std::optional<double> bound(const json& schema, const char* keyword, const std::string& path) {
    if (!schema.contains(keyword)) return std::nullopt;
    if (!schema[keyword].is_number())
      fail(ErrorCode::InvalidArgument, "JSON schema: {}/{} must be a number", path, keyword);
    return schema[keyword].get<double>();
  }

  Fragment number_value(const json& schema, bool integer, const std::string& path) {
    const std::optional<double> lo = bound(schema, "minimum", path);
    const std::optional<double> hi = bound(schema, "maximum", path);
    if (!lo && !hi) {
      return integer ? b_.call(lexeme_rule(integer_rule_, "integer", json_integer))
                     : b_.call(lexeme_rule(number_rule_, "number", json_number));
    }
    const std::string field = path + "/" + (lo ? "minimum" : "maximum");
    std::string regex;
    if (integer) {
      auto to_int = [&](std::optional<double> v, bool up) -> std::optional<int64_t> {
        if (!v) return std::nullopt;
        const double r = up ? std::ceil(*v) : std::floor(*v);
        if (std::fabs(r) > static_cast<double>(kMaxNumberBound)) {
          fail(ErrorCode::Unsupported, "JSON schema: {}: bounds beyond +-1e15 are not supported", field);
        }
        return static_cast<int64_t>(r);
      };
      regex = integer_range_regex(to_int(lo, true), to_int(hi, false), field);
    } else {
      regex = number_range_regex(lo, hi, field);
    }
    return compile_regex(b_, regex, RegexTarget::RawBytes, field);
  }

  Fragment object_value(const json& schema, const std::string& path) {
    const json empty = json::object();
    const json& properties = schema.contains("properties") ? schema["properties"] : empty;
    if (!properties.is_object()) fail(ErrorCode::InvalidArgument, "JSON schema: {}/properties must be an object", path);
    std::set<std::string> required;
    if (schema.contains("required")) {
      const json& list = schema["required"];
      if (!list.is_array()) fail(ErrorCode::InvalidArgument, "JSON schema: {}/required must be an array", path);
      for (const json& name : list) {
        if (!name.is_string()) fail(ErrorCode::InvalidArgument, "JSON schema: {}/required must list strings", path);
        required.insert(name.get<std::string>());
      }
    }
    const json* additional = schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
    if (properties.empty() && required.empty()) {
      if (additional && additional->is_boolean() && !additional->get<bool>()) {
        return b_.seq({b_.literal("{"), ws(), b_.literal("}")});
      }
      if (additional && !additional->is_boolean()) {
        const int32_t rule = rule_of(*additional, path + "/additionalProperties");
        return object_of_any([&] { return b_.call(rule); });
      }
      return object_of_any([this] { return b_.call(any_value_rule()); });
    }
    // The listed properties in a fixed order (nlohmann's: by name), optional ones skippable;
    // required names without a schema take any value. Other properties are never generated.
    struct Member {
      std::string name;
      int32_t rule;
      bool required;
    };
    std::vector<Member> members;
    for (const auto& [name, sub] : properties.items()) {
      members.push_back({name, rule_of(sub, path + "/properties/" + name), required.count(name) > 0});
    }
    for (const std::string& name : required) {
      if (!properties.contains(name)) members.push_back({name, any_value_rule(), true});
    }
    // after[i][e]: members before i are decided; e = whether any was written (a comma is due).
    std::vector<std::array<int32_t, 2>> after(members.size() + 1);
    for (auto& pair : after) pair = {b_.add_node(), b_.add_node()};
    for (size_t i = 0; i < members.size(); ++i) {
      for (int e = 0; e < 2; ++e) {
        std::vector<Fragment> parts;
        if (e) parts.insert(parts.end(), {ws(), b_.literal(","), ws()});
        parts.insert(parts.end(),
                     {b_.literal(json(members[i].name).dump()), ws(), b_.literal(":"), ws(), b_.call(members[i].rule)});
        const Fragment member = b_.seq(parts);
        b_.add_epsilon(after[i][e], member.start);
        b_.add_epsilon(member.end, after[i + 1][1]);
        if (!members[i].required) b_.add_epsilon(after[i][e], after[i + 1][e]);
      }
    }
    const Fragment open = b_.seq({b_.literal("{"), ws()});
    b_.add_epsilon(open.end, after[0][0]);
    const Fragment close = b_.literal("}");
    b_.add_epsilon(after.back()[0], close.start);
    const Fragment ws_close = ws();
    b_.add_epsilon(after.back()[1], ws_close.start);
    b_.add_epsilon(ws_close.end, close.start);
    return {open.start, close.end};
  }

  Fragment array_value(const json& schema, const std::string& path) {
    const json* prefix = nullptr;
    const json* items = schema.contains("items") ? &schema["items"] : nullptr;
    if (schema.contains("prefixItems")) {
      prefix = &schema["prefixItems"];
    } else if (items && items->is_array()) {  // draft 4-7 tuple form
      prefix = items;
      items = nullptr;
    }
    if (prefix && !prefix->is_array())
      fail(ErrorCode::InvalidArgument, "JSON schema: {}/prefixItems must be an array", path);
    const size_t k = prefix ? prefix->size() : 0;
    std::vector<int32_t> prefix_rules;
    for (size_t j = 0; j < k; ++j)
      prefix_rules.push_back(rule_of((*prefix)[j], path + "/prefixItems/" + std::to_string(j)));
    const bool no_rest = items && items->is_boolean() && !items->get<bool>();
    const int32_t rest_rule = no_rest ? -1 : items ? rule_of(*items, path + "/items") : any_value_rule();
    const size_t min = count(schema, "minItems", path, 0);
    size_t max = count(schema, "maxItems", path, GrammarBuilder::kUnbounded);
    if (no_rest) max = std::min(max, k);
    if (max < min)
      fail(ErrorCode::InvalidArgument, "JSON schema: {} allows no array length (minItems > maxItems)", where(path));

    auto element = [&](size_t j) {
      const Fragment value = b_.call(j < k ? prefix_rules[j] : rest_rule);
      return j == 0 ? value : b_.seq({ws(), b_.literal(","), ws(), value});
    };
    // Elements from j on, the first j written.
    std::function<Fragment(size_t)> from = [&](size_t j) -> Fragment {
      if (j == max) return b_.empty();
      if (j >= k && j >= min) {
        return b_.repeat([&] { return element(j); }, 0, max == GrammarBuilder::kUnbounded ? max : max - j);
      }
      const Fragment rest = b_.seq({element(j), from(j + 1)});
      return j >= min ? b_.optional(rest) : rest;
    };
    std::vector<Fragment> parts = {b_.literal("["), ws()};
    if (max > 0) {
      const Fragment elements = b_.seq({element(0), from(1), ws()});
      parts.push_back(min == 0 ? b_.optional(elements) : elements);
    }
    parts.push_back(b_.literal("]"));
    return b_.seq(parts);
  }

  const json& root_;
  const SchemaCompileOptions& options_;
  GrammarBuilder b_;
  std::unordered_map<const json*, int32_t> rules_;
  std::vector<int32_t> unguarded_;  ///< rules entered since the last consumed byte
  size_t depth_ = 0;
  int32_t string_rule_ = -1;
  int32_t number_rule_ = -1;
  int32_t integer_rule_ = -1;
  int32_t any_value_rule_ = -1;
};

}  // namespace

std::shared_ptr<const Grammar> compile_json_schema(const json& schema, const SchemaCompileOptions& options) {
  const size_t size = schema.dump().size();
  if (size > options.max_schema_bytes) {
    fail(ErrorCode::InvalidArgument, "JSON schema: {} bytes, above the limit of {} (max_schema_bytes)", size,
         options.max_schema_bytes);
  }
  SchemaCompiler compiler(schema, options);
  return compiler.document([&] { return compiler.schema_value(); });
}

std::shared_ptr<const Grammar> compile_any_json_object(const SchemaCompileOptions& options) {
  const json empty = json::object();
  SchemaCompiler compiler(empty, options);
  return compiler.document([&] { return compiler.any_object(); });
}

}  // namespace izwi::structured
