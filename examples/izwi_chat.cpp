// izwi-chat: an interactive chat with a text model, replies streamed as they are generated.
//
//   izwi-chat --model DIR [--system TEXT] [--messages FILE.json] [--template-kwargs JSON]
//             [--max-tokens N] [--temperature T] [--top-p P] [--seed S]
//
// Each line typed is a user turn; the whole conversation is rendered with the model folder's
// chat template (its own Jinja template, else the built-in ChatML, Llama 3 or Mistral format) and
// sent as one request, so the prefix cache serves the earlier turns. --messages starts from a
// conversation file ({"messages": [...], "tools": [...], "kwargs": {...}}, the format of
// izwi-tokenize --chat); --template-kwargs passes template variables, e.g. '{"enable_thinking":
// false}'. An empty line or end of input quits.

#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/chat_file.h"
#include "common/cli_main.h"
#include "izwi/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Chat with a text model through izwi"};
  std::string model_dir, system_prompt, messages_file, template_kwargs;
  izwi::GenerationParams params;
  params.max_tokens = 512;
  float temperature = 0.7f, top_p = 0.9f;
  uint64_t seed = 0;
  app.add_option("--model", model_dir, "Model folder (config.json, safetensors, tokenizer)")->required();
  app.add_option("--system", system_prompt, "System message");
  app.add_option("--messages", messages_file, "Conversation JSON file to start from");
  app.add_option("--template-kwargs", template_kwargs, "Chat template variables, a JSON object");
  app.add_option("--max-tokens", params.max_tokens, "Reply length at most")->capture_default_str();
  app.add_option("--temperature", temperature, "0 = greedy")->capture_default_str();
  app.add_option("--top-p", top_p, "Nucleus mass")->capture_default_str();
  auto* seed_opt = app.add_option("--seed", seed, "Sampling seed");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-chat", [&] {
    if (seed_opt->count() > 0) params.seed = seed;
    params.sampling.temperature = temperature;
    params.sampling.top_p = top_p;
    izwi::Engine engine(model_dir);
    if (engine.tokenizer() == nullptr) {
      throw izwi::Error(izwi::ErrorCode::InvalidArgument, "model folder '" + model_dir + "' has no tokenizer");
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
    std::string line;
    while (std::cout << "> " << std::flush && std::getline(std::cin, line) && !line.empty()) {
      conversation.push_back({"user", line});
      izwi::Request request;
      request.messages = conversation;
      request.chat = chat;
      request.params = params;
      izwi::StreamHandle reply = engine.generate_streaming(request);
      std::string text;
      while (std::optional<izwi::StreamChunk> chunk = reply.next()) {
        std::cout << chunk->text << std::flush;
        text += chunk->text;
        if (chunk->finish_reason == izwi::FinishReason::Error) throw izwi::Error(chunk->error_code, chunk->error);
      }
      std::cout << "\n";
      conversation.push_back({"assistant", text});
    }
    return 0;
  });
}
