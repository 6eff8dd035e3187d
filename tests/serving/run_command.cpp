#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>

#include "common/text_model.h"
#include "serving/running_server.h"

namespace izwi::testing {

std::string run_command(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return out;
  }
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int raw = pclose(pipe);
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

server::ServerOptions text_model_options(const TempDir& dir) {
  write_text_model(dir.path());
  server::ServerOptions options;
  options.models = {{"text", dir.path()}};
  options.api_key = kTestApiKey;
  return options;
}

nlohmann::json run_node_client(const std::string& script, const std::string& arguments) {
  int status = 0;
  const std::string printed =
      run_command(std::string(IZWI_NODE) + " " + IZWI_SERVING_DIR + "/" + script + " " + arguments + " 2>&1", &status);
  nlohmann::json json = nlohmann::json::parse(printed, nullptr, /*allow_exceptions=*/false);
  if (status != 0 || json.is_discarded()) {
    throw std::runtime_error(script + " exited with " + std::to_string(status) + ":\n" + printed +
                             "\n(the clients need `npm ci --prefix tests/serving`; cmake/install_deps.sh runs it)");
  }
  return json;
}

}  // namespace izwi::testing
