// available_memory_bytes: what EngineConfig::kv_cache_memory_fraction sizes the KV pool from.

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/error_message.h"
#include "common/temp_dir.h"
#include "executor/device_memory.h"

namespace izwi {
namespace {

// fn throws izwi::Error with `code` and a message naming `part`.
void expect_error(const std::function<void()>& fn, ErrorCode code, const std::string& part) {
  EXPECT_EQ(testing::error_code_of(fn), code);
  EXPECT_NE(testing::error_message(fn).find(part), std::string::npos) << testing::error_message(fn);
}

TEST(DeviceMemory, TheCpuReadsMemAvailable) {
  const testing::TempDir dir;
  const std::string meminfo = dir.write("meminfo",
                                        "MemTotal:       24576000 kB\n"
                                        "MemFree:         1000000 kB\n"
                                        "MemAvailable:   20000000 kB\n"
                                        "Buffers:           12345 kB\n");
  EXPECT_EQ(available_memory_bytes(at::kCPU, meminfo), int64_t{20000000} * 1024);
  EXPECT_GT(available_memory_bytes(at::kCPU), 0) << "this machine's /proc/meminfo";
}

TEST(DeviceMemory, AnUnreadableFigureIsAnErrorNamingTheFile) {
  const testing::TempDir dir;
  const std::string meminfo = dir.write("meminfo", "MemTotal:       24576000 kB\nMemAvailable: lots\n");
  expect_error([&] { available_memory_bytes(at::kCPU, meminfo); }, ErrorCode::Internal, meminfo);
  expect_error([&] { available_memory_bytes(at::kCPU, meminfo); }, ErrorCode::Internal, "MemAvailable");
  expect_error([&] { available_memory_bytes(at::kCPU, dir.file("missing")); }, ErrorCode::Internal,
               dir.file("missing"));
}

}  // namespace
}  // namespace izwi
