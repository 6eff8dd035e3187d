#include "common/test_device.h"

#include <ATen/Parallel.h>

#include <cstdlib>
#include <string>

namespace izwi::testing {

namespace {

std::string device_name() {
  const char* name = std::getenv("IZWI_TEST_DEVICE");
  return name != nullptr && *name != '\0' ? name : "cpu";
}

}  // namespace

at::Device test_device() { return at::Device(device_name()); }

EngineConfig test_engine_config() {
  EngineConfig config;
  config.device = device_name();
  return config;
}

namespace {

Backend backend_on_test_device(const std::string& dtype) {
  BackendOptions options;
  options.device = device_name();
  options.dtype = dtype;
  options.threads = at::get_num_threads();  // as the test binary has it
  return Backend(options);
}

}  // namespace

const Backend& test_backend() {
  if (test_device().is_cpu()) return Backend::host();
  static const Backend backend = backend_on_test_device("float32");
  return backend;
}

const Backend& test_bf16_backend() {
  static const Backend backend = backend_on_test_device("bfloat16");
  return backend;
}

}  // namespace izwi::testing
