#include "server/chat_tools.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <random>
#include <set>

#include "server/api_error.h"

namespace izwi::server {

namespace {

// OpenAI's rule for function names.
bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// `tools`: [{"type": "function", "function": {"name", "description", "parameters", "strict"}}].
// Returns each function's name and parameters schema (an object; {} when left out).
std::vector<std::pair<std::string, nlohmann::json>> parse_tools(const nlohmann::json& tools) {
  std::vector<std::pair<std::string, nlohmann::json>> functions;
  std::set<std::string> names;
  for (size_t i = 0; i < tools.size(); ++i) {
    const nlohmann::json& tool = tools[i];
    const std::string at = fmt::format("tools[{}]", i);
    const auto type = tool.find("type");
    if (type == tool.end() || *type != "function") bad_param(at + ".type", "'{}.type' must be \"function\"", at);
    const auto function = tool.find("function");
    if (function == tool.end() || !function->is_object()) {
      bad_param(at + ".function", "'{}.function' must be an object", at);
    }
    const auto name = function->find("name");
    if (name == function->end() || !name->is_string() || !valid_function_name(name->get<std::string>())) {
      bad_param(at + ".function.name",
                "'{}.function.name' must be a name of 1 to 64 letters, digits, underscores and dashes", at);
    }
    if (!names.insert(name->get<std::string>()).second) {
      bad_param(at + ".function.name", "'{}.function.name' = '{}' names a function twice", at,
                name->get<std::string>());
    }
    if (const auto d = function->find("description"); d != function->end() && !d->is_null() && !d->is_string()) {
      bad_param(at + ".function.description", "'{}.function.description' must be a string", at);
    }
    if (const auto s = function->find("strict"); s != function->end() && !s->is_null() && !s->is_boolean()) {
      bad_param(at + ".function.strict", "'{}.function.strict' must be a boolean", at);
    }
    nlohmann::json parameters = nlohmann::json::object();
    if (const auto p = function->find("parameters"); p != function->end() && !p->is_null()) {
      if (!p->is_object()) bad_param(at + ".function.parameters", "'{}.function.parameters' must be an object", at);
      parameters = *p;
    }
    functions.emplace_back(name->get<std::string>(), std::move(parameters));
  }
  return functions;
}

// A function's parameters as the schema its arguments are generated under: an empty schema means
// "no parameters" to OpenAI, so it generates {}.
nlohmann::json arguments_schema(const nlohmann::json& parameters) {
  if (parameters.empty())
    return {{"type", "object"}, {"properties", nlohmann::json::object()}, {"additionalProperties", false}};
  return parameters;
}

// Every "$ref": "#..." in `schema` moved under `prefix` (a JSON pointer): the schema is placed at
// that pointer of a larger one, and its references must still reach their targets.
void move_references(nlohmann::json& schema, const std::string& prefix) {
  if (schema.is_object()) {
    for (auto& [key, value] : schema.items()) {
      if (key == "$ref" && value.is_string() && value.get<std::string>().rfind('#', 0) == 0) {
        value = "#" + prefix + value.get<std::string>().substr(1);
      } else {
        move_references(value, prefix);
      }
    }
  } else if (schema.is_array()) {
    for (nlohmann::json& item : schema) move_references(item, prefix);
  }
}

// tool_choice "required": a JSON array of calls, one of the functions each (vLLM's form).
nlohmann::json required_schema(const std::vector<std::pair<std::string, nlohmann::json>>& functions, bool parallel) {
  nlohmann::json defs = nlohmann::json::object();
  nlohmann::json branches = nlohmann::json::array();
  for (size_t k = 0; k < functions.size(); ++k) {
    const std::string def = fmt::format("function_{}", k);
    nlohmann::json arguments = arguments_schema(functions[k].second);
    move_references(arguments, "/$defs/" + def);
    defs[def] = std::move(arguments);
    branches.push_back(
        {{"type", "object"},
         {"properties", {{"name", {{"const", functions[k].first}}}, {"parameters", {{"$ref", "#/$defs/" + def}}}}},
         {"required", {"name", "parameters"}},
         {"additionalProperties", false}});
  }
  nlohmann::json schema = {{"type", "array"}, {"minItems", 1}, {"items", {{"anyOf", branches}}}, {"$defs", defs}};
  if (!parallel) schema["maxItems"] = 1;
  return schema;
}

// The schema as the engine's constraint; a 400 naming `param` when the engine cannot enforce it.
StructuredOutput constraint(const nlohmann::json& schema, const std::string& param) {
  StructuredOutput out{StructuredOutput::Kind::JsonSchema, schema.dump()};
  try {
    validate_structured_output(out);
  } catch (const Error& e) {
    bad_param(param, "'{}': {}", param, e.what());
  }
  return out;
}

std::string random_alphanumeric(size_t n) {
  static std::mutex mutex;
  static std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::lock_guard<std::mutex> lock(mutex);
  std::string s(n, ' ');
  for (char& c : s) c = kChars[rng() % (sizeof(kChars) - 1)];
  return s;
}

// Special ids of the format's markers in this tokenizer: the text parsed must keep them.
std::vector<int32_t> marker_ids(const Tokenizer& tokenizer, const tool_calls::CallSyntax& syntax) {
  std::vector<int32_t> ids;
  std::optional<ToolCallFormat> format;
  if (syntax.kind == tool_calls::CallSyntax::Hermes) format = ToolCallFormat::Hermes;
  if (syntax.kind == tool_calls::CallSyntax::Llama3Json) format = ToolCallFormat::Llama3Json;
  if (syntax.kind == tool_calls::CallSyntax::Mistral) format = ToolCallFormat::Mistral;
  if (!format) return ids;
  for (const std::string& marker : tool_call_markers(*format)) {
    if (const auto id = tokenizer.token_to_id(marker); id && tokenizer.is_special(*id)) ids.push_back(*id);
  }
  return ids;
}

}  // namespace

std::shared_ptr<ChatToolCalls> ChatToolCalls::from_request(const nlohmann::json& body, const ServedModel& model,
                                                           GenerationParams& params) {
  const auto tools = body.find("tools");
  const bool has_tools = tools != body.end() && !tools->is_null();
  const auto functions = has_tools ? parse_tools(*tools) : std::vector<std::pair<std::string, nlohmann::json>>{};
  bool parallel = true;
  if (const auto p = body.find("parallel_tool_calls"); p != body.end() && !p->is_null()) {
    if (!p->is_boolean()) bad_param("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
    parallel = p->get<bool>();
  }
  // tool_choice: "none", "auto" (the default with tools), "required", or a named function.
  std::string mode = has_tools && !functions.empty() ? "auto" : "none";
  std::string named;
  if (const auto c = body.find("tool_choice"); c != body.end() && !c->is_null()) {
    if (c->is_string()) {
      mode = c->get<std::string>();
      if (mode != "none" && mode != "auto" && mode != "required") {
        bad_param("tool_choice",
                  "'tool_choice' = '{}' must be none, auto, required or {{\"type\": \"function\", "
                  "\"function\": {{\"name\": ...}}}}",
                  mode);
      }
    } else if (c->is_object() && c->value("type", "") == "function" && c->contains("function") &&
               (*c)["function"].is_object() && (*c)["function"].contains("name") &&
               (*c)["function"]["name"].is_string()) {
      mode = "named";
      named = (*c)["function"]["name"].get<std::string>();
    } else {
      bad_param("tool_choice",
                "'tool_choice' must be none, auto, required or {{\"type\": \"function\", "
                "\"function\": {{\"name\": ...}}}}");
    }
    if ((mode == "required" || mode == "named") && functions.empty()) {
      bad_param("tool_choice", "'tool_choice' = {} needs 'tools'", c->dump());
    }
  }
  if (mode == "none" || functions.empty()) return nullptr;  // "auto" without tools calls nothing

  const Tokenizer* tokenizer = model.engine->tokenizer();
  if (tokenizer == nullptr) bad_param("tools", "the model '{}' has no tokenizer to write tool calls", model.name);
  const bool constrained = mode == "required" || mode == "named";
  if (constrained && params.structured_output.kind != StructuredOutput::Kind::None) {
    bad_param("tool_choice",
              "'tool_choice' = {} constrains the output to a call: it cannot also follow 'response_format'",
              mode == "named" ? "a named function" : "\"required\"");
  }
  if (constrained && params.ignore_eos) {
    bad_param("ignore_eos", "'ignore_eos' cannot go with tool_choice {}: the output ends with the call",
              mode == "named" ? "a named function" : "\"required\"");
  }
  tool_calls::CallSyntax syntax;
  if (mode == "named") {
    const auto f = std::find_if(functions.begin(), functions.end(), [&](const auto& fn) { return fn.first == named; });
    if (f == functions.end()) {
      bad_param("tool_choice", "'tool_choice' names the function '{}', which 'tools' does not define", named);
    }
    params.structured_output =
        constraint(arguments_schema(f->second), fmt::format("tools[{}].function.parameters", f - functions.begin()));
    syntax = {tool_calls::CallSyntax::Arguments, named};
  } else if (mode == "required") {
    // Each function's own schema first, so that a 400 names the tool at fault.
    for (size_t k = 0; k < functions.size(); ++k) {
      constraint(arguments_schema(functions[k].second), fmt::format("tools[{}].function.parameters", k));
    }
    params.structured_output = constraint(required_schema(functions, parallel), "tools");
    syntax = {tool_calls::CallSyntax::CallArray, ""};
  } else {
    if (!model.tool_call_format) {
      bad_param("tools",
                "the chat template of '{}' asks for no tool-call format izwi parses: start izwi-server with "
                "--tool-call-parser hermes|llama3_json|mistral, or ask for tool_choice \"required\" or a function",
                model.name);
    }
    syntax = tool_calls::CallSyntax::of(*model.tool_call_format);
  }
  const bool mistral_ids = model.tool_call_format == ToolCallFormat::Mistral;
  return std::shared_ptr<ChatToolCalls>(
      new ChatToolCalls(*tokenizer, std::move(syntax), parallel, params.stop, mistral_ids));
}

ChatToolCalls::ChatToolCalls(const Tokenizer& tokenizer, tool_calls::CallSyntax syntax, bool parallel,
                             std::vector<std::string> stop, bool mistral_ids)
    : tokenizer_(tokenizer),
      syntax_(std::move(syntax)),
      parallel_(parallel),
      stop_(std::move(stop)),
      mistral_ids_(mistral_ids),
      marker_ids_(marker_ids(tokenizer, syntax_)) {}

ChatToolCalls::Choice& ChatToolCalls::choice(int32_t index) {
  while (choices_.size() <= static_cast<size_t>(index)) {
    choices_.push_back({TextStream(tokenizer_, stop_, marker_ids_), tool_calls::StreamParser(syntax_), {}});
  }
  return choices_[static_cast<size_t>(index)];
}

bool ChatToolCalls::called(int32_t index) { return !choice(index).ids.empty(); }

std::string ChatToolCalls::text_of(Choice& c, const std::vector<int32_t>& tokens, bool finished) {
  std::string text;
  for (const int32_t id : tokens) text += c.text.push(id);
  if (finished) text += c.text.finish();
  return text;
}

const std::string& ChatToolCalls::id_of(Choice& c, size_t call, const std::string& own) {
  while (c.ids.size() <= call) {
    // Mistral's templates take back only ids of 9 letters and digits (as vLLM makes them).
    c.ids.push_back(!own.empty() ? own : mistral_ids_ ? random_alphanumeric(9) : "call_" + random_alphanumeric(24));
  }
  return c.ids[call];
}

void ChatToolCalls::answer(int32_t index, const std::vector<int32_t>& tokens, nlohmann::json& message) {
  Choice& c = choice(index);
  const tool_calls::ScanResult scan = tool_calls::scan_tool_calls(syntax_, text_of(c, tokens, true), /*final=*/true);
  nlohmann::json calls = nlohmann::json::array();
  for (size_t k = 0; k < scan.calls.size() && (parallel_ || k == 0); ++k) {
    const ToolCall& call = scan.calls[k];
    calls.push_back({{"id", id_of(c, k, call.id)},
                     {"type", "function"},
                     {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  }
  message["content"] = scan.content.empty() && !calls.empty() ? nlohmann::json(nullptr) : nlohmann::json(scan.content);
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
}

nlohmann::json ChatToolCalls::delta(int32_t index, const std::vector<int32_t>& tokens, bool finished) {
  Choice& c = choice(index);
  ToolCallStreamDelta d = c.parser.push(text_of(c, tokens, finished));
  if (finished) {
    ToolCallStreamDelta last = c.parser.finish();
    d.content += last.content;
    d.calls.insert(d.calls.end(), last.calls.begin(), last.calls.end());
  }
  nlohmann::json out = nlohmann::json::object();
  if (!d.content.empty()) out["content"] = d.content;
  nlohmann::json calls = nlohmann::json::array();
  for (const ToolCallDelta& piece : d.calls) {
    if (!parallel_ && piece.index > 0) continue;
    if (piece.first) {
      calls.push_back({{"index", piece.index},
                       {"id", id_of(c, static_cast<size_t>(piece.index), piece.id)},
                       {"type", "function"},
                       {"function", {{"name", piece.name}, {"arguments", piece.arguments}}}});
    } else {
      calls.push_back({{"index", piece.index}, {"function", {{"arguments", piece.arguments}}}});
    }
  }
  if (!calls.empty()) out["tool_calls"] = std::move(calls);
  return out;
}

std::string assistant_tool_calls(const nlohmann::json& calls, size_t index) {
  const std::string at = fmt::format("messages[{}].tool_calls", index);
  if (!calls.is_array()) bad_param(at, "'{}' must be an array", at);
  nlohmann::json out = calls;
  for (size_t k = 0; k < out.size(); ++k) {
    nlohmann::json& call = out[k];
    const std::string here = fmt::format("{}[{}]", at, k);
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) {
      bad_param(here + ".function", "'{}.function' must be an object", here);
    }
    nlohmann::json& function = call["function"];
    if (!function.contains("name") || !function["name"].is_string()) {
      bad_param(here + ".function.name", "'{}.function.name' must be a string", here);
    }
    if (const auto a = function.find("arguments"); a != function.end() && a->is_string()) {
      nlohmann::json parsed = nlohmann::json::parse(a->get<std::string>(), nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_object()) {
        bad_param(here + ".function.arguments", "'{}.function.arguments' must be a JSON object's text", here);
      }
      *a = std::move(parsed);
    }
  }
  return out.dump();
}

}  // namespace izwi::server
