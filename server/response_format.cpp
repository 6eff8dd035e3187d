#include "server/response_format.h"

#include <cctype>
#include <initializer_list>
#include <string>

#include "izwi/errors.h"
#include "server/api_error.h"
#include "server/json_fields.h"

namespace izwi::server {

namespace {

constexpr const char* kSchemaParam = "response_format.json_schema.schema";

// OpenAI's rule for a schema's name: a-z, A-Z, 0-9, underscores and dashes, at most 64.
bool valid_schema_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

void only_keys(const nlohmann::json& object, const std::string& param, std::initializer_list<const char*> keys) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const char* k : keys) known = known || key == k;
    if (!known) bad_param(param + "." + key, "'{}.{}' is not a field this server takes", param, key);
  }
}

StructuredOutput json_schema_format(const nlohmann::json& format) {
  const auto spec = format.find("json_schema");
  if (spec == format.end() || !spec->is_object()) {
    bad_param("response_format.json_schema",
              "'response_format.json_schema' must be an object with 'name' and 'schema'");
  }
  only_keys(*spec, "response_format.json_schema", {"name", "description", "schema", "strict"});
  const auto name = spec->find("name");
  if (name == spec->end() || !name->is_string() || !valid_schema_name(name->get<std::string>())) {
    bad_param("response_format.json_schema.name",
              "'response_format.json_schema.name' must be 1-64 letters, digits, underscores or dashes");
  }
  if (const auto d = spec->find("description"); d != spec->end() && !d->is_null() && !d->is_string()) {
    bad_param("response_format.json_schema.description", "'response_format.json_schema.description' must be a string");
  }
  // strict false is allowed and decoded strictly anyway: the output always validates.
  if (const auto s = spec->find("strict"); s != spec->end() && !s->is_null() && !s->is_boolean()) {
    bad_param("response_format.json_schema.strict", "'response_format.json_schema.strict' must be a boolean");
  }
  const auto schema = spec->find("schema");
  if (schema == spec->end() || !schema->is_object()) bad_param(kSchemaParam, "'{}' must be an object", kSchemaParam);
  StructuredOutput out{StructuredOutput::Kind::JsonSchema, schema->dump()};
  try {
    validate_structured_output(out);
  } catch (const Error& e) {
    // The engine names its own field; the client's is this one.
    std::string message = e.what();
    const std::string engine_field = "params.structured_output.json_schema: ";
    if (message.rfind(engine_field, 0) == 0) message.erase(0, engine_field.size());
    bad_param(kSchemaParam, "'{}': {}", kSchemaParam, message);
  }
  return out;
}

}  // namespace

StructuredOutput parse_response_format(const nlohmann::json& body, const GenerationParams& params, bool has_tokenizer) {
  // vLLM's own structured-output fields: refused rather than ignored.
  for (const char* field : {"guided_json", "guided_regex", "guided_choice", "guided_grammar", "guided_decoding_backend",
                            "structured_outputs"}) {
    if (body.contains(field) && !body[field].is_null()) {
      bad_param(field, "'{}' is not supported: use response_format (json_object or json_schema)", field);
    }
  }
  const auto format = body.find("response_format");
  if (format == body.end() || format->is_null()) return {};
  if (!format->is_object()) bad_param("response_format", "'response_format' must be an object");
  const auto type = format->find("type");
  if (type == format->end() || !type->is_string()) {
    bad_param("response_format.type", "'response_format.type' must be text, json_object or json_schema");
  }
  const std::string kind = type->get<std::string>();
  StructuredOutput out;
  if (kind == "text") {
    only_keys(*format, "response_format", {"type"});
    return out;
  }
  if (kind == "json_object") {
    only_keys(*format, "response_format", {"type"});
    out.kind = StructuredOutput::Kind::JsonObject;
  } else if (kind == "json_schema") {
    only_keys(*format, "response_format", {"type", "json_schema"});
    out = json_schema_format(*format);
  } else {
    bad_param("response_format.type", "'response_format.type' = '{}' must be text, json_object or json_schema", kind);
  }
  if (!has_tokenizer) {
    bad_param("response_format", "'response_format' needs a model with a tokenizer (each token's text)");
  }
  if (params.ignore_eos) {
    bad_param("ignore_eos",
              "'ignore_eos' cannot be combined with 'response_format' (the output ends with the document)");
  }
  return out;
}

}  // namespace izwi::server
