#include "server/text_endpoints.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>

#include "server/api_error.h"
#include "server/chat_tools.h"
#include "server/json_fields.h"
#include "server/response_format.h"

namespace izwi::server {

namespace {

std::string next_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}-izwi{}", prefix, ++counter);
}

/// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
std::string message_content(const nlohmann::json& message, size_t index) {
  const std::string param = fmt::format("messages[{}].content", index);
  const auto it = message.find("content");
  if (it == message.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) bad_param(param, "'{}' must be a string or an array of text parts", param);
  std::string text;
  for (size_t p = 0; p < it->size(); ++p) {
    const nlohmann::json& part = (*it)[p];
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string()) {
      bad_param(fmt::format("{}[{}]", param, p), "'{}[{}]' must be a text part (this server takes text only)", param,
                p);
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

std::vector<ChatMessage> parse_messages(const nlohmann::json& body) {
  const auto it = body.find("messages");
  if (it == body.end() || it->is_null()) bad_param("messages", "'messages' is required");
  if (!it->is_array() || it->empty()) bad_param("messages", "'messages' must be a non-empty array");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& message = (*it)[i];
    if (!message.is_object()) bad_param(fmt::format("messages[{}]", i), "'messages[{}]' must be an object", i);
    const std::string role_param = fmt::format("messages[{}].role", i);
    const auto role = message.find("role");
    if (role == message.end() || !role->is_string()) bad_param(role_param, "'{}' must be a string", role_param);
    std::string name = role->get<std::string>();
    if (name != "system" && name != "developer" && name != "user" && name != "assistant" && name != "tool") {
      bad_param(role_param, "'{}' = '{}' must be system, developer, user, assistant or tool", role_param, name);
    }
    if (name == "developer") name = "system";  // OpenAI's newer name for the system role
    ChatMessage m{name, message_content(message, i)};
    // What chat templates read besides (docs/chat_templates.md).
    const auto text_field = [&](const char* key) -> std::string {
      const auto f = message.find(key);
      if (f == message.end() || f->is_null()) return {};
      if (!f->is_string())
        bad_param(fmt::format("messages[{}].{}", i, key), "'messages[{}].{}' must be a string", i, key);
      return f->get<std::string>();
    };
    m.reasoning_content = text_field("reasoning_content");
    m.tool_call_id = text_field("tool_call_id");
    m.name = text_field("name");
    if (const auto calls = message.find("tool_calls"); calls != message.end() && !calls->is_null()) {
      m.tool_calls = assistant_tool_calls(*calls, i);
    }
    messages.push_back(std::move(m));
  }
  return messages;
}

/// The template options of a chat request: `tools`, and vLLM's `chat_template_kwargs`.
ChatOptions parse_chat_options(const nlohmann::json& body) {
  ChatOptions options;
  if (const auto tools = body.find("tools"); tools != body.end() && !tools->is_null()) {
    if (!tools->is_array()) bad_param("tools", "'tools' must be an array");
    for (size_t i = 0; i < tools->size(); ++i) {
      if (!(*tools)[i].is_object()) bad_param(fmt::format("tools[{}]", i), "'tools[{}]' must be an object", i);
    }
    options.tools = tools->dump();
  }
  if (const auto kwargs = body.find("chat_template_kwargs"); kwargs != body.end() && !kwargs->is_null()) {
    if (!kwargs->is_object()) bad_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    // What the template is rendered with already; transformers refuses these as extra arguments.
    for (const char* reserved : {"messages", "tools", "documents", "add_generation_prompt"}) {
      if (kwargs->contains(reserved)) {
        bad_param("chat_template_kwargs", "'chat_template_kwargs' must not set '{}' (the request gives it)", reserved);
      }
    }
    options.template_kwargs = kwargs->dump();
  }
  return options;
}

/// The prompt of /v1/completions: a string or an array of token ids.
std::vector<int32_t> parse_prompt(const nlohmann::json& body, const ServedModel& model, std::string* text) {
  const auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) bad_param("prompt", "'prompt' is required");
  if (it->is_string()) {
    *text = it->get<std::string>();
    const Tokenizer* tokenizer = model.engine->tokenizer();
    if (tokenizer == nullptr) {
      bad_param("prompt", "the model '{}' has no tokenizer: give the prompt as an array of token ids", model.name);
    }
    return tokenizer->encode(*text, /*add_special_tokens=*/true);
  }
  if (it->is_array() && !it->empty() && (*it)[0].is_string()) {
    if (it->size() == 1) {
      nlohmann::json single = body;
      single["prompt"] = (*it)[0];
      return parse_prompt(single, model, text);
    }
    bad_param("prompt", "'prompt' holds {} prompts; this server takes one per request", it->size());
  }
  if (!it->is_array() || it->empty())
    bad_param("prompt", "'prompt' must be a string or a non-empty array of token ids");
  std::vector<int32_t> ids;
  const int32_t vocab = model.engine->model_info().vocab_size;
  for (size_t i = 0; i < it->size(); ++i) {
    const nlohmann::json& id = (*it)[i];
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab) {
      bad_param("prompt", "'prompt[{}]' must be a token id in [0, {})", i, vocab);
    }
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return ids;
}

void reject_unsupported(const nlohmann::json& body, int32_t n) {
  // best_of = n (OpenAI's default) returns every choice generated; more would rank them.
  if (const auto best_of = integer_field(body, "best_of", 1, kMaxChoices); best_of && *best_of != n) {
    bad_param("best_of", "'best_of' = {} is not supported (only best_of = n = {})", *best_of, n);
  }
  for (const char* penalty : {"presence_penalty", "frequency_penalty"}) {
    if (const auto value = number_field(body, penalty, -2.0, 2.0); value && *value != 0.0) {
      bad_param(penalty, "'{}' is not supported (use repetition_penalty)", penalty);
    }
  }
}

/// OpenAI's log probability fields: completions' `logprobs` (an integer in [0, 20]); chat's
/// `logprobs` (a boolean) with `top_logprobs` (an integer in [0, 20]).
void parse_logprobs(const nlohmann::json& body, TextJob& job) {
  GenerationParams& p = job.request.params;
  if (!job.chat) {
    p.logprobs = integer_field(body, "logprobs", 0, kMaxLogprobs);
    job.logprobs = p.logprobs.has_value();
    if (job.logprobs && job.echo) p.prompt_logprobs = p.logprobs;
    return;
  }
  job.logprobs = bool_field(body, "logprobs").value_or(false);
  const std::optional<int64_t> top = integer_field(body, "top_logprobs", 0, kMaxLogprobs);
  if (top && !job.logprobs) bad_param("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  if (job.logprobs) p.logprobs = static_cast<int32_t>(top.value_or(0));
}

}  // namespace

TextJob parse_text_request(const nlohmann::json& body, const ServedModels& models, bool chat) {
  TextJob job;
  job.model = &models.get(required_string(body, "model"));
  const ModelInfo& info = job.model->engine->model_info();
  require_kind(*job.model, "text", chat ? "/v1/chat/completions" : "/v1/completions");
  GenerationParams& p = job.request.params;
  p.n = static_cast<int32_t>(integer_field(body, "n", 1, kMaxChoices).value_or(1));
  job.text_offsets.assign(static_cast<size_t>(p.n), 0);
  reject_unsupported(body, p.n);
  job.chat = chat;
  job.stream = bool_field(body, "stream").value_or(false);
  if (const auto options = body.find("stream_options"); options != body.end() && !options->is_null()) {
    if (!options->is_object()) bad_param("stream_options", "'stream_options' must be an object");
    job.include_usage = bool_field(*options, "include_usage").value_or(false);
  }
  if (chat) {
    const Tokenizer* tokenizer = job.model->engine->tokenizer();
    std::vector<ChatMessage> messages = parse_messages(body);
    if (tokenizer == nullptr) {
      bad_param("model", "the model '{}' has no tokenizer to render messages: use /v1/completions with token ids",
                job.model->name);
    }
    try {
      job.request.prompt_ids = tokenizer->encode_chat(messages, parse_chat_options(body));
    } catch (const Error& e) {
      bad_param("messages", "{}", e.what());
    }
  } else {
    job.request.prompt_ids = parse_prompt(body, *job.model, &job.prompt_text);
    job.echo = bool_field(body, "echo").value_or(false);
    job.ids_as_text = job.model->engine->tokenizer() == nullptr;
    if (job.ids_as_text) job.prompt_text = token_ids_text(job.request.prompt_ids);
  }

  const EngineConfig& config = job.model->engine->config();
  const int32_t context = config.max_seq_len > 0 ? config.max_seq_len : info.max_positions;
  const int32_t room = context - job.prompt_tokens();
  if (room < 1) {
    bad_param(chat ? "messages" : "prompt", "the prompt has {} tokens; the context holds {}", job.prompt_tokens(),
              context);
  }
  // Completions take max_tokens 0 with echo: the prompt is scored, nothing generated
  // (lm-evaluation-harness's loglikelihood requests).
  const int64_t least = chat ? 1 : 0;
  std::optional<int64_t> max_tokens = integer_field(body, "max_completion_tokens", least, INT32_MAX);
  if (!max_tokens) max_tokens = integer_field(body, "max_tokens", least, INT32_MAX);
  if (max_tokens && *max_tokens > room) {
    bad_param(body.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens",
              "prompt ({} tokens) + max_tokens ({}) exceeds the model's context of {} tokens", job.prompt_tokens(),
              *max_tokens, context);
  }
  p.max_tokens = static_cast<int32_t>(max_tokens.value_or(room));  // as vLLM: the rest of the context
  parse_logprobs(body, job);
  if (p.max_tokens == 0) {
    if (!job.echo) {
      bad_param(body.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens",
                "max_tokens = 0 needs 'echo': true (the answer is the prompt alone)");
    }
    if (!p.prompt_logprobs) p.prompt_logprobs = 0;  // the engine's way to end right after the prompt
  }
  // OpenAI's default temperature is 1; the other fields, when absent, take the model's defaults.
  SamplingParams& sampling = p.sampling;
  sampling.temperature = static_cast<float>(number_field(body, "temperature", 0.0, 2.0).value_or(1.0));
  if (const auto top_p = number_field(body, "top_p", 0.0, 1.0)) {
    if (*top_p == 0.0) bad_param("top_p", "'top_p' must be > 0");
    sampling.top_p = static_cast<float>(*top_p);
  }
  if (const auto top_k = integer_field(body, "top_k", -1, INT32_MAX)) {   // vLLM's extension
    sampling.top_k = static_cast<int32_t>(std::max<int64_t>(*top_k, 0));  // -1: off, as in vLLM
  }
  if (const auto penalty = number_field(body, "repetition_penalty", 0.01, 100.0)) {
    sampling.repetition_penalty = static_cast<float>(*penalty);
  }
  p.ignore_eos = bool_field(body, "ignore_eos").value_or(false);  // vLLM's extensions, as the engine has them
  p.min_tokens = static_cast<int32_t>(integer_field(body, "min_tokens", 0, p.max_tokens).value_or(0));
  if (const auto seed = integer_field(body, "seed", std::numeric_limits<int64_t>::min(), INT64_MAX)) {
    p.seed = static_cast<uint64_t>(*seed);
  }
  p.stop = string_or_strings(body, "stop", 4);
  const Tokenizer* tokenizer = job.model->engine->tokenizer();
  if (!p.stop.empty() && tokenizer == nullptr) {
    bad_param("stop", "the model '{}' has no tokenizer to match stop strings", job.model->name);
  }
  for (const std::string& stop : p.stop) {
    if (stop.empty()) bad_param("stop", "'stop' strings must not be empty");
    // One that takes more tokens than the context can never be generated, and each token's check
    // costs its length. A token is at least one byte, so short ones need no count.
    if (stop.size() > static_cast<size_t>(context)) {
      const size_t tokens = tokenizer->encode(stop, /*add_special_tokens=*/false).size();
      if (tokens > static_cast<size_t>(context)) {
        bad_param("stop", "a 'stop' string is {} tokens, longer than the model's context of {}", tokens, context);
      }
    }
  }
  p.structured_output = parse_response_format(body, p, tokenizer != nullptr);
  if (chat) job.tools = ChatToolCalls::from_request(body, *job.model, p);
  job.id = next_id(chat ? "chatcmpl" : "cmpl");
  job.created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return job;
}

nlohmann::json finish_reason_json(FinishReason reason) {
  switch (reason) {
    case FinishReason::Eos:
    case FinishReason::Stop:
      return "stop";
    case FinishReason::Length:
      return "length";
    case FinishReason::None:
      return nullptr;
    default:
      return "abort";  // vLLM's name for a request that ended early (abort, shutdown, error)
  }
}

namespace {

nlohmann::json usage(const TextJob& job, int32_t completion_tokens) {
  return {{"prompt_tokens", job.prompt_tokens()},
          {"completion_tokens", completion_tokens},
          {"total_tokens", job.prompt_tokens() + completion_tokens}};
}

nlohmann::json envelope(const TextJob& job, bool chunk) {
  return {{"id", job.id},
          {"object", job.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", job.created},
          {"model", job.model->name},
          {"system_fingerprint", nullptr}};
}

}  // namespace

std::string token_ids_text(const std::vector<int32_t>& ids) {
  std::string text;
  for (const int32_t id : ids) text += fmt::format("token_id:{}", id);
  return text;
}

namespace {

// A token as the logprobs name it: its text, or "token_id:N" for a model without a tokenizer.
std::string token_name(const TextJob& job, int32_t id) {
  const Tokenizer* tokenizer = job.model->engine->tokenizer();
  return tokenizer == nullptr ? fmt::format("token_id:{}", id) : tokenizer->decode({id});
}

nlohmann::json utf8_bytes(const std::string& s) {
  nlohmann::json bytes = nlohmann::json::array();
  for (const char c : s) bytes.push_back(static_cast<int>(static_cast<unsigned char>(c)));
  return bytes;
}

// Completions' shape: parallel arrays; text_offset counts the token names' bytes before each one
// (as vLLM does). `first_prompt_id` (echo) comes first, with null values: nothing predicts it.
nlohmann::json completion_logprobs(TextJob& job, int32_t index, const std::optional<int32_t>& first_prompt_id,
                                   const std::vector<TokenLogprob>& prompt,
                                   const std::vector<TokenLogprob>& generated) {
  nlohmann::json out = {{"tokens", nlohmann::json::array()},
                        {"token_logprobs", nlohmann::json::array()},
                        {"top_logprobs", nlohmann::json::array()},
                        {"text_offset", nlohmann::json::array()}};
  const auto add = [&](const std::string& name, nlohmann::json logprob, nlohmann::json top) {
    out["tokens"].push_back(name);
    out["token_logprobs"].push_back(std::move(logprob));
    out["top_logprobs"].push_back(std::move(top));
    int64_t& offset = job.text_offsets.at(static_cast<size_t>(index));
    out["text_offset"].push_back(offset);
    offset += static_cast<int64_t>(name.size());
  };
  if (first_prompt_id) add(token_name(job, *first_prompt_id), nullptr, nullptr);
  for (const std::vector<TokenLogprob>* list : {&prompt, &generated}) {
    for (const TokenLogprob& t : *list) {
      nlohmann::json top = nlohmann::json::object();
      for (const auto& [id, logprob] : t.top) {
        const std::string name = token_name(job, id);
        if (!top.contains(name)) top[name] = logprob;  // two ids of one text: the likelier one
      }
      add(token_name(job, t.id), t.logprob, std::move(top));
    }
  }
  return out;
}

// Chat's shape: `content`, one entry per generated token with its bytes and top alternatives.
nlohmann::json chat_logprobs(const TextJob& job, const std::vector<TokenLogprob>& generated) {
  const Tokenizer* tokenizer = job.model->engine->tokenizer();
  const auto entry = [&](int32_t id, float logprob) {
    const std::string bytes = tokenizer != nullptr ? tokenizer->token_bytes(id) : token_name(job, id);
    return nlohmann::json{{"token", token_name(job, id)}, {"logprob", logprob}, {"bytes", utf8_bytes(bytes)}};
  };
  nlohmann::json content = nlohmann::json::array();
  for (const TokenLogprob& t : generated) {
    nlohmann::json e = entry(t.id, t.logprob);
    e["top_logprobs"] = nlohmann::json::array();
    for (const auto& [id, logprob] : t.top) e["top_logprobs"].push_back(entry(id, logprob));
    content.push_back(std::move(e));
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

// The choice's `logprobs` for these tokens (null when not asked); `first` adds the echoed prompt's.
nlohmann::json choice_logprobs(TextJob& job, int32_t index, const std::vector<TokenLogprob>& prompt,
                               const std::vector<TokenLogprob>& generated, bool first) {
  if (!job.logprobs) return nullptr;
  if (job.chat) return chat_logprobs(job, generated);
  const bool echo = first && job.echo;
  return completion_logprobs(job, index, echo ? std::optional<int32_t>(job.request.prompt_ids[0]) : std::nullopt,
                             echo ? prompt : std::vector<TokenLogprob>{}, generated);
}

}  // namespace

nlohmann::json text_response(TextJob& job, const Output& whole) {
  nlohmann::json out = envelope(job, false);
  out["choices"] = nlohmann::json::array();
  int32_t completion_tokens = 0;
  for (const Output& output : whole.choices.empty() ? std::vector<Output>{whole} : whole.choices) {
    nlohmann::json choice = {
        {"index", output.index},
        {"finish_reason", finish_reason_json(output.finish_reason)},
        {"logprobs", choice_logprobs(job, output.index, output.prompt_logprobs, output.logprobs, true)}};
    if (job.chat) {
      choice["message"] = {{"role", "assistant"}, {"content", output.text}, {"refusal", nullptr}};
      if (job.tools) {
        job.tools->answer(output.index, output.tokens, choice["message"]);
        if (job.tools->called(output.index) && choice["finish_reason"] == "stop")
          choice["finish_reason"] = "tool_calls";
      }
    } else {
      const std::string text = job.ids_as_text ? token_ids_text(output.tokens) : output.text;
      choice["text"] = job.echo ? job.prompt_text + text : text;
      if (job.ids_as_text) choice["token_ids"] = output.tokens;
    }
    out["choices"].push_back(std::move(choice));
    completion_tokens += static_cast<int32_t>(output.tokens.size());
  }
  out["usage"] = usage(job, completion_tokens);  // as OpenAI: the prompt once, every choice's tokens
  return out;
}

nlohmann::json text_chunk(TextJob& job, const StreamChunk& chunk, bool first) {
  nlohmann::json out = envelope(job, true);
  nlohmann::json choice = {
      {"index", chunk.index},
      {"finish_reason", finish_reason_json(chunk.finish_reason)},
      {"logprobs", choice_logprobs(job, chunk.index, chunk.prompt_logprobs, chunk.logprobs, first)}};
  const std::string delta = job.ids_as_text ? token_ids_text(chunk.tokens) : chunk.text;
  if (job.chat) {
    choice["delta"] = nlohmann::json::object();
    if (job.tools) {  // the text as parsed: calls held back and sent as delta.tool_calls
      choice["delta"] = job.tools->delta(chunk.index, chunk.tokens, chunk.finished);
      if (job.tools->called(chunk.index) && choice["finish_reason"] == "stop") choice["finish_reason"] = "tool_calls";
    } else if (!delta.empty() || first) {
      choice["delta"]["content"] = delta;
    }
    if (first) choice["delta"]["role"] = "assistant";
  } else {
    choice["text"] = first && job.echo ? job.prompt_text + delta : delta;
    if (job.ids_as_text) choice["token_ids"] = chunk.tokens;
  }
  out["choices"] = nlohmann::json::array({choice});
  if (job.include_usage) out["usage"] = nullptr;
  return out;
}

nlohmann::json usage_chunk(const TextJob& job, int32_t completion_tokens) {
  nlohmann::json out = envelope(job, true);
  out["choices"] = nlohmann::json::array();
  out["usage"] = usage(job, completion_tokens);
  return out;
}

}  // namespace izwi::server
