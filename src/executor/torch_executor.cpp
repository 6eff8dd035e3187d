#include "executor/torch_executor.h"

#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>

#include "common/check.h"
#include "common/op_profile.h"

namespace izwi {

at::Device parse_device(const std::string& name) {
  at::Device device = at::kCPU;
  try {
    device = at::Device(name);
  } catch (const std::exception&) {
    fail(ErrorCode::InvalidArgument, "device '{}' is not one of cpu, cuda, cuda:N, mps", name);
  }
  if (device.is_cuda() && !at::hasCUDA()) {
    fail(ErrorCode::Unsupported, "device '{}': this libtorch build has no CUDA support or no GPU is visible", name);
  }
  if (device.is_mps() && !at::hasMPS()) {
    fail(ErrorCode::Unsupported, "device '{}': this libtorch build has no MPS support", name);
  }
  if (!device.is_cpu() && !device.is_cuda() && !device.is_mps()) {
    fail(ErrorCode::Unsupported, "device '{}' is not supported (cpu, cuda, mps)", name);
  }
  return device;
}

TorchExecutor::TorchExecutor(std::unique_ptr<CausalLM> model, const TorchExecutorOptions& options)
    : model_(std::move(model)),
      options_(options),
      backend_(select_kernel_backend(options.device, options.fast_kernels)) {}

void TorchExecutor::allocate_cache(int32_t num_blocks, int32_t block_size, int32_t num_state_slots) {
  try {
    cache_ = std::make_unique<CacheBuffers>(model_->cache_layout(), num_blocks, block_size, num_state_slots,
                                            at::TensorOptions().dtype(options_.dtype).device(options_.device),
                                            options_.kv_dtype);
  } catch (const c10::Error& e) {
    fail(ErrorCode::ResourceExhausted, "cannot allocate {} KV blocks of {} positions on {}: {}", num_blocks, block_size,
         options_.device.str(), e.what_without_backtrace());
  }
}

ForwardContext TorchExecutor::prepare(const StepBatch& batch) {
  IZWI_CHECK(cache_ != nullptr, "allocate_cache() must run before execute()");
  for (const BlockCopy& copy : batch.block_copies) cache_->copy_block(copy.src, copy.dst);
  return make_forward_context(batch, cache_->block_size(), options_.device, options_.dtype, backend_);
}

std::vector<StepOutput> TorchExecutor::execute(const StepBatch& batch) {
  c10::InferenceMode guard;
  const ForwardContext ctx = prepare(batch);
  at::Tensor hidden;
  {
    const OpTimer timer(ProfiledOp::Forward, ctx.num_tokens);
    hidden = model_->forward(ctx, *cache_);
  }
  std::vector<int64_t> last_rows;
  std::vector<SampleRow> rows;
  int64_t offset = 0;
  for (const StepSequence& s : batch.seqs) {
    offset += s.num_tokens;
    if (s.sampling == nullptr) continue;
    last_rows.push_back(offset - 1);
    rows.push_back(SampleRow{s.sampling, s.state});
  }
  if (rows.empty()) return {};
  const OpTimer timer(ProfiledOp::Sample, static_cast<int64_t>(rows.size()));
  at::Tensor index = at::tensor(last_rows, at::TensorOptions().dtype(at::kLong)).to(options_.device);
  return model_->sample(hidden.index_select(0, index), rows, ctx, *cache_, sampler_);
}

at::Tensor TorchExecutor::execute_logits(const StepBatch& batch) {
  c10::InferenceMode guard;
  const ForwardContext ctx = prepare(batch);
  return model_->logits(model_->forward(ctx, *cache_), ctx).to(at::kCPU, at::kFloat).contiguous();
}

}  // namespace izwi
