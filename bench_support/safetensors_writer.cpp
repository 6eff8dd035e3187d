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
  std::vector<SafetensorsEntry> entries;
  entries.reserve(tensors.size());
  for (const auto& [tensor_name, t] : tensors) entries.push_back({tensor_name, t, dtype, name});
  write_safetensors(path, entries);
}

void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& entries) {
  nlohmann::ordered_json header = {{"__metadata__", {{"format", "pt"}}}};
  uint64_t offset = 0;
  for (const SafetensorsEntry& e : entries) {
    const uint64_t bytes = static_cast<uint64_t>(e.tensor.numel()) * c10::elementSize(e.stored_as);
    header[e.name] = {
        {"dtype", e.dtype}, {"shape", e.tensor.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
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
  for (const SafetensorsEntry& e : entries) {
    const at::Tensor stored = e.tensor.to(at::kCPU, e.stored_as).contiguous();
    out.write(static_cast<const char*>(stored.data_ptr()), static_cast<std::streamsize>(stored.nbytes()));
  }
  out.flush();
  if (!out) fail(ErrorCode::ResourceExhausted, "writing '{}' failed (disk full?)", path);
}

}  // namespace izwi
