#include "common/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/check.h"

namespace izwi {
namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a plain file";
}

}  // namespace

int open_regular_file(const std::string& path, std::string_view what, size_t* size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(ErrorCode::NotFound, "cannot open {} '{}': {}", what, path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(ErrorCode::InvalidFormat, "cannot stat {} '{}': {}", what, path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(ErrorCode::InvalidFormat, "{} '{}' is not a regular file ({})", what, path, file_kind(st.st_mode));
  }
  // Regular files ignore O_NONBLOCK; clear it anyway so reads behave as usual.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (size != nullptr) *size = static_cast<size_t>(st.st_size);
  return fd;
}

std::string read_regular_file(const std::string& path, std::string_view what, size_t max_bytes) {
  size_t size = 0;
  const int fd = open_regular_file(path, what, &size);
  if (size > max_bytes) {
    ::close(fd);
    fail(ErrorCode::ResourceExhausted, "{} '{}' is {} bytes, above the limit of {}", what, path, size, max_bytes);
  }
  std::string out;
  out.reserve(size);
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      fail(ErrorCode::InvalidFormat, "cannot read {} '{}': {}", what, path, std::strerror(err));
    }
    if (got == 0) break;
    if (out.size() + static_cast<size_t>(got) > max_bytes) {  // the file grew while being read
      ::close(fd);
      fail(ErrorCode::ResourceExhausted, "{} '{}' is above the limit of {} bytes", what, path, max_bytes);
    }
    out.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return out;
}

}  // namespace izwi
