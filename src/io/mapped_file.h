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
  /// Lets the kernel drop the resident pages of bytes [offset, offset + length): touched again,
  /// they are read from the file anew. A loader that has copied a tensor out then holds it once,
  /// not twice (a checkpoint's peak memory is its weights, not weights + file).
  void drop_pages(size_t offset, size_t length) const;
  const std::string& path() const { return path_; }

 private:
  void release() noexcept;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace izwi
