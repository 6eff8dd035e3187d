// izwi-chat: an interactive chat with a text model, replies streamed as they are generated.
//
//   izwi-chat --model DIR [--system TEXT] [--messages FILE.json] [--template-kwargs JSON]
//             [shared options: --help]
//
// Each line typed is a user turn; the whole conversation is rendered with the model folder's
// chat template (its own Jinja template, else the built-in ChatML, Llama 3 or Mistral format) and
// sent as one request, so the prefix cache serves the earlier turns. --messages starts from a
// conversation file ({"messages": [...], "tools": [...], "kwargs": {...}}, the format of
// izwi-tokenize --chat); --template-kwargs passes template variables, e.g. '{"enable_thinking":
// false}'. An empty line or end of input quits. Unset sampling flags take the model's
// generation_config.json defaults. The KV pool holds one conversation of 4096 positions plus a
// reply unless --kv-blocks or --config sets it. With --json there is no "> " prompt and each reply is one line
// {"text":"...","tokens":[...],"finish_reason":"stop"}.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/chat_file.h"
#include "common/cli_main.h"
#include "common/engine_options.h"
#include "common/shared_options.h"
#include "izwi/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Chat with a text model through izwi"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(app, shared,
                                {izwi::cli::kEngineTool, "Model folder (config.json, safetensors, tokenizer)", "",
                                 "Reply length at most (default: 512)"});
  std::string system_prompt, messages_file, template_kwargs;
  app.add_option("--system", system_prompt, "System message");
  app.add_option("--messages", messages_file, "Conversation JSON file to start from");
  app.add_option("--template-kwargs", template_kwargs, "Chat template variables, a JSON object");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-chat", [&] {
    izwi::GenerationParams params;
    params.max_tokens = shared.max_tokens.value_or(512);
    params.sampling = shared.sampling();
    params.seed = shared.seed;
    const auto engine = izwi::cli::load_engine(
        shared, izwi::cli::engine_config(shared, {izwi::cli::kConversationPositions + params.max_tokens}),
        izwi::cli::ModelUse::Text);
    if (engine->tokenizer() == nullptr) {
      throw izwi::Error(izwi::ErrorCode::InvalidArgument, "model folder '" + shared.model + "' has no tokenizer");
    }
    std::vector<izwi::ChatMessage> conversation;
    izwi::ChatOptions chat;
    if (!messages_file.empty()) {
      izwi::cli::ChatFile file = izwi::cli::read_chat_file(messages_file);
      conversation = std::move(file.messages);
      chat = std::move(file.options);
    }
    if (!template_kwargs.empty()) chat.template_kwargs = template_kwargs;
    if (!system_prompt.empty()) conversation.insert(conversation.begin(), {"system", system_prompt});
    const bool json = shared.json;
    std::string line;
    while ((json || std::cout << "> " << std::flush) && std::getline(std::cin, line) && !line.empty()) {
      conversation.push_back({"user", line});
      izwi::Request request;
      request.messages = conversation;
      request.chat = chat;
      request.params = params;
      izwi::StreamHandle reply = engine->generate_streaming(request);
      izwi::Output out;
      while (std::optional<izwi::StreamChunk> chunk = reply.next()) {
        if (!json) std::cout << chunk->text << std::flush;
        out.text += chunk->text;
        out.tokens.insert(out.tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
        if (chunk->finish_reason == izwi::FinishReason::Error) throw izwi::Error(chunk->error_code, chunk->error);
        if (chunk->finished) out.finish_reason = chunk->finish_reason;
      }
      if (json) {
        std::cout << nlohmann::json{{"text", out.text},
                                    {"tokens", out.tokens},
                                    {"finish_reason", izwi::to_string(out.finish_reason)}}
                         .dump()
                  << "\n";
      } else {
        std::cout << "\n";
      }
      conversation.push_back({"assistant", out.text});
    }
    return 0;
  });
}
