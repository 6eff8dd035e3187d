#pragma once
// A small JSON Schema validator for the keywords izwi's constrained decoding supports, written
// independently of src/structured/ so that the tests check the compiler against the standard's
// meaning: type, properties, required, additionalProperties, items, prefixItems, minItems,
// maxItems, enum, const, anyOf, oneOf, $ref (inside the schema), minLength, maxLength (code
// points), pattern (ECMAScript, search), format (date, time, date-time, uuid, email), minimum,
// maximum.

#include <string>

#include <nlohmann/json.hpp>

namespace izwi::testing {

/// "" if `value` validates against `schema`, else where and why it does not.
std::string json_schema_violation(const nlohmann::json& value, const nlohmann::json& schema);

}  // namespace izwi::testing
