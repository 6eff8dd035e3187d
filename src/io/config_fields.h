#pragma once
// Table-driven reading of a config.json section: a row per numeric field names its key, the
// member it fills, the range its value must lie in, and what an absent key means. Each model's
// reader is then a table, plus the checks that relate fields to one another.
//
//   constexpr ConfigField<LlamaConfig> kFields[] = {
//       {"vocab_size", &LlamaConfig::vocab_size, 1, kMaxVocabSize, kRequired},
//       {"rms_norm_eps", &LlamaConfig::rms_norm_eps, 0, kMaxNormEps},  // absent: keeps the member's value
//   };
//   read_fields(fields, kFields, config);  // every key, typed; then any derived defaults
//   check_fields(fields.origin(), kFields, config);  // every range, with require_(real_)in_range's errors

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include "common/json_fields.h"
#include "io/hf_config.h"

namespace izwi {

/// What a row does when its key is absent (or null): fail, keep the member's current value (the
/// struct's default, or one the reader sets from other fields), or take the row's own default.
struct FieldDefault {
  enum class Kind { Required, Keep, Value };
  constexpr FieldDefault(double value) : kind(Kind::Value), value(value) {}  // a row's default, written as the number
  constexpr explicit FieldDefault(Kind kind) : kind(kind), value(0) {}
  Kind kind;
  double value;
};
inline constexpr FieldDefault kRequired{FieldDefault::Kind::Required};
inline constexpr FieldDefault kKeep{FieldDefault::Kind::Keep};

template <typename Config>
struct ConfigField {
  const char* key;
  std::variant<int64_t Config::*, int32_t Config::*, double Config::*> member;
  double lo;  ///< Integer fields: exact (every bound used is far below 2^53).
  double hi;
  FieldDefault absent = kKeep;
  bool above_lo = false;  ///< Real fields: the range is (lo, hi], for scales that must be positive.
};

/// Reads every row's key into `config` as the member's type: InvalidFormat naming the origin and
/// the key when a required one is missing or a value has the wrong type (JsonFields' errors).
template <typename Config, size_t N>
void read_fields(const JsonFields& fields, const ConfigField<Config> (&table)[N], Config& config) {
  for (const ConfigField<Config>& row : table) {
    std::visit(
        [&](auto member) {
          auto& out = config.*member;
          using T = std::remove_reference_t<decltype(out)>;
          switch (row.absent.kind) {
            case FieldDefault::Kind::Required:
              out = fields.get<T>(row.key);
              break;
            case FieldDefault::Kind::Keep:
              out = fields.get_or<T>(row.key, out);
              break;
            case FieldDefault::Kind::Value:
              out = fields.get_or<T>(row.key, static_cast<T>(row.absent.value));
              break;
          }
        },
        row.member);
  }
}

/// InvalidFormat naming `origin` and the first row whose value lies outside its range (the
/// messages of require_in_range and require_real_in_range).
template <typename Config, size_t N>
void check_fields(const std::string& origin, const ConfigField<Config> (&table)[N], const Config& config) {
  for (const ConfigField<Config>& row : table) {
    std::visit(
        [&](auto member) {
          const auto value = config.*member;
          if constexpr (std::is_floating_point_v<decltype(value)>) {
            require_real_in_range(origin, {{row.key, value, row.lo, row.hi, row.above_lo}});
          } else {
            require_in_range(origin, {{row.key, static_cast<int64_t>(value), static_cast<int64_t>(row.lo),
                                       static_cast<int64_t>(row.hi)}});
          }
        },
        row.member);
  }
}

/// read_fields then check_fields, for a table with no derived defaults.
template <typename Config, size_t N>
void read_checked_fields(const JsonFields& fields, const ConfigField<Config> (&table)[N], Config& config) {
  read_fields(fields, table, config);
  check_fields(fields.origin(), table, config);
}

}  // namespace izwi
