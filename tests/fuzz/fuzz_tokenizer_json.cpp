// Fuzz target: any byte string handed to the tokenizer.json or tekken.json loader either loads a
// tokenizer whose encode gives ids inside its vocabulary, or raises izwi::Error. Nothing else
// may happen.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "izwi/errors.h"
#include "tokenizer/tokenizer_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The same bytes as tokenizer.json and as tekken.json.
  for (auto load : {&izwi::load_tokenizer_json, &izwi::load_tekken_json}) {
    try {
      const izwi::TokenizerData tokenizer = load(text, "fuzz-input");
      std::vector<int32_t> ids;
      bool kept_start = true;
      tokenizer.model->encode(
          tokenizer.model->normalize("Hello, w\xC3\xB6rld! \xE4\xBD\xA0\xE5\xA5\xBD 123\n  x", &kept_start), ids,
          kept_start);
      for (int32_t id : ids) {
        if (id < 0 || static_cast<size_t>(id) >= tokenizer.kinds.size()) std::abort();  // an id outside the vocabulary
      }
    } catch (const izwi::Error&) {
    }
  }
  return 0;
}
