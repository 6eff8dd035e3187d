// Chat prompts of each family, exact strings, and how the family is chosen.

#include <gtest/gtest.h>

#include <fstream>

#include "common/error_message.h"
#include "common/tokenizer_files.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

const std::vector<ChatMessage> kConversation = {
    {"system", "You are terse."}, {"user", "Hi there"}, {"assistant", "Hello."}, {"user", "  Bye  "}};

nlohmann::json fixture_json(const std::string& name) {
  std::ifstream in(testing::tokenizer_fixture(name) + "/tokenizer.json");
  return nlohmann::json::parse(in);
}

TEST(ChatTemplate, ChatMLFromTheVocabularyWhenNoTemplateIsGiven) {
  const Tokenizer t = Tokenizer::from_dir(testing::tokenizer_fixture("tokenizer-qwen2-style"));
  ASSERT_EQ(t.chat_template_family(), ChatTemplateFamily::ChatML);
  EXPECT_EQ(t.apply_chat_template(kConversation),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\n  Bye  <|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(t.apply_chat_template({{"user", "Say hi"}}, ChatOptions{false}), "<|im_start|>user\nSay hi<|im_end|>\n");
  // The parity fixture's case of the same prompt: special tokens become their ids.
  const std::vector<int32_t> ids = t.encode_chat({{"user", "Say hi"}});
  EXPECT_EQ(ids, t.encode("<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n"));
  EXPECT_EQ(ids.front(), 1);
}

TEST(ChatTemplate, TheFoldersJinjaTemplateIsRendered) {
  // LFM2's template begins with {{- bos_token -}}; this one has no generation prompt, so none is added.
  testing::TempDir dir;
  const nlohmann::json config = {
      {"bos_token", "<|endoftext|>"},
      {"chat_template",
       "{{- bos_token -}}{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\\n' "
       "+ message['content'] + '<|im_end|>\\n' -}}{%- endfor -%}"}};
  const Tokenizer t =
      Tokenizer::from_dir(testing::write_tokenizer_dir(dir, fixture_json("tokenizer-qwen2-style"), config));
  EXPECT_EQ(t.chat_template_family(), ChatTemplateFamily::ChatML);
  EXPECT_EQ(t.apply_chat_template({{"user", "Hi"}}), "<|endoftext|><|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(t.encode_chat({{"user", "Hi"}}).front(), 0);
}

TEST(ChatTemplate, Llama3FromTheJinjaText) {
  testing::TempDir dir;
  nlohmann::json j = fixture_json("tokenizer-llama3-style");
  int32_t id = 3000;
  for (const char* name : {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}) {
    j["added_tokens"].push_back({{"id", id++},
                                 {"content", name},
                                 {"single_word", false},
                                 {"lstrip", false},
                                 {"rstrip", false},
                                 {"normalized", false},
                                 {"special", true}});
  }
  const nlohmann::json config = {
      {"bos_token", "<|begin_of_text|>"},
      {"eos_token", "<|eot_id|>"},
      {"chat_template",
       "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
       "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim "
       "+ '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
       "{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant"
       "<|end_header_id|>\\n\\n' }}{% endif %}"}};
  const Tokenizer t = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, j, config));
  ASSERT_EQ(t.chat_template_family(), ChatTemplateFamily::Llama3);
  EXPECT_FALSE(t.chat_template().empty());
  EXPECT_EQ(t.apply_chat_template(kConversation),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  const std::vector<int32_t> ids = t.encode_chat({{"user", "Hi"}});
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + 2), (std::vector<int32_t>{3000, 3001}));
  EXPECT_EQ(t.eos_ids(), (std::vector<int32_t>{3003}));
}

TEST(ChatTemplate, MistralForTekkenWithSystemPrependedToTheFirstUserTurn) {
  const Tokenizer t = Tokenizer::from_dir(testing::tokenizer_fixture("tokenizer-tekken-small"));
  ASSERT_EQ(t.chat_template_family(), ChatTemplateFamily::Mistral);
  EXPECT_EQ(t.apply_chat_template(kConversation),
            "<s>[INST]You are terse.\n\nHi there[/INST]Hello.</s>[INST]  Bye  [/INST]");
  const std::vector<int32_t> ids = t.encode_chat({{"user", "Hi"}});
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + 2), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(ids.back(), 4);
  EXPECT_NE(testing::error_message([&] {
              t.apply_chat_template({{"tool", "x"}});
            }).find("role 'tool'"),
            std::string::npos);
}

TEST(ChatTemplate, TemplateFromChatTemplateJinjaFile) {
  testing::TempDir dir;
  testing::write_tokenizer_dir(dir, fixture_json("tokenizer-qwen2-style"),
                               nlohmann::json{{"bos_token", "<|endoftext|>"}});
  const std::string jinja =
      "{{- bos_token -}}{%- for message in messages -%}{{ '<|im_start|>' + message.role + '\\n' + message.content + "
      "'<|im_end|>\\n' }}{%- endfor -%}";
  dir.write("chat_template.jinja", jinja);
  const Tokenizer t = Tokenizer::from_dir(dir.path());
  EXPECT_EQ(t.chat_template(), jinja);
  EXPECT_EQ(t.apply_chat_template({{"user", "Hi"}}, ChatOptions{false}),
            "<|endoftext|><|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplate, MistralSentencePieceVocabularyWithoutTemplateSpacesItsInstTags) {
  testing::TempDir dir;
  nlohmann::json j = fixture_json("tokenizer-qwen2-style");
  // No ChatML markers (renamed in the vocabulary, dropped from the added tokens): it says Mistral.
  j["added_tokens"] = nlohmann::json::array();
  for (const char* marker : {"<|im_start|>", "<|im_end|>"}) {
    j["model"]["vocab"][std::string(marker) + "x"] = j["model"]["vocab"][marker];
    j["model"]["vocab"].erase(marker);
  }
  int32_t id = 3000;
  for (const char* name : {"<s>", "</s>", "[INST]", "[/INST]"}) {
    j["added_tokens"].push_back({{"id", id++}, {"content", name}, {"special", true}, {"normalized", false}});
  }
  const Tokenizer t = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, j, {{"bos_token", "<s>"}}));
  ASSERT_TRUE(t.chat_template().empty());
  ASSERT_EQ(t.chat_template_family(), ChatTemplateFamily::Mistral);
  EXPECT_EQ(t.apply_chat_template(kConversation),
            "<s>[INST] You are terse.\n\nHi there [/INST]Hello.</s>[INST]   Bye   [/INST]");
}

TEST(ChatTemplate, MistralTemplateRenderedAsWritten) {
  // Mistral-7B-Instruct v0.1-v0.3 (SentencePiece): '[INST] ' + content + ' [/INST]'; the system
  // message is not rendered by this template.
  testing::TempDir dir;
  const nlohmann::json config = {
      {"bos_token", "<s>"},
      {"eos_token", "</s>"},
      {"chat_template",
       "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
       "message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ "
       "message['content'] + eos_token }}{% endif %}{% endfor %}"}};
  nlohmann::json j = fixture_json("tokenizer-qwen2-style");
  int32_t id = 3000;
  for (const char* name : {"<s>", "</s>", "[INST]", "[/INST]"}) {
    j["added_tokens"].push_back({{"id", id++},
                                 {"content", name},
                                 {"single_word", false},
                                 {"lstrip", false},
                                 {"rstrip", false},
                                 {"normalized", false},
                                 {"special", true}});
  }
  const Tokenizer t = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, j, config));
  ASSERT_EQ(t.chat_template_family(), ChatTemplateFamily::Mistral);
  EXPECT_EQ(t.apply_chat_template(kConversation), "<s>[INST] Hi there [/INST]Hello.</s>[INST]   Bye   [/INST]");
  EXPECT_EQ(t.encode_chat({{"user", "Hi"}}).front(), 3000);
}

TEST(ChatTemplate, NamedTemplateListPicksDefault) {
  testing::TempDir dir;
  const nlohmann::json config = {
      {"chat_template",
       {{{"name", "tool_use"}, {"template", "<|im_start|>"}}, {{"name", "default"}, {"template", "[INST]"}}}}};
  const Tokenizer t =
      Tokenizer::from_dir(testing::write_tokenizer_dir(dir, fixture_json("tokenizer-qwen2-style"), config));
  EXPECT_EQ(t.chat_template(), "[INST]");
  EXPECT_EQ(t.chat_template_family(), ChatTemplateFamily::Mistral);
}

// A Qwen3-style template: reasoning, tool calls, tool results, tools and enable_thinking reach it.
TEST(ChatTemplate, MessageFieldsToolsAndKwargsReachTheTemplate) {
  testing::TempDir dir;
  const nlohmann::json config = {
      {"eos_token", "<|im_end|>"},
      {"chat_template",
       "{% for m in messages %}<{{ m.role }}>{{ m.content }}"
       "{% if m.reasoning_content is defined %}[think:{{ m.reasoning_content }}]{% endif %}"
       "{% for c in m.tool_calls if m.tool_calls is defined %}[call:{{ c.function.name }} "
       "{{ c.function.arguments | tojson }}]{% endfor %}"
       "{% if m.tool_call_id is defined %}[id:{{ m.tool_call_id }} {{ m.name }}]{% endif %}{% endfor %}"
       "{% if tools %}[tools:{{ tools | map(attribute='name') | join(',') }}]{% endif %}"
       "{% if add_generation_prompt %}<assistant>{% if enable_thinking is false %}<no-think>{% endif %}{% endif %}"
       "{{ eos_token }}"}};
  const Tokenizer t =
      Tokenizer::from_dir(testing::write_tokenizer_dir(dir, fixture_json("tokenizer-qwen2-style"), config));
  ChatMessage assistant{"assistant", "", "let me look"};
  assistant.tool_calls = R"([{"type": "function", "function": {"name": "get", "arguments": {"q": "ü"}}}])";
  ChatMessage tool{"tool", "42"};
  tool.tool_call_id = "call1";
  tool.name = "get";
  ChatOptions options;
  options.tools = R"([{"name": "get"}, {"name": "put"}])";
  options.template_kwargs = R"({"enable_thinking": false})";
  EXPECT_EQ(t.apply_chat_template({{"user", "q?"}, assistant, tool}, options),
            "<user>q?<assistant>[think:let me look][call:get {\"q\": \"ü\"}]<tool>42[id:call1 get]"
            "[tools:get,put]<assistant><no-think><|im_end|>");
  options.add_generation_prompt = false;
  options.tools.clear();
  options.template_kwargs.clear();
  EXPECT_EQ(t.apply_chat_template({{"user", "q?"}}, options), "<user>q?<|im_end|>");
  options.tools = "[not json";
  EXPECT_EQ(testing::error_code_of([&] {
              t.apply_chat_template({{"user", "q?"}}, options);
            }),
            ErrorCode::InvalidArgument);
  options.tools = "{}";
  EXPECT_EQ(testing::error_code_of([&] {
              t.apply_chat_template({{"user", "q?"}}, options);
            }),
            ErrorCode::InvalidArgument);
}

TEST(ChatTemplate, ABrokenTemplateFailsRenderingNotLoading) {
  testing::TempDir dir;
  const nlohmann::json config = {{"chat_template", "{% for m in messages %}\n{{ m.content | no_such_filter }}"}};
  const std::string folder = testing::write_tokenizer_dir(dir, fixture_json("tokenizer-qwen2-style"), config);
  const Tokenizer t = Tokenizer::from_dir(folder);
  EXPECT_FALSE(t.encode("still encodes").empty());
  try {
    t.apply_chat_template({{"user", "hi"}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
    EXPECT_NE(std::string(e.what()).find("chat template '" + folder + "/tokenizer_config.json' line 2"),
              std::string::npos)
        << e.what();
  }
}

TEST(ChatTemplate, RaiseExceptionNamesTheTemplateFileAndLine) {
  testing::TempDir dir;
  testing::write_tokenizer_dir(dir, fixture_json("tokenizer-qwen2-style"));
  dir.write("chat_template.jinja",
            "{%- if messages[0].role != 'user' %}\n  {{- raise_exception('first message must be the user\\'s') }}\n"
            "{%- endif %}{{ messages[0].content }}");
  const Tokenizer t = Tokenizer::from_dir(dir.path());
  EXPECT_EQ(t.apply_chat_template({{"user", "hi"}}), "hi");
  try {
    t.apply_chat_template({{"system", "hi"}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(std::string(e.what()), "chat template '" + dir.path() +
                                         "/chat_template.jinja' line 2: raise_exception: first message must be the "
                                         "user's");
  }
}

TEST(ChatTemplate, NoTemplateIsATypedError) {
  testing::TempDir dir;
  const Tokenizer t = Tokenizer::from_dir(testing::write_tokenizer_dir(dir, testing::tiny_tokenizer_json()));
  EXPECT_EQ(t.chat_template_family(), std::nullopt);
  try {
    t.apply_chat_template({{"user", "hi"}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotFound);
    EXPECT_NE(std::string(e.what()).find("has no chat template"), std::string::npos);
  }
  EXPECT_STREQ(to_string(ChatTemplateFamily::Llama3), "Llama3");
}

}  // namespace
}  // namespace izwi
