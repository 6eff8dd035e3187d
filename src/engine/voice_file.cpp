// Voice files: JSON, so a library of voices stays inspectable and diffable. Every float is written
// with enough digits (nlohmann prints doubles round-trip exact) to load back bit for bit.

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>

#include "common/check.h"
#include "common/json_fields.h"
#include "common/regular_file.h"
#include "izwi/voice.h"

namespace izwi {

namespace {

constexpr const char* kFormat = "izwi-voice";
constexpr int32_t kVersion = 1;
constexpr size_t kMaxXvectorWidth = 65536;

}  // namespace

void save_voice(const Voice& voice, const std::string& path) {
  if (voice.empty()) fail(ErrorCode::InvalidArgument, "cannot save an empty voice to '{}'", path);
  for (size_t i = 0; i < voice.xvector.size(); ++i) {
    if (!std::isfinite(voice.xvector[i])) {
      fail(ErrorCode::InvalidArgument, "voice xvector[{}] = {} is not finite", i, voice.xvector[i]);
    }
  }
  const nlohmann::json doc = {
      {"format", kFormat}, {"version", kVersion}, {"model_type", voice.model_type}, {"xvector", voice.xvector}};
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << doc.dump() << "\n";
  out.close();
  if (!out) fail(ErrorCode::InvalidArgument, "cannot write the voice file '{}'", path);
}

Voice load_voice(const std::string& path) {
  const std::string text = read_regular_file(path, "voice file", kMaxVoiceFileBytes);
  const nlohmann::json doc = parse_json(text, path);
  if (!doc.is_object()) fail(ErrorCode::InvalidFormat, "{}: not a voice file (the JSON is not an object)", path);
  const JsonFields fields(doc, path);
  if (fields.get_or<std::string>("format", "") != kFormat) {
    fail(ErrorCode::InvalidFormat, "{}: not a voice file (field 'format' is not \"{}\")", path, kFormat);
  }
  const int32_t version = fields.get<int32_t>("version");
  if (version != kVersion) {
    fail(ErrorCode::InvalidFormat, "{}: voice file version {} is not supported (this build reads {})", path, version,
         kVersion);
  }
  Voice voice;
  voice.model_type = fields.get<std::string>("model_type");
  const nlohmann::json& xvector = doc.contains("xvector") ? doc["xvector"] : nlohmann::json();
  if (!xvector.is_array() || xvector.empty() || xvector.size() > kMaxXvectorWidth) {
    fail(ErrorCode::InvalidFormat, "{}: field 'xvector' must be an array of 1 to {} numbers", path, kMaxXvectorWidth);
  }
  for (size_t i = 0; i < xvector.size(); ++i) {
    const nlohmann::json& value = xvector[i];
    // Finite as a float: 1e300 is a finite double but not a float.
    if (!value.is_number() || !(std::abs(value.get<double>()) <= std::numeric_limits<float>::max())) {
      fail(ErrorCode::InvalidFormat, "{}: xvector[{}] = {} is not a finite float", path, i, value.dump());
    }
    voice.xvector.push_back(static_cast<float>(value.get<double>()));
  }
  return voice;
}

}  // namespace izwi
