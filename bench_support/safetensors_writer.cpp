#include "bench_support/safetensors_writer.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/check.h"

namespace izwi {

namespace {

const char* dtype_name(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat:
      return "F32";
    case at::kBFloat16:
      return "BF16";
    case at::kHalf:
      return "F16";
    default:
      fail(ErrorCode::InvalidArgument, "write_safetensors: dtype {} is not float32, bfloat16 or float16",
           c10::toString(dtype));
  }
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                       at::ScalarType dtype) {
  const char* name = dtype_name(dtype);
  const size_t element = c10::elementSize(dtype);
  nlohmann::ordered_json header = {{"__metadata__", {{"format", "pt"}}}};
  uint64_t offset = 0;
  for (const auto& [tensor_name, t] : tensors) {
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * element;
    header[tensor_name] = {{"dtype", name}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(ErrorCode::NotFound, "cannot create '{}': {}", path, std::strerror(errno));
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  out.write(reinterpret_cast<const char*>(length), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [tensor_name, t] : tensors) {
    const at::Tensor stored = t.to(at::kCPU, dtype).contiguous();
    out.write(static_cast<const char*>(stored.data_ptr()), static_cast<std::streamsize>(stored.numel() * element));
  }
  out.flush();
  if (!out) fail(ErrorCode::ResourceExhausted, "writing '{}' failed (disk full?)", path);
}

}  // namespace izwi
