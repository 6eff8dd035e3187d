// izwi-generate: run prompts through the engine and print the continuations.
//
//   izwi-generate --model DIR (--prompt-ids 1,2,3 | --prompt-ids-file FILE | --prompt TEXT |
//                              --messages FILE.json)
//                 [--min-tokens N] [--stop S]... [--sequential] [shared options: --help]
//
// Unset sampling flags take the model's generation_config.json defaults (greedy without one).
// The KV pool holds what these prompts need (not a server's pool) unless --kv-blocks or --config
// sets it. A prompt file holds one comma-separated prompt per line. All prompts go to the engine
// at once (continuous batching) unless --sequential. --prompt and --stop need a model folder with
// a tokenizer, which also adds the output text ("text" in JSON). --messages takes a conversation
// ({"messages": [...], "tools": [...], "kwargs": {...}}, examples/common/chat_file.h) rendered
// with the model folder's chat template. Errors go to stderr, exit code 1.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/chat_file.h"
#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/shared_options.h"
#include "izwi/engine.h"

namespace {

std::vector<std::vector<int32_t>> read_prompt_file(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot open prompt file '" + path + "'");
  std::vector<std::vector<int32_t>> prompts;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    prompts.push_back(izwi::cli::parse_id_list(line, path + ":" + std::to_string(line_number)));
  }
  if (prompts.empty()) throw std::invalid_argument("prompt file '" + path + "' holds no prompt");
  return prompts;
}

void print_result(size_t index, const izwi::Output &out, bool json, bool with_text) {
  if (json) {
    nlohmann::json line = {{"index", index},
                           {"tokens", out.tokens},
                           {"finish_reason", izwi::to_string(out.finish_reason)},
                           {"prefix_cache_hit_tokens", out.prefix_cache_hit_tokens},
                           {"ttft_ms", out.timings.ttft_ms}};
    if (with_text) line["text"] = out.text;
    std::cout << line.dump() << "\n";
    return;
  }
  if (with_text) std::cout << "[" << index << "] " << out.text << "\n";
  std::cout << "[" << index << "] ";
  for (size_t i = 0; i < out.tokens.size(); ++i) std::cout << (i ? "," : "") << out.tokens[i];
  std::cout << "  (" << izwi::to_string(out.finish_reason) << ", ttft " << out.timings.ttft_ms << " ms, "
            << out.prefix_cache_hit_tokens << " cached prompt tokens)\n";
}

/// The KV positions each request that runs at once may fill (prompt + new tokens), for a KV pool of
/// just this run's size; empty (the default pool) for a chat whose rendered length is unknown here.
std::vector<int64_t> kv_positions(const std::vector<izwi::Request> &requests, bool sequential) {
  std::vector<int64_t> positions;
  for (const izwi::Request &r : requests) {
    if (!r.messages.empty()) return {};
    const int64_t prompt = r.prompt.empty() ? static_cast<int64_t>(r.prompt_ids.size())
                                            : izwi::cli::text_positions(r.prompt) + izwi::cli::kTemplatePositions;
    positions.push_back(prompt + r.params.max_tokens);
  }
  if (sequential && !positions.empty()) return {*std::max_element(positions.begin(), positions.end())};
  return positions;
}

izwi::Output collect(izwi::StreamHandle &handle) {
  izwi::Output out;
  out.request_id = handle.id();
  while (std::optional<izwi::StreamChunk> chunk = handle.next()) {
    out.tokens.insert(out.tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
    out.text += chunk->text;
    if (chunk->finished) {
      if (chunk->finish_reason == izwi::FinishReason::Error) throw izwi::Error(chunk->error_code, chunk->error);
      out.finish_reason = chunk->finish_reason;
      out.timings = chunk->timings;
      out.prefix_cache_hit_tokens = chunk->prefix_cache_hit_tokens;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"Generate continuations of token-id prompts with izwi"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kEngineTool, "Model folder (config.json + safetensors)", "", "New tokens at most (default: 32)"});
  std::string prompt_ids, prompt_file, prompt_text, messages_file;
  izwi::GenerationParams params;
  bool sequential = false;
  auto *ids_opt = app.add_option("--prompt-ids", prompt_ids, "Prompt token ids, comma separated");
  auto *file_opt = app.add_option("--prompt-ids-file", prompt_file, "File with one comma-separated prompt per line");
  auto *text_opt = app.add_option("--prompt", prompt_text, "Prompt text (needs a tokenizer in the model folder)");
  auto *messages_opt =
      app.add_option("--messages", messages_file, "Conversation JSON file, rendered with the chat template");
  messages_opt->excludes(ids_opt)->excludes(file_opt)->excludes(text_opt);
  ids_opt->excludes(file_opt)->excludes(text_opt);
  file_opt->excludes(text_opt);
  app.add_option("--stop", params.stop, "Stop string (repeatable; needs a tokenizer)");
  app.add_option("--min-tokens", params.min_tokens, "Suppress EOS until this many tokens")->capture_default_str();
  app.add_flag("--sequential", sequential, "One prompt at a time instead of all at once");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-generate", [&] {
    if (ids_opt->count() == 0 && file_opt->count() == 0 && text_opt->count() == 0 && messages_opt->count() == 0) {
      throw std::invalid_argument(
          "one of --prompt-ids, --prompt-ids-file, "
          "--prompt or --messages is required");
    }
    params.max_tokens = shared.max_tokens.value_or(32);
    params.sampling = shared.sampling();
    params.seed = shared.seed;
    std::vector<izwi::Request> requests;
    if (messages_opt->count() > 0) {
      izwi::cli::ChatFile chat = izwi::cli::read_chat_file(messages_file);
      izwi::Request &r = requests.emplace_back();
      r.messages = std::move(chat.messages);
      r.chat = std::move(chat.options);
    } else if (text_opt->count() > 0) {
      requests.emplace_back().prompt = prompt_text;
    } else {
      for (std::vector<int32_t> &ids :
           file_opt->count() > 0
               ? read_prompt_file(prompt_file)
               : std::vector<std::vector<int32_t>>{izwi::cli::parse_id_list(prompt_ids, "--prompt-ids")}) {
        requests.emplace_back().prompt_ids = std::move(ids);
      }
    }
    for (izwi::Request &r : requests) r.params = params;
    const auto engine = izwi::cli::load_engine(
        shared, izwi::cli::engine_config(shared, kv_positions(requests, sequential)), izwi::cli::ModelUse::Text);
    const bool with_text = engine->model_info().has_tokenizer;

    if (sequential) {
      for (size_t i = 0; i < requests.size(); ++i) {
        print_result(i, engine->generate(requests[i]), shared.json, with_text);
      }
    } else {
      // Submit everything first so the scheduler batches the prompts, then read
      // in order.
      std::vector<izwi::StreamHandle> handles;
      for (const izwi::Request &r : requests) handles.push_back(engine->generate_streaming(r));
      for (size_t i = 0; i < handles.size(); ++i) print_result(i, collect(handles[i]), shared.json, with_text);
    }
    return 0;
  });
}
