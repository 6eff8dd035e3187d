#include "common/test_device.h"

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

}  // namespace izwi::testing
