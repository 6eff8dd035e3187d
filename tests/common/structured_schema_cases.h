#pragma once
// The JSON schemas the constrained-decoding tests walk: each supported keyword alone and in the
// combinations real schemas use (tagged unions, recursive trees, tuples, formats, ranges).

namespace izwi::testing {

struct SchemaCase {
  const char* name;
  const char* schema;
};

/// Together these use every supported keyword (docs/structured-outputs.md).
inline const SchemaCase kSchemaCases[] = {
    {"string", R"({"type": "string"})"},
    {"integer", R"({"type": "integer"})"},
    {"number", R"({"type": "number"})"},
    {"boolean", R"({"type": "boolean"})"},
    {"null", R"({"type": "null"})"},
    {"type_union", R"({"type": ["string", "null"]})"},
    {"closed_object",
     R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
         "required": ["name", "age"], "additionalProperties": false})"},
    {"optional_properties",
     R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
         "required": ["b"]})"},
    {"array_items", R"({"type": "array", "items": {"type": "integer"}})"},
    {"array_bounds", R"({"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 4})"},
    {"tuple", R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false})"},
    {"tuple_then_items",
     R"({"type": "array", "prefixItems": [{"type": "boolean"}], "items": {"type": "null"}, "minItems": 3})"},
    {"enum_strings", R"({"enum": ["red", "green", "blue"]})"},
    {"enum_mixed", R"({"enum": [1, "two", null, true, {"k": [1, 2]}, "quote\"d"]})"},
    {"const", R"({"const": "fixed"})"},
    {"typed_enum", R"({"type": "string", "enum": ["a", "b", 3]})"},
    {"any_of", R"({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer", "minimum": 0}]})"},
    {"one_of_tagged",
     R"({"oneOf": [
          {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number", "minimum": 0}},
           "required": ["kind", "r"], "additionalProperties": false},
          {"type": "object", "properties": {"kind": {"const": "square"},
           "side": {"type": "integer", "minimum": 1, "maximum": 100}},
           "required": ["kind", "side"], "additionalProperties": false}]})"},
    {"ref_defs",
     R"({"$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                             "required": ["x", "y"]}},
         "type": "object", "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
         "required": ["from", "to"]})"},
    {"ref_recursive_tree",
     R"({"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
                            "required": ["value"]}},
         "$ref": "#/$defs/node"})"},
    {"ref_root_list",
     R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 5},
         "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": ["name", "next"]})"},
    {"string_length", R"({"type": "string", "minLength": 2, "maxLength": 5})"},
    {"string_min_length", R"({"type": "string", "minLength": 3})"},
    {"format_date", R"({"type": "string", "format": "date"})"},
    {"format_date_time", R"({"type": "string", "format": "date-time"})"},
    {"format_uuid", R"({"type": "string", "format": "uuid"})"},
    {"format_email", R"({"type": "string", "format": "email"})"},
    {"pattern_anchored", R"({"type": "string", "pattern": "^[A-Z]{2}-\\d{3,5}$"})"},
    {"pattern_search", R"({"type": "string", "pattern": "(cat|dog)s?"})"},
    {"pattern_dot_star", R"({"type": "string", "pattern": "^a.*b+c?$"})"},
    {"pattern_escapes", R"({"type": "string", "pattern": "^\"[a\\\\]+\"$"})"},
    {"pattern_classes", R"({"type": "string", "pattern": "^[^0-9\\s]\\w{0,3}(?:x|yz)*$"})"},
    {"integer_range", R"({"type": "integer", "minimum": -20, "maximum": 300})"},
    {"integer_minimum", R"({"type": "integer", "minimum": 5})"},
    {"integer_maximum", R"({"type": "integer", "maximum": -7})"},
    {"number_range", R"({"type": "number", "minimum": -1.5, "maximum": 2.5})"},
    {"number_minimum", R"({"type": "number", "minimum": 0})"},
    {"any_value", R"({})"},
    {"any_object", R"({"type": "object"})"},
    {"map", R"({"type": "object", "additionalProperties": {"type": "integer"}})"},
    {"empty_object", R"({"type": "object", "properties": {}, "additionalProperties": false})"},
    {"required_only", R"({"type": "object", "required": ["id"]})"},
    {"array_of_enum", R"({"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 3})"},
    {"union_with_bounds", R"({"type": ["integer", "string"], "minimum": 1, "maximum": 9, "maxLength": 2})"},
    {"annotations",
     R"({"title": "T", "description": "d", "$schema": "https://json-schema.org/draft/2020-12/schema",
         "type": "object", "properties": {"x": {"type": "integer", "default": 3, "examples": [1]}},
         "required": ["x"]})"},
};

}  // namespace izwi::testing
