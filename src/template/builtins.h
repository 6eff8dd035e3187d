#pragma once
// What expressions reach besides operators: attribute and item access (with Python's str, dict
// and list methods), Jinja's filters and tests, iteration.

#include <string>

#include "template/value.h"

namespace izwi::jinja {

/// obj.name: Jinja tries the Python attribute first (a method, bound to obj), then obj["name"].
/// Undefined (with a hint) when neither exists; EvalError when obj itself is undefined.
Value get_attr(const Value& obj, const std::string& name);
/// obj[key]: Jinja tries the item first, then (for a string key) the attribute.
Value get_item(const Value& obj, const Value& key);
/// The items `for` visits: a list's items, a dict's keys, a string's characters; none for Undefined.
ValueList iterate(const Value& value);
/// len(): code points of a string, items of a list or dict.
int64_t length(const Value& value);
/// Python's `in`.
bool contains(const Value& container, const Value& item);

bool has_filter(const std::string& name);
Value apply_filter(const std::string& name, const Value& value, const CallArgs& args);
bool has_test(const std::string& name);
bool apply_test(const std::string& name, const Value& value, const CallArgs& args);

}  // namespace izwi::jinja
