#include "executor/device_profile_fence.h"

#include "common/check.h"
#if IZWI_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace izwi {

namespace {

#if IZWI_WITH_CUDA
// An error is left for the op's next CUDA call to report: timers wait in their destructors, which
// must not throw.
void wait_for_cuda() { static_cast<void>(cudaDeviceSynchronize()); }
#endif

}  // namespace

OpProfileFence device_profile_fence(const at::Device& device) {
  if (device.is_cpu()) return nullptr;
#if IZWI_WITH_CUDA
  if (device.is_cuda()) return &wait_for_cuda;
#endif
  fail(ErrorCode::Unsupported, "the op profile cannot wait for device '{}'", device.str());
}

}  // namespace izwi
