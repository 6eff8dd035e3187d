#include "io/weight_source.h"

#include "common/check.h"
#include "kernels/backend.h"
#include "quant/quantize.h"

namespace izwi {

namespace {
thread_local ResidentWeightBytes* current_count = nullptr;
}  // namespace

ResidentWeightBytes::ResidentWeightBytes() : previous_(current_count) { current_count = this; }

ResidentWeightBytes::~ResidentWeightBytes() { current_count = previous_; }

void ResidentWeightBytes::add(int64_t bytes) {
  if (current_count != nullptr) current_count->bytes_ += bytes;
}

at::Tensor WeightSource::checked_read(const std::string& name, const std::vector<int64_t>& shape) {
  at::Tensor t = read(name, shape);
  if (check_finite_ || t.numel() <= kAlwaysCheckedElements) {
    const int64_t bad = t.numel() - at::isfinite(t).sum().item<int64_t>();
    if (bad > 0) {
      const std::string where = location(name);
      fail(ErrorCode::InvalidFormat, "{}{}tensor '{}' holds {} non-finite value(s) (NaN or Inf)", where,
           where.empty() ? "" : ": ", name, bad);
    }
  }
  return t;
}

at::Tensor WeightSource::take(const std::string& name, const std::vector<int64_t>& shape) {
  at::Tensor t = checked_read(name, shape).to(device_, compute_dtype_).contiguous();
  ResidentWeightBytes::add(static_cast<int64_t>(t.nbytes()));
  return t;
}

at::Tensor WeightSource::take_matrix(const std::string& name, const std::vector<int64_t>& shape) {
  at::Tensor t = checked_read(name, shape);
  const at::ScalarType dtype = keep_bf16_ && t.scalar_type() == at::kBFloat16 ? at::kBFloat16 : weight_dtype_;
  at::Tensor held = t.to(device_, dtype).contiguous();
  ResidentWeightBytes::add(static_cast<int64_t>(held.nbytes()));
  return held;
}

std::optional<QuantizedMatrix> WeightSource::take_quantized(const std::string& name,
                                                            const std::vector<int64_t>& shape) {
  if (std::optional<QuantizedMatrix> stored = read_quantized(name, shape)) return stored;
  const WeightQuantization& how = backend().weight_quantization();
  if (!how.enabled) return std::nullopt;
  return quantize(checked_read(name, shape), how);
}

void WeightSource::set_backend(const Backend& backend) {
  IZWI_CHECK(backend.device() == device_ && backend.dtype() == compute_dtype_,
             "a weight source's backend must match its device and compute dtype");
  cpu_kernels_ = backend.panel_kernels();
  backend_ = &backend;
}

const Backend& WeightSource::backend() const { return backend_ != nullptr ? *backend_ : Backend::host(); }

}  // namespace izwi
