#include "izwi/tokenizer.h"

#include <algorithm>
#include <filesystem>

#include "common/check.h"
#include "common/json_fields.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/json_input.h"
#include "tokenizer/tokenizer_data.h"
#include "tokenizer/utf8.h"

namespace izwi {
namespace {

// A token field of tokenizer_config.json: "text", {"content": "text", ...} or null.
std::optional<std::string> token_text(const JsonFields& config, const std::string& key) {
  if (!config.has(key)) return std::nullopt;
  const nlohmann::json& value = config.json().at(key);
  if (value.is_string()) return value.get<std::string>();
  return JsonFields(value, config.origin() + ": " + key).get<std::string>("content");
}

}  // namespace

struct Tokenizer::Impl {
  TokenizerData data;
  AddedTokenMatcher raw_matcher;         ///< added tokens matched before normalisation
  AddedTokenMatcher normalized_matcher;  ///< those marked "normalized", matched after it
  std::optional<int32_t> bos;
  std::string bos_text;
  bool add_bos = false;
  std::vector<int32_t> eos;
  std::string chat_template;
  std::optional<ChatTemplateFamily> family;
  /// The parsed chat_template; when it does not parse, the error apply_chat_template raises.
  std::shared_ptr<const jinja::ChatTemplate> jinja;
  std::optional<Error> jinja_error;
  std::string chat_template_origin;                                          ///< the file the template came from
  nlohmann::ordered_json special_tokens = nlohmann::ordered_json::object();  ///< bos_token, eos_token, ...

  std::optional<int32_t> find(std::string_view token) const { return data.token_ids.find(token); }
  void check_id(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= data.kinds.size() || data.kinds[id] == TokenKind::Missing) {
      fail(ErrorCode::InvalidArgument, "token id {} is outside the vocabulary (size {})", id, data.kinds.size());
    }
  }
  void encode_plain(std::string_view text, bool at_origin, std::vector<int32_t>& ids) const;
  void read_tokenizer_config(const nlohmann::json& doc, const std::string& path);
  void read_generation_config(const std::string& path);
};

void Tokenizer::Impl::encode_plain(std::string_view text, bool at_origin, std::vector<int32_t>& ids) const {
  bool kept_start = true;
  const std::string normalized = data.model->normalize(text, &kept_start);
  at_origin = at_origin && kept_start;
  if (normalized_matcher.empty()) return data.model->encode(normalized, ids, at_origin);
  std::vector<AddedTokenMatcher::Segment> segments;
  normalized_matcher.split(normalized, segments);
  for (const auto& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
    } else {
      data.model->encode(s.text, ids, at_origin && s.text.data() == normalized.data());
    }
  }
}

void Tokenizer::Impl::read_tokenizer_config(const nlohmann::json& doc, const std::string& path) {
  const JsonFields config(doc, path);
  const auto resolve = [&](const std::string& key) -> std::optional<int32_t> {
    const std::optional<std::string> text = token_text(config, key);
    if (!text) return std::nullopt;
    const std::optional<int32_t> id = find(*text);
    if (!id) fail(ErrorCode::InvalidFormat, "{}: {} '{}' is not a token of the vocabulary", path, key, *text);
    return id;
  };
  if (const auto id = resolve("bos_token")) {
    bos = id;
    bos_text = *token_text(config, "bos_token");
  }
  if (const auto id = resolve("eos_token")) eos.push_back(*id);
  add_bos = config.get_or("add_bos_token", add_bos);
  // transformers renders templates with its special_tokens_map: the tokens the config sets.
  for (const char* key : {"bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"}) {
    const auto it = doc.find(key);
    if (it == doc.end()) continue;
    if (it->is_string()) {
      special_tokens[key] = it->get<std::string>();
    } else if (it->is_object() && it->contains("content") && it->at("content").is_string()) {
      special_tokens[key] = it->at("content").get<std::string>();
    }
  }
  if (config.has("chat_template")) {
    chat_template_origin = path;
    const nlohmann::json& value = config.json().at("chat_template");
    if (value.is_string()) {
      chat_template = value.get<std::string>();
    } else if (value.is_array()) {
      // Named templates: [{"name": "default", "template": "..."}, {"name": "tool_use", ...}].
      for (const auto& entry : value) {
        const JsonFields named(entry, path + ": chat_template[]");
        if (chat_template.empty() || named.get<std::string>("name") == "default") {
          chat_template = named.get<std::string>("template");
        }
      }
    } else {
      fail(ErrorCode::InvalidFormat, "{}: chat_template is neither a string nor a list of named templates", path);
    }
  }
}

void Tokenizer::Impl::read_generation_config(const std::string& path) {
  const nlohmann::json doc = read_json(path);
  const JsonFields config(doc, path);
  std::vector<int32_t> ids;
  if (config.has("eos_token_id")) {
    ids = config.json().at("eos_token_id").is_array() ? config.get<std::vector<int32_t>>("eos_token_id")
                                                      : std::vector<int32_t>{config.get<int32_t>("eos_token_id")};
  }
  const auto check = [&](const char* field, int32_t id) {
    if (id < 0 || static_cast<size_t>(id) >= data.kinds.size()) {
      fail(ErrorCode::InvalidFormat, "{}: {} {} is outside the vocabulary (size {})", path, field, id,
           data.kinds.size());
    }
  };
  for (int32_t id : ids) {
    check("eos_token_id", id);
    if (std::find(eos.begin(), eos.end(), id) == eos.end()) eos.push_back(id);
  }
  if (!bos && config.has("bos_token_id")) {
    bos = config.get<int32_t>("bos_token_id");
    check("bos_token_id", *bos);
  }
}

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Tokenizer Tokenizer::from_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) {
    fail(ErrorCode::InvalidArgument, "tokenizer folder '{}' is a file; give the model's folder", dir);
  }
  if (!fs::is_directory(dir, ec)) fail(ErrorCode::NotFound, "tokenizer folder '{}' does not exist", dir);
  auto impl = std::make_shared<Impl>();
  const fs::path tekken = fs::path(dir) / "tekken.json", hf = fs::path(dir) / "tokenizer.json";
  const fs::path vocab = fs::path(dir) / "vocab.json", spm = fs::path(dir) / "tokenizer.model";
  const fs::path tokenizer_config = fs::path(dir) / "tokenizer_config.json";
  std::optional<nlohmann::json> config;  // tokenizer_config.json, when the loader already read it
  if (fs::exists(tekken)) {
    impl->data = load_tekken_json(read_text_file(tekken.string()), tekken.string());
    // mistral_common always starts a prompt with <s> and ends generation at </s>.
    impl->bos = impl->find("<s>");
    if (impl->bos) impl->bos_text = "<s>";
    impl->add_bos = impl->bos.has_value();
    if (const auto eos = impl->find("</s>")) impl->eos.push_back(*eos);
  } else if (fs::exists(hf)) {
    impl->data = load_tokenizer_json(read_text_file(hf.string()), hf.string());
  } else if (fs::exists(vocab)) {  // Qwen2 / GPT-2 style: vocab.json + merges.txt + tokenizer_config.json
    VocabMergesTokenizer loaded = load_vocab_merges_dir(dir);
    impl->data = std::move(loaded.data);
    config = std::move(loaded.config);
  } else if (fs::exists(spm)) {  // SentencePiece only (Llama 2 / Mistral / Gemma era checkpoints)
    impl->data = load_sentencepiece_model(spm.string());
    // LlamaTokenizer's defaults: BOS first (add_bos_token), generation ends at EOS.
    impl->bos = impl->find("<s>");
    if (impl->bos) impl->bos_text = "<s>";
    impl->add_bos = impl->bos.has_value();
    if (const auto eos = impl->find("</s>")) impl->eos.push_back(*eos);
  } else {
    fail(ErrorCode::NotFound,
         "model folder '{}' has neither tekken.json nor tokenizer.json (nor vocab.json + merges.txt, nor a "
         "SentencePiece tokenizer.model)",
         dir);
  }
  std::vector<AddedToken> raw, normalized;
  for (const AddedToken& t : impl->data.added) (t.normalized ? normalized : raw).push_back(t);
  impl->raw_matcher = AddedTokenMatcher(std::move(raw));
  impl->normalized_matcher = AddedTokenMatcher(std::move(normalized));

  const fs::path generation_config = fs::path(dir) / "generation_config.json";
  if (!config && fs::exists(tokenizer_config)) config = read_json(tokenizer_config.string());
  if (config) impl->read_tokenizer_config(*config, tokenizer_config.string());
  if (fs::exists(generation_config)) impl->read_generation_config(generation_config.string());
  // Newer transformers save the template as its own file instead of inside tokenizer_config.json.
  const fs::path jinja = fs::path(dir) / "chat_template.jinja";
  if (impl->chat_template.empty() && fs::exists(jinja)) {
    impl->chat_template = read_text_file(jinja.string());
    impl->chat_template_origin = jinja.string();
  }
  if (!impl->chat_template.empty()) {
    try {
      impl->jinja = std::make_shared<const jinja::ChatTemplate>(impl->chat_template, impl->chat_template_origin);
    } catch (const Error& e) {  // raised by apply_chat_template, so that encoding still works
      impl->jinja_error = e;
    }
  }

  impl->family = detect_chat_family(impl->chat_template, impl->data.tekken,
                                    [&](std::string_view token) { return impl->find(token).has_value(); });
  return Tokenizer(std::move(impl));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  utf8::require_valid(text, "text to encode");
  const TokenizerData& data = impl_->data;
  std::vector<int32_t> ids;
  const bool by_template = add_special_tokens && (!data.post.prefix.empty() || !data.post.suffix.empty());
  if (by_template) {
    ids = data.post.prefix;
  } else if (add_special_tokens && impl_->add_bos && impl_->bos) {
    ids.push_back(*impl_->bos);
  }
  ids.reserve(ids.size() + text.size() / 3);
  std::vector<AddedTokenMatcher::Segment> segments;
  impl_->raw_matcher.split(text, segments);
  for (const auto& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
    } else {
      impl_->encode_plain(s.text, s.text.data() == text.data(), ids);
    }
  }
  if (by_template) ids.insert(ids.end(), data.post.suffix.begin(), data.post.suffix.end());
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  if (impl_->data.decoder) {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int32_t id : ids) {
      impl_->check_id(id);
      if (skip_special_tokens && impl_->data.kinds[id] == TokenKind::Special) continue;
      tokens.push_back(impl_->data.id_tokens[id]);
    }
    return impl_->data.decoder->decode(std::move(tokens));
  }
  std::string bytes;
  for (int32_t id : ids) {
    impl_->check_id(id);
    if (skip_special_tokens && impl_->data.kinds[id] == TokenKind::Special) continue;
    bytes += impl_->data.id_bytes[id];
  }
  return utf8::lossy(bytes);
}

std::string Tokenizer::token_bytes(int32_t id) const {
  impl_->check_id(id);
  return impl_->data.id_bytes[id];
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const { return impl_->find(token); }

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < impl_->data.kinds.size() && impl_->data.kinds[id] == TokenKind::Special;
}

size_t Tokenizer::leading_spaces_stripped() const {
  return impl_->data.decoder ? impl_->data.decoder->leading_spaces_stripped() : 0;
}

std::string Tokenizer::first_token_bytes(int32_t id) const {
  impl_->check_id(id);
  if (!impl_->data.decoder) return impl_->data.id_bytes[id];
  return impl_->data.decoder->token_bytes(impl_->data.id_tokens[id], true);
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(impl_->data.kinds.size()); }

std::optional<int32_t> Tokenizer::bos_id() const { return impl_->bos; }

std::vector<int32_t> Tokenizer::eos_ids() const { return impl_->eos; }

const std::string& Tokenizer::chat_template() const { return impl_->chat_template; }

std::optional<ChatTemplateFamily> Tokenizer::chat_template_family() const { return impl_->family; }

std::string Tokenizer::apply_chat_template(const std::vector<ChatMessage>& messages, const ChatOptions& options) const {
  if (impl_->jinja_error) throw *impl_->jinja_error;
  if (impl_->jinja) return impl_->jinja->render(chat_template_inputs(messages, options, impl_->special_tokens));
  if (!impl_->family) {
    fail(ErrorCode::NotFound,
         "the model folder has no chat template (no chat_template in tokenizer_config.json and no "
         "ChatML, Llama 3 or Mistral special tokens in the vocabulary)");
  }
  // Only folders without a template of their own get here.
  std::string bos;
  switch (*impl_->family) {
    case ChatTemplateFamily::ChatML:
      break;
    case ChatTemplateFamily::Llama3:
      bos = impl_->bos ? impl_->bos_text : (impl_->find("<|begin_of_text|>") ? "<|begin_of_text|>" : "");
      break;
    case ChatTemplateFamily::Mistral:
      bos = impl_->bos ? impl_->bos_text : (impl_->find("<s>") ? "<s>" : "");
      break;
  }
  // SentencePiece-era Mistral models (v0.1-v0.3) put spaces inside [INST] ... [/INST]; tekken ones do not.
  return render_chat(*impl_->family, messages, options, bos, !impl_->data.tekken);
}

std::vector<int32_t> Tokenizer::encode_chat(const std::vector<ChatMessage>& messages,
                                            const ChatOptions& options) const {
  return encode(apply_chat_template(messages, options), false);
}

}  // namespace izwi
