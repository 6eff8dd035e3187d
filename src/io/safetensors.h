#pragma once
// Safetensors reader: an 8-byte little-endian header length, a JSON header, then the tensor
// bytes. Every rule of the format is checked before any byte is used (see parse_safetensors_header).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/mapped_file.h"

namespace izwi {

/// F8_E4M3 (float8_e4m3fn) holds FP8 checkpoints' weights; libtorch 1.x has no such type, so it
/// is read as its bytes (U8) and decoded by the quant readers.
enum class StDType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, F8_E4M3 };

/// Bytes per element.
size_t st_dtype_size(StDType dtype);
const char* st_dtype_name(StDType dtype);

struct StTensorInfo {
  std::string name;
  StDType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  ///< Offset of the first byte, relative to the data section.
  uint64_t end = 0;    ///< One past the last byte.
  int64_t numel() const;
};

/// Largest header accepted (the reference implementation uses the same cap).
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100ull * 1000 * 1000;

/// Parses and validates a whole safetensors file image. `origin` names it in errors.
/// Rules: header length <= 100 MB and inside the file; header is a UTF-8 JSON object; every
/// tensor has a known dtype, a non-negative shape whose element count x dtype size equals its
/// byte span (overflow-checked); tensors sorted by offset tile [0, data size) exactly.
/// Returns the tensors in file order and sets `data_offset` to the start of the data section.
std::vector<StTensorInfo> parse_safetensors(const uint8_t* file, size_t size, const std::string& origin,
                                            size_t* data_offset);

/// A mapped, validated safetensors file.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const std::vector<StTensorInfo>& tensors() const { return tensors_; }
  /// nullptr if absent.
  const StTensorInfo* find(const std::string& name) const;
  /// First byte of a tensor's data (not necessarily aligned).
  const uint8_t* data(const StTensorInfo& info) const { return file_.data() + data_offset_ + info.begin; }
  /// Drops the resident pages of a tensor's data once it has been copied out (MappedFile::drop_pages).
  void drop(const StTensorInfo& info) const { file_.drop_pages(data_offset_ + info.begin, info.end - info.begin); }

 private:
  MappedFile file_;
  size_t data_offset_ = 0;
  std::vector<StTensorInfo> tensors_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace izwi
