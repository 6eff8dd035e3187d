// Voice files: JSON, so a library of voices stays inspectable and diffable. Every float is written
// with enough digits (nlohmann prints doubles round-trip exact) to load back bit for bit.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>

#include "common/check.h"
#include "common/json_fields.h"
#include "common/regular_file.h"
#include "io/hf_config.h"
#include "izwi/voice.h"

namespace izwi {

namespace {

constexpr const char* kFormat = "izwi-voice";
constexpr int32_t kVersion = 1;
constexpr size_t kMaxXvectorWidth = 65536;
constexpr size_t kMaxReferenceFrames = 1 << 16;  // 87 minutes at 12.5 Hz
constexpr size_t kMaxReferenceIds = 1 << 20;

/// `doc[key]` as int32 values; InvalidFormat naming the file, the field and the entry.
std::vector<int32_t> int_array(const nlohmann::json& value, const std::string& path, const std::string& field,
                               size_t max_size) {
  if (!value.is_array() || value.size() > max_size) {
    fail(ErrorCode::InvalidFormat, "{}: field '{}' must be an array of at most {} integers", path, field, max_size);
  }
  std::vector<int32_t> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const nlohmann::json& v = value[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      fail(ErrorCode::InvalidFormat, "{}: {}[{}] = {} is not an integer in [0, 2^31)", path, field, i, v.dump());
    }
    out.push_back(static_cast<int32_t>(v.get<int64_t>()));
  }
  return out;
}

/// In-context fields come together, and every frame has the same number of codebooks.
void check_reference(const Voice& voice, const std::string& where, ErrorCode code) {
  if (voice.reference_text_ids.empty() != voice.reference_codes.empty()) {
    fail(code, "{}: an in-context voice needs both reference_text_ids and reference_codes", where);
  }
  for (size_t f = 0; f < voice.reference_codes.size(); ++f) {
    const size_t width = voice.reference_codes[f].size();
    if (width == 0 || width > static_cast<size_t>(kMaxCodebooks) || width != voice.reference_codes[0].size()) {
      fail(code, "{}: reference_codes[{}] has {} codes; every frame needs the same number, 1 to {}", where, f, width,
           kMaxCodebooks);
    }
  }
}

}  // namespace

void save_voice(const Voice& voice, const std::string& path) {
  if (voice.empty()) fail(ErrorCode::InvalidArgument, "cannot save an empty voice to '{}'", path);
  for (size_t i = 0; i < voice.xvector.size(); ++i) {
    if (!std::isfinite(voice.xvector[i])) {
      fail(ErrorCode::InvalidArgument, "voice xvector[{}] = {} is not finite", i, voice.xvector[i]);
    }
  }
  check_reference(voice, path, ErrorCode::InvalidArgument);
  nlohmann::json doc = {
      {"format", kFormat}, {"version", kVersion}, {"model_type", voice.model_type}, {"xvector", voice.xvector}};
  if (voice.in_context()) {
    doc["reference_text_ids"] = voice.reference_text_ids;
    doc["reference_codes"] = voice.reference_codes;
  }
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
  if (doc.contains("reference_text_ids")) {
    voice.reference_text_ids = int_array(doc["reference_text_ids"], path, "reference_text_ids", kMaxReferenceIds);
  }
  if (doc.contains("reference_codes")) {
    const nlohmann::json& frames = doc["reference_codes"];
    if (!frames.is_array() || frames.size() > kMaxReferenceFrames) {
      fail(ErrorCode::InvalidFormat, "{}: field 'reference_codes' must be an array of at most {} frames", path,
           kMaxReferenceFrames);
    }
    for (size_t f = 0; f < frames.size(); ++f) {
      voice.reference_codes.push_back(
          int_array(frames[f], path, fmt::format("reference_codes[{}]", f), static_cast<size_t>(kMaxCodebooks)));
    }
  }
  check_reference(voice, path, ErrorCode::InvalidFormat);
  return voice;
}

}  // namespace izwi
