#pragma once
// Typed access to JSON fields with errors that name the file and the field.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/check.h"

namespace izwi {

/// Deepest nesting of arrays and objects accepted in any JSON izwi reads (config.json, the
/// safetensors index and headers, generation_config.json, engine configs). Real files nest a few
/// levels; the bound keeps hostile files from exhausting the stack of code that walks the DOM.
constexpr size_t kMaxJsonDepth = 512;

/// Largest JSON file read_json_file reads (an index of a 1000-shard checkpoint is well under 1 MB).
constexpr size_t kMaxJsonFileBytes = size_t{64} << 20;

/// Throws InvalidFormat naming `origin` if `text` nests arrays/objects deeper than kMaxJsonDepth
/// (brackets inside strings do not count). Linear time, no allocation.
void check_json_depth(std::string_view text, const std::string& origin);

/// check_json_depth, then nlohmann's parser; syntax errors are InvalidFormat naming `origin`.
nlohmann::json parse_json(std::string_view text, const std::string& origin);

/// Parses a whole file as JSON; NotFound if missing, InvalidFormat if not a regular file, not
/// JSON, or nested deeper than kMaxJsonDepth; ResourceExhausted above kMaxJsonFileBytes.
nlohmann::json read_json_file(const std::string& path);

/// Name of a JSON value's type, e.g. "string".
const char* json_type_name(const nlohmann::json& value);

/// A JSON object plus its origin (file name and path inside it), for error messages.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string origin);

  bool has(const std::string& key) const;  ///< Present and not null.

  template <typename T>
  T get(const std::string& key) const {
    const nlohmann::json* value = find(key);
    if (value == nullptr) fail(ErrorCode::InvalidFormat, "{}: required field '{}' is missing", origin_, key);
    return convert<T>(*value, key);
  }

  template <typename T>
  T get_or(const std::string& key, T fallback) const {
    const nlohmann::json* value = find(key);
    return value == nullptr ? fallback : convert<T>(*value, key);
  }

  template <typename T>
  std::optional<T> get_optional(const std::string& key) const {
    const nlohmann::json* value = find(key);
    if (value == nullptr) return std::nullopt;
    return convert<T>(*value, key);
  }

  /// A nested object; InvalidFormat if present but not an object.
  std::optional<JsonFields> object(const std::string& key) const;

  const nlohmann::json& json() const { return *object_; }
  const std::string& origin() const { return origin_; }

 private:
  const nlohmann::json* find(const std::string& key) const;

  template <typename T>
  T convert(const nlohmann::json& value, const std::string& key) const {
    bool ok = false;
    if constexpr (std::is_same_v<T, bool>) {
      ok = value.is_boolean();
    } else if constexpr (std::is_integral_v<T>) {
      ok = value.is_number_integer();
      if (ok && !integer_fits<T>(value)) {
        fail(ErrorCode::InvalidFormat, "{}: field '{}' is {}, outside the range [{}, {}] of its type", origin_, key,
             value.dump(), std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      ok = value.is_number();
    } else if constexpr (std::is_same_v<T, std::string>) {
      ok = value.is_string();
    } else {
      ok = true;  // containers: nlohmann's conversion reports mismatches below
    }
    if (!ok) {
      fail(ErrorCode::InvalidFormat, "{}: field '{}' has type {}, which does not fit the expected type", origin_, key,
           json_type_name(value));
    }
    try {
      return value.get<T>();
    } catch (const nlohmann::json::exception& e) {
      fail(ErrorCode::InvalidFormat, "{}: field '{}': {}", origin_, key, e.what());
    }
  }

  // nlohmann's get<T>() narrows silently (4294967297 -> int32 1); check the stored value first.
  template <typename T>
  static bool integer_fits(const nlohmann::json& value) {
    if (value.is_number_unsigned()) {
      return value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
    const int64_t v = value.get<int64_t>();
    if constexpr (std::is_signed_v<T>) {
      return v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    } else {
      return v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
  }

  const nlohmann::json* object_;  ///< Not owned: the document must outlive this view.
  std::string origin_;
};

}  // namespace izwi
