#pragma once
// Opening files from a model folder safely: a FIFO, socket, device or folder in place of a
// regular file would block forever in open()/read() or misbehave, so every file izwi reads by
// path is checked to be a regular file first (without blocking) and read with a size bound.

#include <cstddef>
#include <string>
#include <string_view>

namespace izwi {

/// Opens `path` read-only and returns its descriptor once fstat says it is a regular file.
/// The open itself cannot block (O_NONBLOCK). Throws NotFound if it cannot be opened and
/// InvalidFormat "'<path>' is not a regular file (<kind>)" otherwise; `what` leads the message
/// (e.g. "config file"). The caller closes the descriptor.
int open_regular_file(const std::string& path, std::string_view what, size_t* size = nullptr);

/// The whole contents of a regular file, at most `max_bytes` (ResourceExhausted above).
std::string read_regular_file(const std::string& path, std::string_view what, size_t max_bytes);

}  // namespace izwi
