// izwi-server: an OpenAI-compatible HTTP server over izwi engines (docs/serving.md).

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"izwi-server: OpenAI-compatible HTTP server"};
  CLI11_PARSE(app, argc, argv);
  return 0;
}
