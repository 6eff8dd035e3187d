#pragma once
// How much memory a device can still give: what EngineConfig::kv_cache_memory_fraction sizes the
// paged KV pool from, once the weights are loaded.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

namespace izwi {

/// CPU: MemAvailable from `meminfo_path` (the kernel's estimate of what can be allocated without
/// swapping). CUDA (builds with IZWI_WITH_CUDA): the device's free bytes (cudaMemGetInfo). Throws
/// Unsupported for other devices and Internal when the figure cannot be read.
int64_t available_memory_bytes(const at::Device& device, const std::string& meminfo_path = "/proc/meminfo");

}  // namespace izwi
