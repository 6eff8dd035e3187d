// izwi-tokenize: text -> token ids and ids -> text with a model folder's tokenizer.
//
//   izwi-tokenize --model DIR (--text S | --text-file F) [--add-special-tokens] [--json]
//   izwi-tokenize --model DIR --decode 1,2,3 [--skip-special-tokens] [--json]
//   izwi-tokenize --model DIR --chat FILE.json [--no-generation-prompt] [--json]
//
// --chat renders a conversation ({"messages": [...], "tools": [...], "kwargs": {...}}, see
// examples/common/chat_file.h) with the folder's chat template and prints the prompt text, or
// {"text": prompt, "ids": [...]} with --json.
// Encoding prints one line per text: comma-separated ids, or {"ids":[...]} with --json. A text
// file holds one text per line, in which "\n" stands for a newline and "\\" for a backslash.
// --tokenizer is another name of --model. Errors go to stderr with exit code 1.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "common/chat_file.h"
#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/shared_options.h"
#include "izwi/tokenizer.h"

namespace {

std::string unescape(const std::string& line, const std::string& where) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\') {
      out += line[i];
      continue;
    }
    const char next = i + 1 < line.size() ? line[i + 1] : '\0';
    if (next != 'n' && next != '\\') {
      throw std::invalid_argument(where + ": unknown escape '\\" + std::string(next ? 1 : 0, next) +
                                  "' (only \\n and \\\\ are escapes)");
    }
    out += next == 'n' ? '\n' : '\\';
    ++i;
  }
  return out;
}

std::vector<std::string> read_texts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open text file '" + path + "'");
  std::vector<std::string> texts;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    texts.push_back(unescape(line, path + ":" + std::to_string(number)));
  return texts;
}

void print_ids(const std::vector<int32_t>& ids, bool json) {
  if (json) {
    std::cout << nlohmann::json{{"ids", ids}}.dump() << "\n";
    return;
  }
  for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? "," : "") << ids[i];
  std::cout << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Encode text to token ids or decode ids to text with a model's tokenizer"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(app, shared,
                                {izwi::cli::kModelOption | izwi::cli::kOutputOptions,
                                 "Model folder (tekken.json or tokenizer.json, plus configs)", "--tokenizer"});
  std::string text, text_file, decode_ids, chat_file;
  bool add_special = false, skip_special = false, no_generation_prompt = false;
  auto* text_opt = app.add_option("--text", text, "Text to encode");
  auto* file_opt = app.add_option("--text-file", text_file, "File with one text per line (\\n and \\\\ escapes)");
  auto* decode_opt = app.add_option("--decode", decode_ids, "Token ids to decode, comma separated");
  auto* chat_opt = app.add_option("--chat", chat_file, "Conversation JSON file to render with the chat template");
  text_opt->excludes(file_opt)->excludes(decode_opt)->excludes(chat_opt);
  file_opt->excludes(decode_opt)->excludes(chat_opt);
  decode_opt->excludes(chat_opt);
  app.add_flag("--no-generation-prompt", no_generation_prompt, "With --chat: no assistant header at the end");
  app.add_flag("--add-special-tokens", add_special, "Add BOS (or what the post-processor adds) when encoding");
  app.add_flag("--skip-special-tokens", skip_special, "Leave special tokens out when decoding");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-tokenize", [&] {
    if (text_opt->count() + file_opt->count() + decode_opt->count() + chat_opt->count() == 0) {
      throw std::invalid_argument("one of --text, --text-file, --decode or --chat is required");
    }
    izwi::cli::apply_log_level(shared);
    const bool json = shared.json;
    const izwi::Tokenizer tokenizer = izwi::Tokenizer::from_dir(shared.model);
    if (chat_opt->count() > 0) {
      izwi::cli::ChatFile chat = izwi::cli::read_chat_file(chat_file);
      chat.options.add_generation_prompt = !no_generation_prompt;
      const std::string prompt = tokenizer.apply_chat_template(chat.messages, chat.options);
      if (json) {
        std::cout << nlohmann::json{{"text", prompt}, {"ids", tokenizer.encode(prompt, false)}}.dump() << "\n";
      } else {
        std::cout << prompt << "\n";
      }
    } else if (decode_opt->count() > 0) {
      const std::string decoded = tokenizer.decode(izwi::cli::parse_id_list(decode_ids, "--decode"), skip_special);
      std::cout << (json ? nlohmann::json{{"text", decoded}}.dump() : decoded) << "\n";
    } else if (file_opt->count() > 0) {
      const std::vector<std::string> texts = read_texts(text_file);
      for (size_t i = 0; i < texts.size(); ++i) {
        try {
          print_ids(tokenizer.encode(texts[i], add_special), json);
        } catch (const izwi::Error& e) {
          throw izwi::Error(e.code(), text_file + ":" + std::to_string(i + 1) + ": " + e.what());
        }
      }
    } else {
      print_ids(tokenizer.encode(text, add_special), json);
    }
    return 0;
  });
}
