// A SentencePiece tokenizer.model without tokenizer.json (Llama 2, Mistral, Gemma checkpoints that
// ship only the SentencePiece file): encoding runs in Debian's libsentencepiece itself, through
// libizwi_sentencepiece (src/sentencepiece_shim), which is loaded with dlopen on first use so that
// libsentencepiece's bundled protobuf never meets libtorch's. Decoding is transformers' Llama
// conversion's: pieces with U+2581 as a space, <0xAB> byte pieces as their byte, the leading
// space of the dummy prefix removed.

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "common/check.h"
#include "common/regular_file.h"
#include "tokenizer/decoder.h"
#include "tokenizer/tokenizer_data.h"

#ifndef IZWI_SENTENCEPIECE_BUILD_PATH
#define IZWI_SENTENCEPIECE_BUILD_PATH ""
#endif
#ifndef IZWI_SENTENCEPIECE_INSTALL_PATH
#define IZWI_SENTENCEPIECE_INSTALL_PATH ""
#endif

namespace izwi {
namespace {

constexpr size_t kMaxModelBytes = 64u << 20;
#if defined(__SANITIZE_ADDRESS__)
constexpr int kDeepBind = 0;  // AddressSanitizer refuses RTLD_DEEPBIND
#else
constexpr int kDeepBind = RTLD_DEEPBIND;
#endif

// The functions of libizwi_sentencepiece.
struct Shim {
  void* (*load)(const char*, size_t, char*, size_t) = nullptr;
  void (*free)(void*) = nullptr;
  int (*piece_size)(void*) = nullptr;
  const char* (*piece)(void*, int, size_t*, int*) = nullptr;
  int (*encode)(void*, const char*, size_t, void (*)(void*, const int*, size_t), void*, char*, size_t) = nullptr;
};

const Shim& shim() {
  static Shim s;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("IZWI_SENTENCEPIECE_LIBRARY")) candidates.emplace_back(env);
    for (const char* path : {IZWI_SENTENCEPIECE_BUILD_PATH, IZWI_SENTENCEPIECE_INSTALL_PATH})
      if (*path) candidates.emplace_back(path);
    candidates.emplace_back("libizwi_sentencepiece.so");  // the loader's search path
    void* handle = nullptr;
    for (const std::string& path : candidates) {
      if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) continue;
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | kDeepBind);
      if (handle) break;
      error += std::string(" ") + dlerror() + ";";
    }
    if (!handle) return;
    s.load = reinterpret_cast<decltype(s.load)>(dlsym(handle, "izwi_spm_load"));
    s.free = reinterpret_cast<decltype(s.free)>(dlsym(handle, "izwi_spm_free"));
    s.piece_size = reinterpret_cast<decltype(s.piece_size)>(dlsym(handle, "izwi_spm_piece_size"));
    s.piece = reinterpret_cast<decltype(s.piece)>(dlsym(handle, "izwi_spm_piece"));
    s.encode = reinterpret_cast<decltype(s.encode)>(dlsym(handle, "izwi_spm_encode"));
    if (!s.load || !s.free || !s.piece_size || !s.piece || !s.encode) s.load = nullptr;
  });
  if (!s.load) {
    fail(ErrorCode::Unsupported,
         "SentencePiece tokenizer.model needs libizwi_sentencepiece (built with izwi from Debian's "
         "libsentencepiece-dev), which could not be loaded:{} (set IZWI_SENTENCEPIECE_LIBRARY to its path)",
         error.empty() ? " not found" : error);
  }
  return s;
}

class SentencePieceText : public TextModel {
 public:
  explicit SentencePieceText(void* handle) : handle_(handle) {}
  ~SentencePieceText() override { shim().free(handle_); }
  SentencePieceText(const SentencePieceText&) = delete;
  SentencePieceText& operator=(const SentencePieceText&) = delete;

  std::string normalize(std::string_view text, bool*) const override { return std::string(text); }

  void encode(std::string_view normalized, std::vector<int32_t>& ids, bool) const override {
    char error[512] = "";
    const auto sink = [](void* context, const int* out, size_t count) {
      auto* v = static_cast<std::vector<int32_t>*>(context);
      v->insert(v->end(), out, out + count);
    };
    if (shim().encode(handle_, normalized.data(), normalized.size(), sink, &ids, error, sizeof(error)) != 0)
      fail(ErrorCode::Internal, "SentencePiece encode failed: {}", error);
  }

 private:
  void* handle_;
};

}  // namespace

TokenizerData load_sentencepiece_model(const std::string& path) {
  const std::string bytes = read_regular_file(path, "SentencePiece model", kMaxModelBytes);
  const Shim& s = shim();
  char error[512] = "";
  void* handle = s.load(bytes.data(), bytes.size(), error, sizeof(error));
  if (!handle) fail(ErrorCode::InvalidFormat, "{}: not a SentencePiece model: {}", path, error);

  TokenizerData data;
  data.model = std::make_unique<SentencePieceText>(handle);  // owns the handle from here
  const nlohmann::json decoder_json = {
      {"type", "Sequence"},
      {"decoders",
       {{{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}},
        {{"type", "ByteFallback"}},
        {{"type", "Fuse"}},
        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  auto decoder = std::make_shared<Decoder>(Decoder::from_json(decoder_json, path));
  const int size = s.piece_size(handle);
  for (int id = 0; id < size; ++id) {
    size_t length = 0;
    int flags = 0;
    const char* text = s.piece(handle, id, &length, &flags);
    const std::string piece(text, length);
    // Control pieces (<s>, </s>) and <unk> are special tokens, found in the text as transformers'
    // LlamaTokenizer finds them; SentencePiece's own user-defined pieces it matches itself.
    const bool special = (flags & 3) != 0;
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
  return data;
}

}  // namespace izwi
