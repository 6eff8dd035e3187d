// A SentencePiece tokenizer.model without tokenizer.json (Llama 2, Mistral, Gemma checkpoints that
// ship only the SentencePiece file): encoding runs in Debian's libsentencepiece itself, decoding
// as transformers' Llama conversion decodes (pieces with U+2581 as a space, <0xAB> byte pieces as
// their byte, the leading space the dummy prefix added removed).

#include <sentencepiece_processor.h>

#include "common/check.h"
#include "common/regular_file.h"
#include "tokenizer/decoder.h"
#include "tokenizer/tokenizer_data.h"

namespace izwi {
namespace {

constexpr size_t kMaxModelBytes = 64u << 20;

class SentencePieceText : public TextModel {
 public:
  explicit SentencePieceText(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor)
      : processor_(std::move(processor)) {}

  std::string normalize(std::string_view text, bool*) const override { return std::string(text); }

  void encode(std::string_view normalized, std::vector<int32_t>& ids, bool) const override {
    thread_local std::vector<int> out;
    out.clear();
    const auto status = processor_->Encode(absl::string_view(normalized.data(), normalized.size()), &out);
    if (!status.ok()) fail(ErrorCode::Internal, "SentencePiece encode failed: {}", status.ToString());
    ids.insert(ids.end(), out.begin(), out.end());
  }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace

TokenizerData load_sentencepiece_model(const std::string& path) {
  const std::string bytes = read_regular_file(path, "SentencePiece model", kMaxModelBytes);
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->LoadFromSerializedProto(absl::string_view(bytes.data(), bytes.size()));
  if (!status.ok()) fail(ErrorCode::InvalidFormat, "{}: not a SentencePiece model: {}", path, status.ToString());

  const nlohmann::json decoder_json = {
      {"type", "Sequence"},
      {"decoders",
       {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
        {{"type", "ByteFallback"}},
        {{"type", "Fuse"}},
        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  auto decoder = std::make_shared<Decoder>(Decoder::from_json(decoder_json, path));

  TokenizerData data;
  const int size = processor->GetPieceSize();
  for (int id = 0; id < size; ++id) {
    const std::string& piece = processor->IdToPiece(id);
    // Control pieces (<s>, </s>) and <unk> are special tokens, found in the text as transformers'
    // LlamaTokenizer finds them; SentencePiece's own user-defined pieces it matches itself.
    const bool special = processor->IsControl(id) || processor->IsUnknown(id);
    data.set(id, decoder->token_bytes(piece), special ? TokenKind::Special : TokenKind::Normal);
    data.set_token(id, piece);
    data.token_ids.emplace(piece, id);
    if (special && !piece.empty()) {
      AddedToken token;
      token.content = piece;
      token.id = id;
      token.special = true;
      data.added.push_back(std::move(token));
    }
  }
  data.decoder = std::move(decoder);
  data.model = std::make_unique<SentencePieceText>(std::move(processor));
  return data;
}

}  // namespace izwi
