// Fuzz target: encode, decode and incremental detokenization of arbitrary input with the
// qwen2-style and tekken fixtures. The first byte picks the tokenizer and the mode; the rest is
// text to encode or, in id mode, big-endian 16-bit token ids. Invariants: encode rejects
// exactly the invalid UTF-8; decode(encode(s)) is the normalised s; the incremental deltas are
// valid UTF-8 and concatenate to decode(ids).

#include <cstdint>
#include <cstdlib>
#include <string>

#include "izwi/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

const izwi::Tokenizer& tokenizer(bool tekken) {
  static const izwi::Tokenizer bpe = izwi::Tokenizer::from_dir(IZWI_TEST_DATA_DIR "/tokenizer-qwen2-style");
  static const izwi::Tokenizer tek = izwi::Tokenizer::from_dir(IZWI_TEST_DATA_DIR "/tokenizer-tekken-small");
  return tekken ? tek : bpe;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const bool tekken = mode & 1, as_ids = mode & 2, add_special = mode & 4, skip_special = mode & 8;
  const izwi::Tokenizer& t = tokenizer(tekken);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<int32_t> ids;
  if (as_ids) {
    for (size_t i = 1; i + 1 < size; i += 2) ids.push_back(((data[i] << 8) | data[i + 1]) % t.vocab_size());
  } else {
    try {
      ids = t.encode(text, add_special);
    } catch (const izwi::Error&) {
      if (!izwi::utf8::first_invalid(text)) std::abort();  // rejected valid UTF-8
      return 0;
    }
    if (izwi::utf8::first_invalid(text)) std::abort();  // accepted invalid UTF-8
    // Tekken has no normaliser; the byte-level fixture normalises to NFC.
    if (t.decode(t.encode(text)) != (tekken ? text : izwi::utf8::nfc(text))) std::abort();
  }
  izwi::IncrementalDetokenizer stream(t, skip_special);
  std::string joined;
  for (int32_t id : ids) {
    const std::string delta = stream.push(id);
    if (izwi::utf8::first_invalid(delta)) std::abort();
    joined += delta;
  }
  joined += stream.finish();
  if (joined != t.decode(ids, skip_special)) std::abort();
  return 0;
}
