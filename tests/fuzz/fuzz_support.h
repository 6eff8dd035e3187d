#pragma once
// Helpers shared by the fuzz targets: a per-process scratch folder for targets whose parser reads
// files, and a reader that turns the fuzzer's bytes into typed values (a small FuzzedDataProvider
// that also builds with GCC, for the replay binaries).

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace izwi::fuzz {

/// A fresh folder under $TMPDIR (or /tmp), removed when the process exits normally.
inline std::string scratch_dir(const char* tag) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/izwi-fuzz-" + tag + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) std::abort();
  static std::vector<std::string> made;
  made.emplace_back(buffer.data());
  static const bool registered = [] {
    std::atexit([] {
      std::error_code ec;
      for (const std::string& dir : made) std::filesystem::remove_all(dir, ec);
    });
    return true;
  }();
  (void)registered;
  return buffer.data();
}

inline void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) std::abort();
}

inline void write_file(const std::string& path, const std::string& text) { write_file(path, text.data(), text.size()); }

/// Consumes the input front to back; once it is exhausted every value is zero / empty.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  size_t remaining() const { return size_ - pos_; }

  template <typename T>
  T take() {
    T value{};
    const size_t n = std::min(sizeof(T), remaining());
    if (n > 0) std::memcpy(&value, data_ + pos_, n);  // an empty input may come as nullptr
    pos_ += n;
    return value;
  }

  uint8_t byte() { return take<uint8_t>(); }
  bool flag() { return (byte() & 1) != 0; }

  /// An integer in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    const uint64_t raw = take<uint64_t>();
    return span == 0 ? static_cast<int64_t>(raw) : lo + static_cast<int64_t>(raw % span);
  }

  /// A float that is often a special value: NaN, +-inf, 0, huge, tiny, or raw bits.
  float special_float() {
    switch (byte() % 10) {
      case 0:
        return std::numeric_limits<float>::quiet_NaN();
      case 1:
        return std::numeric_limits<float>::infinity();
      case 2:
        return -std::numeric_limits<float>::infinity();
      case 3:
        return 0.0f;
      case 4:
        return std::numeric_limits<float>::max();
      case 5:
        return std::numeric_limits<float>::denorm_min();
      case 6:
        return -1.0f;
      case 7:
        return static_cast<float>(byte()) / 64.0f;
      default:
        return take<float>();
    }
  }

  /// An int32 that is often a boundary value.
  int32_t special_int() {
    switch (byte() % 8) {
      case 0:
        return 0;
      case 1:
        return -1;
      case 2:
        return std::numeric_limits<int32_t>::max();
      case 3:
        return std::numeric_limits<int32_t>::min();
      case 4:
        return 1;
      case 5:
        return static_cast<int32_t>(byte());
      default:
        return take<int32_t>();
    }
  }

  /// Up to `max_len` bytes, ended early by a zero byte (which is consumed).
  std::string string(size_t max_len) {
    std::string out;
    while (out.size() < max_len && remaining() > 0) {
      const char c = static_cast<char>(data_[pos_++]);
      if (c == '\0') break;
      out.push_back(c);
    }
    return out;
  }

  /// Everything left.
  std::string rest() {
    std::string out(reinterpret_cast<const char*>(data_ + pos_), remaining());
    pos_ = size_;
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace izwi::fuzz
