#include "server/voice_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "common/check.h"
#include "server/api_error.h"
#include "server/server_log.h"

namespace izwi::server {

namespace fs = std::filesystem;

namespace {

constexpr const char* kVoiceSuffix = ".voice.json";
constexpr const char* kMetaSuffix = ".meta.json";
constexpr size_t kIdHexDigits = 16;
constexpr size_t kMaxMetaBytes = 64 << 10;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Ids the store makes: only these name files in the directory.
bool is_voice_id(const std::string& id) {
  const std::string prefix = "voice_";
  return id.size() == prefix.size() + kIdHexDigits && id.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(id.begin() + static_cast<std::ptrdiff_t>(prefix.size()), id.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string new_id() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("voice_{:016x}", random());
}

/// Writes `write(tmp)` then renames it over `path`, so a crash leaves the old file or the new one.
template <typename Write>
void write_atomically(const std::string& path, Write&& write) {
  const std::string tmp = path + ".tmp";
  write(tmp);
  std::error_code error;
  fs::rename(tmp, path, error);
  if (error) fail(ErrorCode::InvalidArgument, "cannot write {}: {}", path, error.message());
}

}  // namespace

VoiceStore::VoiceStore(std::string dir, int32_t max_voices) : dir_(std::move(dir)), max_voices_(max_voices) {
  if (dir_.empty()) return;
  std::error_code error;
  fs::create_directories(dir_, error);
  if (error || !fs::is_directory(dir_)) {
    fail(ErrorCode::InvalidArgument, "--voices-dir {}: cannot create the directory ({})", dir_,
         error ? error.message() : "not a directory");
  }
  load_dir();
}

std::string VoiceStore::voice_path(const std::string& id) const {
  return (fs::path(dir_) / (id + kVoiceSuffix)).string();
}

std::string VoiceStore::meta_path(const std::string& id) const {
  return (fs::path(dir_) / (id + kMetaSuffix)).string();
}

void VoiceStore::load_dir() {
  std::error_code error;
  fs::directory_iterator it(dir_, error);
  if (error) fail(ErrorCode::InvalidArgument, "--voices-dir {}: cannot list the directory ({})", dir_, error.message());
  std::set<std::string> used;  // files of voices, loaded or logged
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(error)) names.push_back(it->path().filename().string());
  for (const std::string& file : names) {
    if (!ends_with(file, kMetaSuffix)) continue;
    const std::string id = file.substr(0, file.size() - std::string(kMetaSuffix).size());
    if (!is_voice_id(id)) continue;  // logged below with the other files that are not voices
    used.insert(id + kMetaSuffix);   // logged here when it cannot be loaded
    used.insert(id + kVoiceSuffix);
    try {
      const std::string meta_file = meta_path(id);
      if (fs::file_size(meta_file) > kMaxMetaBytes) fail(ErrorCode::InvalidFormat, "{} is too large", meta_file);
      const nlohmann::json meta = nlohmann::json::parse(std::ifstream(meta_file), nullptr, false);
      if (!meta.is_object() || !meta.value("name", nlohmann::json()).is_string() ||
          !meta.value("model", nlohmann::json()).is_string() ||
          !meta.value("created_at", nlohmann::json()).is_number_integer()) {
        fail(ErrorCode::InvalidFormat, "{}: not a voice's sidecar (name, model, created_at)", meta_file);
      }
      auto voice = std::make_shared<StoredVoice>();
      voice->id = id;
      voice->name = meta["name"].get<std::string>();
      voice->model = meta["model"].get<std::string>();
      voice->created_at = meta["created_at"].get<int64_t>();
      voice->voice = load_voice(voice_path(id));
      voices_[id] = std::move(voice);
    } catch (const std::exception& e) {
      server_log()->warn("--voices-dir: skipped voice {}: {}", id, e.what());
    }
  }
  for (const std::string& file : names) {
    if (used.count(file) == 0) server_log()->warn("--voices-dir: skipped {} (not a voice the server saved)", file);
  }
  server_log()->info("loaded {} voices from {}", voices_.size(), dir_);
}

std::shared_ptr<const StoredVoice> VoiceStore::add(const std::string& name, const std::string& model, Voice voice) {
  auto stored = std::make_shared<StoredVoice>();
  stored->name = name;
  stored->model = model;
  stored->created_at =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  stored->voice = std::move(voice);
  // Saving under the lock keeps the count and the files in step; a voice file is ~200 KB at most.
  std::lock_guard<std::mutex> lock(mutex_);
  if (static_cast<int32_t>(voices_.size()) >= max_voices_) {
    throw ApiError(
        400, fmt::format("the server holds its maximum of {} voices (--max-voices); delete one first", max_voices_), {},
        "voice_limit_reached");
  }
  do {
    stored->id = new_id();
  } while (voices_.count(stored->id) != 0);
  if (!dir_.empty()) {
    write_atomically(voice_path(stored->id), [&](const std::string& tmp) { save_voice(stored->voice, tmp); });
    // The sidecar goes last: a voice file without one is skipped at load.
    write_atomically(meta_path(stored->id), [&](const std::string& tmp) {
      std::ofstream out(tmp);
      out << nlohmann::json{{"name", name}, {"model", model}, {"created_at", stored->created_at}}.dump();
      if (!out.flush()) fail(ErrorCode::InvalidArgument, "cannot write {}", tmp);
    });
  }
  voices_[stored->id] = stored;
  return stored;
}

std::shared_ptr<const StoredVoice> VoiceStore::find(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = voices_.find(id);
  return it == voices_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const StoredVoice>> VoiceStore::list() const {
  std::vector<std::shared_ptr<const StoredVoice>> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& entry : voices_) out.push_back(entry.second);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->created_at < b->created_at; });
  return out;
}

bool VoiceStore::remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (voices_.erase(id) == 0) return false;
  if (!dir_.empty()) {
    std::error_code error;
    // The sidecar first: a voice file left behind is skipped (and logged) at the next start.
    for (const std::string& path : {meta_path(id), voice_path(id)}) {
      if (!fs::remove(path, error) && error) server_log()->warn("cannot delete {}: {}", path, error.message());
    }
  }
  return true;
}

}  // namespace izwi::server
