// libizwi_sentencepiece: a C interface to Debian's libsentencepiece, loaded by the tokenizer with
// dlopen(RTLD_LOCAL | RTLD_DEEPBIND) only when a folder has a tokenizer.model. libsentencepiece
// carries its own copy of protobuf-lite whose symbols clash with libtorch's libprotobuf when both
// are linked into one program (the process crashes in protobuf's static initialisation); loaded
// this way its symbols stay private to it.

#include <sentencepiece_processor.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

void copy_error(const std::string& message, char* error, size_t error_size) {
  if (error_size == 0) return;
  const size_t n = std::min(message.size(), error_size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* izwi_spm_load(const char* bytes, size_t size, char* error,
                                                           size_t error_size) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->LoadFromSerializedProto(absl::string_view(bytes, size));
  if (!status.ok()) {
    copy_error(status.ToString(), error, error_size);
    return nullptr;
  }
  return processor.release();
}

__attribute__((visibility("default"))) void izwi_spm_free(void* handle) {
  delete static_cast<sentencepiece::SentencePieceProcessor*>(handle);
}

__attribute__((visibility("default"))) int izwi_spm_piece_size(void* handle) {
  return static_cast<sentencepiece::SentencePieceProcessor*>(handle)->GetPieceSize();
}

/// The piece of `id`; *flags: 1 control, 2 unknown, 4 byte, 8 user-defined... (only 1, 2, 4 set).
__attribute__((visibility("default"))) const char* izwi_spm_piece(void* handle, int id, size_t* length, int* flags) {
  const auto* p = static_cast<sentencepiece::SentencePieceProcessor*>(handle);
  const std::string& piece = p->IdToPiece(id);
  *length = piece.size();
  *flags = (p->IsControl(id) ? 1 : 0) | (p->IsUnknown(id) ? 2 : 0) | (p->IsByte(id) ? 4 : 0);
  return piece.data();
}

/// Encodes `text`, handing the ids to sink(context, ids, count). Returns 0, or -1 with `error` set.
__attribute__((visibility("default"))) int izwi_spm_encode(void* handle, const char* text, size_t size,
                                                           void (*sink)(void*, const int*, size_t), void* context,
                                                           char* error, size_t error_size) {
  thread_local std::vector<int> ids;
  ids.clear();
  const auto status =
      static_cast<sentencepiece::SentencePieceProcessor*>(handle)->Encode(absl::string_view(text, size), &ids);
  if (!status.ok()) {
    copy_error(status.ToString(), error, error_size);
    return -1;
  }
  sink(context, ids.data(), ids.size());
  return 0;
}

}  // extern "C"
