#include "serving/server_process.h"

#include <chrono>
#include <optional>

namespace izwi::testing {

std::string server_binary() { return std::string(IZWI_BINARY_DIR) + "/server/izwi-server"; }

ChildProcess start_server(std::vector<std::string> args) {
  args.insert(args.begin(), server_binary());
  return ChildProcess(args, ChildProcess::Stderr::IntoStdout);
}

std::string line_with(ChildProcess& child, const std::string& marker) {
  while (std::optional<std::string> line = child.read_line(std::chrono::seconds(60))) {
    if (line->find(marker) != std::string::npos) return *line;
  }
  return {};
}

int port_after(ChildProcess& child, const std::string& marker) {
  const std::string line = line_with(child, marker);
  return line.empty() ? -1 : std::stoi(line.substr(line.rfind(':') + 1));
}

}  // namespace izwi::testing
