// Fuzz target: any byte string handed to the tokenizer.json loader either loads a tokenizer
// whose encode and decode work, or raises izwi::Error. Nothing else may happen.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "izwi/errors.h"
#include "tokenizer/tokenizer_data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const izwi::TokenizerData tokenizer =
        izwi::load_tokenizer_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz-input");
    std::vector<int32_t> ids;
    tokenizer.model->encode(tokenizer.model->normalize("Hello, wörld! 你好 123\n  x"), ids);
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= tokenizer.kinds.size()) std::abort();  // an id outside the vocabulary
    }
  } catch (const izwi::Error&) {
  }
  return 0;
}
