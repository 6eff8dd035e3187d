// Jinja's builtin filters that chat templates use, with transformers' tojson.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_set>

#include "template/builtins.h"
#include "template/int_math.h"
#include "template/json_value.h"
#include "template/limits.h"
#include "template/py_string.h"

namespace izwi::jinja {
namespace {

using FilterFn = Value (*)(const Value&, const CallArgs&);

// The arguments after the first `skip` positional ones, for select/reject/map.
CallArgs shifted(const CallArgs& args, size_t skip) {
  CallArgs out;
  for (size_t i = skip; i < args.positional.size(); ++i) out.positional.push_back(args.positional[i]);
  out.keyword = args.keyword;
  return out;
}

// "a.b.0" as Jinja's make_attrgetter: item lookups, digits as indices.
Value attribute_of(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    int64_t index = 0;
    if (digits && std::from_chars(part.data(), part.data() + part.size(), index).ec != std::errc()) {
      return Value::undefined("no item " + part);  // an index past any sequence
    }
    v = get_item(v, digits ? Value(index) : Value(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

const Value& required(const CallArgs& args, size_t index, const char* name, const char* filter) {
  const Value* v = args.get(index, name);
  if (!v) throw EvalError(std::string(filter) + " filter: missing argument '" + name + "'");
  return *v;
}

Value f_trim(const Value& v, const CallArgs& a) {
  const Value* chars = a.get(0, "chars");
  return Value(py::strip(v.str(), chars && !chars->is_none() ? std::optional<std::string>(chars->str()) : std::nullopt,
                         true, true));
}

Value f_length(const Value& v, const CallArgs&) { return Value(length(v)); }

Value f_tojson(const Value& v, const CallArgs& a) {
  JsonDumpOptions o;
  if (const Value* indent = a.get(0, "indent"); indent && !indent->is_none()) {
    if (indent->is_string()) {
      o.indent = indent->as_string();
    } else {
      const int64_t width = std::max<int64_t>(0, indent->as_int());
      check_string_size(static_cast<uint64_t>(width));
      o.indent = std::string(static_cast<size_t>(width), ' ');
    }
  }
  // The others are keyword arguments only (index 99: never positional).
  if (const Value* ea = a.get(99, "ensure_ascii")) o.ensure_ascii = ea->truthy();
  if (const Value* sk = a.get(99, "sort_keys")) o.sort_keys = sk->truthy();
  if (const Value* sep = a.get(99, "separators"); sep && sep->is_list() && sep->as_list().size() == 2) {
    o.item_separator = sep->as_list()[0].str();
    o.key_separator = sep->as_list()[1].str();
  }
  return Value(to_json(v, o));
}

Value f_string(const Value& v, const CallArgs&) { return Value(v.str()); }

Value f_list(const Value& v, const CallArgs&) { return Value(iterate(v)); }

Value f_items(const Value& v, const CallArgs&) {
  if (v.is_undefined()) return Value::generator({});
  if (!v.is_dict()) throw EvalError("can only get item pairs from a mapping");
  return Value::generator(get_attr(v, "items").as_function()(CallArgs{}).as_list());
}

Value f_join(const Value& v, const CallArgs& a) {
  const Value* sep = a.get(0, "d");
  const Value* attribute = a.get(1, "attribute");
  std::string out;
  bool first = true;
  const std::string separator = sep ? sep->str() : "";
  for (const Value& item : iterate(v)) {
    if (!first) out += separator;
    out += (attribute && !attribute->is_none() ? attribute_of(item, attribute->str()) : item).str();
    check_string_size(out.size());
    first = false;
  }
  return Value(std::move(out));
}

Value f_first(const Value& v, const CallArgs&) {
  const ValueList items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(const Value& v, const CallArgs&) {
  const ValueList items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_default(const Value& v, const CallArgs& a) {
  const Value* dflt = a.get(0, "default_value");
  const Value* boolean = a.get(1, "boolean");
  const bool use_default = v.is_undefined() || (boolean && boolean->truthy() && !v.truthy());
  if (!use_default) return v;
  return dflt ? *dflt : Value(std::string());
}

Value f_upper(const Value& v, const CallArgs&) { return Value(py::upper(v.str())); }
Value f_lower(const Value& v, const CallArgs&) { return Value(py::lower(v.str())); }
Value f_title(const Value& v, const CallArgs&) { return Value(py::title(v.str())); }
Value f_capitalize(const Value& v, const CallArgs&) { return Value(py::capitalize(v.str())); }

Value f_replace(const Value& v, const CallArgs& a) {
  const Value* count = a.get(2, "count");
  return Value(py::replace(v.str(), required(a, 0, "old", "replace").str(), required(a, 1, "new", "replace").str(),
                           count && !count->is_none() ? count->as_int() : -1));
}

Value select_or_reject(const Value& v, const CallArgs& a, bool select, bool by_attribute) {
  ValueList out;
  std::string attribute;
  size_t next = 0;
  if (by_attribute) attribute = required(a, next++, "attribute", "selectattr").str();
  const Value* test = a.positional.size() > next ? &a.positional[next] : nullptr;
  const CallArgs test_args = shifted(a, next + 1);
  if (!v.truthy()) return Value::generator({});  // Jinja: `if value:` before iterating
  for (const Value& item : iterate(v)) {
    const Value subject = by_attribute ? attribute_of(item, attribute) : item;
    const bool ok = test ? apply_test(test->str(), subject, test_args) : subject.truthy();
    if (ok == select) out.push_back(item);
  }
  return Value::generator(std::move(out));
}
Value f_select(const Value& v, const CallArgs& a) { return select_or_reject(v, a, true, false); }
Value f_reject(const Value& v, const CallArgs& a) { return select_or_reject(v, a, false, false); }
Value f_selectattr(const Value& v, const CallArgs& a) { return select_or_reject(v, a, true, true); }
Value f_rejectattr(const Value& v, const CallArgs& a) { return select_or_reject(v, a, false, true); }

Value f_map(const Value& v, const CallArgs& a) {
  ValueList out;
  if (!v.truthy()) return Value::generator({});
  if (const Value* attribute = a.get(99, "attribute")) {
    const Value* dflt = a.get(99, "default");
    for (const Value& item : iterate(v)) {
      Value x = attribute_of(item, attribute->str());
      out.push_back(x.is_undefined() && dflt ? *dflt : x);
    }
    return Value::generator(std::move(out));
  }
  const std::string filter = required(a, 0, "name", "map").str();
  const CallArgs rest = shifted(a, 1);
  for (const Value& item : iterate(v)) out.push_back(apply_filter(filter, item, rest));
  return Value::generator(std::move(out));
}

Value f_int(const Value& v, const CallArgs& a) {
  const Value* dflt = a.get(0, "default");
  const Value fallback = dflt ? *dflt : Value(int64_t{0});
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float()) return std::isnan(v.as_double()) ? fallback : Value(py::truncate(v.as_double()));
  if (v.is_string()) {
    const std::string s = py::strip(v.as_string(), std::nullopt, true, true);
    // std::sto*'s invalid_argument and out_of_range are logic_errors; past 64 bits, "1e30" and
    // "99999999999999999999" fall through to the float, which does not fit: an EvalError.
    try {
      size_t used = 0;
      const int64_t i = std::stoll(s, &used, 10);
      if (used == s.size()) return Value(i);
    } catch (const std::logic_error&) {
    }
    try {
      size_t used = 0;
      const double d = std::stod(s, &used);
      if (used == s.size() && !std::isnan(d)) return Value(py::truncate(d));
    } catch (const std::logic_error&) {
    }
  }
  return fallback;
}

Value f_float(const Value& v, const CallArgs& a) {
  const Value* dflt = a.get(0, "default");
  if (v.is_number()) return Value(v.as_double());
  if (v.is_string()) {
    try {
      size_t used = 0;
      const std::string s = py::strip(v.as_string(), std::nullopt, true, true);
      const double d = std::stod(s, &used);
      if (used == s.size()) return Value(d);
    } catch (const std::exception&) {
    }
  }
  return dflt ? *dflt : Value(0.0);
}

Value f_abs(const Value& v, const CallArgs&) {
  if (v.is_float()) return Value(std::fabs(v.as_double()));
  return Value(v.as_int() < 0 ? py::neg(v.as_int()) : v.as_int());
}

Value f_round(const Value& v, const CallArgs& a) {
  const Value* precision = a.get(0, "precision");
  const Value* method = a.get(1, "method");
  const int64_t p = precision ? precision->as_int() : 0;
  const std::string m = method ? method->str() : "common";
  const double scale = std::pow(10.0, static_cast<double>(p));
  const double x = v.as_double() * scale;
  // "common" is Python's round(): halves to even.
  const double r = m == "ceil" ? std::ceil(x) : m == "floor" ? std::floor(x) : std::nearbyint(x);
  return Value(r / scale);
}

Value f_reverse(const Value& v, const CallArgs&) {
  if (v.is_string()) {
    std::u32string t = py::decode(v.as_string());
    std::reverse(t.begin(), t.end());
    return Value(py::encode(t));
  }
  ValueList items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::generator(std::move(items));
}

Value sort_key(const Value& item, const Value* attribute, bool case_sensitive) {
  Value k = attribute && !attribute->is_none() ? attribute_of(item, attribute->str()) : item;
  if (!case_sensitive && k.is_string()) k = Value(py::lower(k.as_string()));
  return k;
}

Value f_sort(const Value& v, const CallArgs& a) {
  const Value* reverse = a.get(0, "reverse");
  const Value* case_sensitive = a.get(1, "case_sensitive");
  const Value* attribute = a.get(2, "attribute");
  const bool cs = case_sensitive && case_sensitive->truthy();
  ValueList items = iterate(v);
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return less(sort_key(x, attribute, cs), sort_key(y, attribute, cs));
  });
  if (reverse && reverse->truthy()) std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

Value f_dictsort(const Value& v, const CallArgs& a) {
  const Value* case_sensitive = a.get(0, "case_sensitive");
  const Value* by = a.get(1, "by");
  const Value* reverse = a.get(2, "reverse");
  const bool cs = case_sensitive && case_sensitive->truthy();
  const size_t pos = by && by->str() == "value" ? 1 : 0;
  ValueList items = f_items(v, CallArgs{}).as_list();
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return less(sort_key(x.as_list()[pos], nullptr, cs), sort_key(y.as_list()[pos], nullptr, cs));
  });
  if (reverse && reverse->truthy()) std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

// A text that two hashable values share exactly when Python's == holds (1, 1.0 and True are one
// key), so that unique is a set lookup per item rather than a scan of the items seen.
void append_hash_key(const Value& v, std::string& key) {
  charge_steps(1);
  switch (v.kind()) {
    case Value::Kind::Undefined:
      key += 'U';
      return;
    case Value::Kind::None:
      key += 'N';
      return;
    case Value::Kind::Bool:
    case Value::Kind::Int:
      key += 'I' + std::to_string(v.as_int()) + ';';
      return;
    case Value::Kind::Float: {
      const double d = v.as_double();
      if (std::trunc(d) == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
        key += 'I' + std::to_string(static_cast<int64_t>(d)) + ';';
      } else {
        key += 'F' + float_repr(d) + ';';
      }
      return;
    }
    case Value::Kind::String:
      charge_scan(v.as_string().size());  // copied here, hashed by the set
      key += 'S' + std::to_string(v.as_string().size()) + ':' + v.as_string();
      check_string_size(key.size());
      return;
    case Value::Kind::List:
      if (v.is_tuple()) {
        const ValueWalk walk;
        key += 'T' + std::to_string(v.as_list().size()) + '(';
        for (const Value& item : v.as_list()) append_hash_key(item, key);
        key += ')';
        return;
      }
      break;
    case Value::Kind::Namespace:
      key += 'P' + std::to_string(reinterpret_cast<uintptr_t>(&v.as_dict())) + ';';
      return;
    case Value::Kind::Function:
      key += 'P' + std::to_string(reinterpret_cast<uintptr_t>(&v.as_function())) + ';';
      return;
    case Value::Kind::Dict:
      break;
  }
  throw EvalError(std::string("unhashable type: '") + v.type_name() + "'");
}

Value f_unique(const Value& v, const CallArgs& a) {
  const Value* case_sensitive = a.get(0, "case_sensitive");
  const Value* attribute = a.get(1, "attribute");
  const bool cs = case_sensitive && case_sensitive->truthy();
  ValueList out;
  std::unordered_set<std::string> seen;
  for (const Value& item : iterate(v)) {
    std::string key;
    append_hash_key(sort_key(item, attribute, cs), key);
    if (seen.insert(std::move(key)).second) out.push_back(item);
  }
  return Value::generator(std::move(out));
}

Value min_max(const Value& v, const CallArgs& a, bool max) {
  const Value* case_sensitive = a.get(0, "case_sensitive");
  const Value* attribute = a.get(1, "attribute");
  const bool cs = case_sensitive && case_sensitive->truthy();
  const ValueList items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  const Value* best = &items[0];
  for (const Value& item : items) {
    const Value k = sort_key(item, attribute, cs), b = sort_key(*best, attribute, cs);
    if (max ? less(b, k) : less(k, b)) best = &item;
  }
  return *best;
}
Value f_max(const Value& v, const CallArgs& a) { return min_max(v, a, true); }
Value f_min(const Value& v, const CallArgs& a) { return min_max(v, a, false); }

Value f_sum(const Value& v, const CallArgs& a) {
  const Value* attribute = a.get(0, "attribute");
  const Value* start = a.get(1, "start");
  Value total = start ? *start : Value(int64_t{0});
  for (const Value& item : iterate(v)) {
    const Value x = attribute && !attribute->is_none() ? attribute_of(item, attribute->str()) : item;
    if (total.is_float() || x.is_float()) {
      total = Value(total.as_double() + x.as_double());
    } else {
      total = Value(py::add(total.as_int(), x.as_int()));
    }
  }
  return total;
}

Value f_count(const Value& v, const CallArgs& a) { return f_length(v, a); }

Value f_wordcount(const Value& v, const CallArgs&) {
  return Value(static_cast<int64_t>(py::split(v.str(), std::nullopt, -1).size()));
}

Value f_indent(const Value& v, const CallArgs& a) {
  const Value* width = a.get(0, "width");
  const Value* first = a.get(1, "first");
  const Value* blank = a.get(2, "blank");
  std::string pad;
  if (width && width->is_string()) {
    pad = width->as_string();
  } else {
    const int64_t n = width ? std::max<int64_t>(0, width->as_int()) : 4;
    check_string_size(static_cast<uint64_t>(n));
    pad.assign(static_cast<size_t>(n), ' ');
  }
  const std::vector<std::string> lines = py::splitlines(v.str() + "\n");
  std::string out;
  if (first && first->truthy()) out = pad;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    const bool pad_line = blank && blank->truthy() ? i > 0 : i > 0 && !lines[i].empty();
    if (pad_line) out += pad;
    out += lines[i];
    check_string_size(out.size());
  }
  return Value(std::move(out));
}

Value f_safe(const Value& v, const CallArgs&) { return Value::markup(v.str()); }

Value f_escape(const Value& v, const CallArgs&) { return v.is_markup() ? v : Value::markup(html_escape(v.str())); }

Value f_attr(const Value& v, const CallArgs& a) { return get_attr(v, required(a, 0, "name", "attr").str()); }

Value f_batch(const Value& v, const CallArgs& a) {
  const int64_t n = required(a, 0, "linecount", "batch").as_int();
  if (n <= 0) throw EvalError("batch size must be positive");
  const Value* fill = a.get(1, "fill_with");
  ValueList out, cur;
  for (const Value& item : iterate(v)) {
    cur.push_back(item);
    if (static_cast<int64_t>(cur.size()) == n) {
      out.emplace_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (fill) {
      check_items(static_cast<uint64_t>(n));
      cur.resize(static_cast<size_t>(n), *fill);
    }
    out.emplace_back(std::move(cur));
  }
  return Value(std::move(out));
}

const std::map<std::string, FilterFn>& filters() {
  static const std::map<std::string, FilterFn> table = {
      {"abs", f_abs},
      {"attr", f_attr},
      {"batch", f_batch},
      {"capitalize", f_capitalize},
      {"count", f_count},
      {"d", f_default},
      {"default", f_default},
      {"dictsort", f_dictsort},
      {"e", f_escape},
      {"escape", f_escape},
      {"first", f_first},
      {"float", f_float},
      {"indent", f_indent},
      {"int", f_int},
      {"items", f_items},
      {"join", f_join},
      {"last", f_last},
      {"length", f_length},
      {"list", f_list},
      {"lower", f_lower},
      {"map", f_map},
      {"max", f_max},
      {"min", f_min},
      {"reject", f_reject},
      {"rejectattr", f_rejectattr},
      {"replace", f_replace},
      {"reverse", f_reverse},
      {"round", f_round},
      {"safe", f_safe},
      {"select", f_select},
      {"selectattr", f_selectattr},
      {"sort", f_sort},
      {"string", f_string},
      {"sum", f_sum},
      {"title", f_title},
      {"tojson", f_tojson},
      {"trim", f_trim},
      {"unique", f_unique},
      {"upper", f_upper},
      {"wordcount", f_wordcount},
  };
  return table;
}

}  // namespace

bool has_filter(const std::string& name) { return filters().count(name) != 0; }

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args) {
  const auto it = filters().find(name);
  if (it == filters().end()) throw EvalError("no filter named '" + name + "'");
  if (value.is_string()) charge_scan(value.as_string().size());  // string filters read all of it
  return it->second(value, args);
}

}  // namespace izwi::jinja
