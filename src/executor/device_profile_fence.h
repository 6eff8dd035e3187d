#pragma once
// The op profile's fence for a device (common/op_profile.h): what makes its timers cover GPU work.

#include <ATen/ATen.h>

#include "common/op_profile.h"

namespace izwi {

/// CUDA (builds with IZWI_WITH_CUDA): a wait for all of the current device's queued work. CPU:
/// null, as its ops are done when they return. Throws Unsupported for other devices.
OpProfileFence device_profile_fence(const at::Device& device);

}  // namespace izwi
