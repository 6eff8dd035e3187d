#pragma once
/// @file tokenizer.h
/// Text <-> token ids for the models izwi runs: Hugging Face tokenizer.json with a BPE model
/// (byte-level: Llama 3, Qwen2/3, LFM2, GPT-4o; SentencePiece style: Llama 2, Mistral, Gemma),
/// vocab.json + merges.txt, SentencePiece tokenizer.model and Mistral tekken.json (Voxtral). See
/// docs/tokenizer.md.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "izwi/chat.h"
#include "izwi/errors.h"
#include "izwi/export.h"

namespace izwi {

/// An immutable tokenizer; copies share the loaded vocabulary and every method is thread-safe.
class IZWI_API Tokenizer {
 public:
  /// Loads a model folder: tekken.json if present, else tokenizer.json (else vocab.json +
  /// merges.txt, else a SentencePiece tokenizer.model), plus tokenizer_config.json,
  /// generation_config.json and chat_template.jinja when present (BOS/EOS, add_bos_token, chat
  /// template). Throws izwi::Error: NotFound (no folder / no tokenizer file), InvalidFormat
  /// (malformed file), Unsupported (a component izwi does not implement, named in the message).
  static Tokenizer from_dir(const std::string& dir);

  /// Token ids of UTF-8 `text`; special-token strings in the text become their ids. With
  /// `add_special_tokens`, adds what the post-processor adds (else BOS if add_bos_token says so).
  /// Throws InvalidArgument (with the byte offset) if `text` is not valid UTF-8.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = false) const;

  /// Text of `ids`; bytes that do not form valid UTF-8 become U+FFFD. Throws InvalidArgument for
  /// an id outside the vocabulary.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  /// Raw bytes of one token (possibly only part of a UTF-8 character).
  std::string token_bytes(int32_t id) const;
  /// Id of a token spelled as in the file: a vocabulary entry of tokenizer.json (byte-level
  /// form, e.g. "Ġthe"), an added/special token, or a tekken token's bytes or special name.
  std::optional<int32_t> token_to_id(std::string_view token) const;
  bool is_special(int32_t id) const;  ///< A special token (decode skips it with skip_special_tokens).
  int32_t vocab_size() const;         ///< highest id + 1

  std::optional<int32_t> bos_id() const;  ///< The bos_token of tokenizer_config.json, when it has one.
  /// Ids that end generation: eos_token of tokenizer_config.json, then generation_config.json's
  /// eos_token_id (one or a list), without repeats.
  std::vector<int32_t> eos_ids() const;

  /// The Jinja text of tokenizer_config.json's chat_template, else of chat_template.jinja
  /// ("" if none).
  const std::string& chat_template() const;
  /// The built-in format of the folder (from its template's markers or its special tokens), if any;
  /// apply_chat_template uses it only when the folder has no Jinja template.
  std::optional<ChatTemplateFamily> chat_template_family() const;
  /// The prompt text of `messages`: the folder's Jinja chat template rendered as transformers'
  /// apply_chat_template does (messages, tools, add_generation_prompt, bos_token, eos_token and the
  /// other special tokens, template_kwargs), else the built-in format. Throws NotFound if the
  /// folder has neither; InvalidFormat naming the template and line if it cannot be parsed;
  /// InvalidArgument naming the template and line when it raises (raise_exception) or fails, for
  /// malformed tools/template_kwargs/tool_calls JSON, or for a role a built-in format cannot express.
  std::string apply_chat_template(const std::vector<ChatMessage>& messages, const ChatOptions& options = {}) const;
  /// encode(apply_chat_template(messages, options)); the template already holds BOS where due.
  std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages, const ChatOptions& options = {}) const;

 private:
  friend class IncrementalDetokenizer;
  /// How many leading spaces decode() strips from the start of a text (SentencePiece decoders).
  size_t leading_spaces_stripped() const;
  /// token_bytes(id) of the first token of a text (Metaspace decoders drop its leading space).
  std::string first_token_bytes(int32_t id) const;
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

/// Turns ids generated one at a time into text deltas that never split a UTF-8 character:
/// incomplete trailing bytes are held back until a later token completes them. The deltas
/// concatenate to decode(all ids, skip_special_tokens) (for SentencePiece-style decoders, up to
/// how an invalid run of byte tokens is replaced: one U+FFFD per maximal invalid sequence here,
/// one per byte in decode()). Use from one thread at a time.
class IZWI_API IncrementalDetokenizer {
 public:
  /// Decodes with `tokenizer`, which must outlive it.
  explicit IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens = false);

  /// Text completed by `id` (possibly ""). Throws InvalidArgument for an id outside the vocabulary.
  std::string push(int32_t id);
  /// The held-back bytes, as U+FFFD for each incomplete sequence; the detokenizer is then empty.
  std::string finish();

 private:
  void strip_leading(std::string& text);
  Tokenizer tokenizer_;
  bool skip_special_tokens_;
  std::string pending_;  ///< bytes of an incomplete UTF-8 sequence
  size_t strip_spaces_;  ///< leading spaces still to drop, as decode() drops them at the start
  bool first_ = true;    ///< no token shown yet
};

}  // namespace izwi
