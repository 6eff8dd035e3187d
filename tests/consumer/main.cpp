// Uses only the installed public headers: load a model, generate, check the result.
#include <izwi/engine.h>

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
  return out.tokens.size() == 8 && out.finish_reason == izwi::FinishReason::Length ? 0 : 1;
}
