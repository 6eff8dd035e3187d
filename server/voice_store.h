#pragma once
// The cloned voices a server holds (POST /v1/audio/voices): by id, thread-safe, and kept in a
// directory when the server is given one (--voices-dir), so they survive a restart. Each voice is
// two files there: ID.voice.json in the library's voice file format (save_voice / load_voice) and
// ID.meta.json, its name, model and creation time.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "izwi/voice.h"

namespace izwi::server {

struct StoredVoice {
  std::string id;  ///< "voice_" + 16 hex digits
  std::string name;
  std::string model;       ///< The served model that made it, the only one that speaks in it.
  int64_t created_at = 0;  ///< Unix time.
  Voice voice;
};

class VoiceStore {
 public:
  /// `dir` empty: voices live in memory only. Otherwise the directory is created when missing and
  /// every voice saved there is loaded; a file that cannot be read is logged and skipped.
  /// InvalidArgument naming the directory when it cannot be created or listed.
  VoiceStore(std::string dir, int32_t max_voices);

  /// Stores a new voice (saved to the directory first, when there is one) under a fresh id. 400
  /// (ApiError) when max_voices are held; InvalidArgument naming the file when it cannot be saved.
  std::shared_ptr<const StoredVoice> add(const std::string& name, const std::string& model, Voice voice);
  /// nullptr when no voice has `id`.
  std::shared_ptr<const StoredVoice> find(const std::string& id) const;
  /// Oldest first.
  std::vector<std::shared_ptr<const StoredVoice>> list() const;
  /// Forgets the voice and deletes its files; false when no voice has `id`.
  bool remove(const std::string& id);

  int32_t max_voices() const { return max_voices_; }

 private:
  void load_dir();
  std::string voice_path(const std::string& id) const;
  std::string meta_path(const std::string& id) const;

  const std::string dir_;
  const int32_t max_voices_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const StoredVoice>> voices_;
};

}  // namespace izwi::server
