// Uses only the installed public headers: load a model, generate, check the result, and catch a
// typed izwi::Error thrown inside the library (its type must cross the library boundary).
#include <izwi/engine.h>
#include <izwi/voice.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer MODEL_DIR\n");
    return 2;
  }
  izwi::Engine engine(argv[1]);
  izwi::Request request;
  request.prompt_ids = {1, 15, 30, 7};
  request.params.max_tokens = 8;
  request.params.min_tokens = 8;
  const izwi::Output out = engine.generate(request);
  std::printf("generated %zu tokens, finish reason %s\n", out.tokens.size(), izwi::to_string(out.finish_reason));
  bool typed_error = false;
  try {
    izwi::load_voice(std::string(argv[1]) + "/no-such-voice.json");
  } catch (const izwi::Error& e) {
    typed_error = e.code() == izwi::ErrorCode::NotFound;
    std::printf("caught %s: %s\n", izwi::to_string(e.code()), e.what());
  }
  return out.tokens.size() == 8 && out.finish_reason == izwi::FinishReason::Length && typed_error ? 0 : 1;
}
