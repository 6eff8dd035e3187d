#include "server/server_options.h"

#include <algorithm>
#include <utility>

#include "common/check.h"

namespace izwi::server {

namespace {

/// "NAME=VALUE" of `flag` -> {NAME, VALUE}; InvalidArgument naming the argument otherwise.
std::pair<std::string, std::string> split_named(const std::string& spec, const char* flag, const char* value) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    fail(ErrorCode::InvalidArgument, "{} '{}' must be NAME={}", flag, spec, value);
  }
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

}  // namespace

ModelSpec parse_model_spec(const std::string& spec) {
  auto [name, dir] = split_named(spec, "--model", "DIR");
  return {std::move(name), std::move(dir), std::nullopt};
}

void add_model_configs(std::vector<ModelSpec>& models, const std::vector<std::string>& specs) {
  for (const std::string& spec : specs) {
    const auto [name, file] = split_named(spec, "--model-config", "FILE");
    const auto model = std::find_if(models.begin(), models.end(), [&](const ModelSpec& m) { return m.name == name; });
    if (model == models.end()) {
      fail(ErrorCode::InvalidArgument, "--model-config '{}': no --model is named '{}'", spec, name);
    }
    if (model->engine) fail(ErrorCode::InvalidArgument, "--model-config: '{}' is given twice", name);
    model->engine = EngineConfig::from_json_file(file);
  }
}

}  // namespace izwi::server
