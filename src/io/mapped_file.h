#pragma once
// A read-only memory map of a whole file (RAII).

#include <cstddef>
#include <cstdint>
#include <string>

namespace izwi {

class MappedFile {
 public:
  /// Maps `path`; NotFound if it cannot be opened. An empty file maps to size() == 0.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void release() noexcept;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace izwi
