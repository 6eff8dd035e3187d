#include "io/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>

#include "common/check.h"
#include "common/json_fields.h"

namespace izwi {

namespace {

struct DTypeName {
  const char* name;
  StDType dtype;
  size_t size;
};

constexpr DTypeName kDTypes[] = {
    {"F64", StDType::F64, 8}, {"F32", StDType::F32, 4},   {"F16", StDType::F16, 2},         {"BF16", StDType::BF16, 2},
    {"I64", StDType::I64, 8}, {"I32", StDType::I32, 4},   {"I16", StDType::I16, 2},         {"I8", StDType::I8, 1},
    {"U8", StDType::U8, 1},   {"BOOL", StDType::BOOL, 1}, {"F8_E4M3", StDType::F8_E4M3, 1},
};

const DTypeName& lookup(StDType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d;
  }
  fail(ErrorCode::Internal, "unknown safetensors dtype enum");
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }

StTensorInfo parse_entry(const std::string& name, const nlohmann::json& entry, const std::string& origin) {
  if (!entry.is_object()) fail(ErrorCode::InvalidFormat, "{}: tensor '{}': entry is not an object", origin, name);
  StTensorInfo info;
  info.name = name;

  auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end() || !dtype_it->is_string()) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': missing string field 'dtype'", origin, name);
  }
  const std::string dtype = dtype_it->get<std::string>();
  const DTypeName* found = nullptr;
  for (const auto& d : kDTypes) {
    if (dtype == d.name) found = &d;
  }
  if (found == nullptr) fail(ErrorCode::Unsupported, "{}: tensor '{}': unsupported dtype '{}'", origin, name, dtype);
  info.dtype = found->dtype;

  auto shape_it = entry.find("shape");
  if (shape_it == entry.end() || !shape_it->is_array()) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': missing array field 'shape'", origin, name);
  }
  uint64_t numel = 1;
  for (const auto& dim : *shape_it) {
    if (!dim.is_number_unsigned()) {
      fail(ErrorCode::InvalidFormat, "{}: tensor '{}': shape entries must be non-negative integers", origin, name);
    }
    uint64_t d = dim.get<uint64_t>();
    if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || mul_overflows(numel, d, &numel)) {
      fail(ErrorCode::InvalidFormat, "{}: tensor '{}': element count overflows", origin, name);
    }
    info.shape.push_back(static_cast<int64_t>(d));
  }
  uint64_t nbytes = 0;
  if (mul_overflows(numel, found->size, &nbytes)) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': byte size overflows", origin, name);
  }

  auto offsets_it = entry.find("data_offsets");
  if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
      !(*offsets_it)[0].is_number_unsigned() || !(*offsets_it)[1].is_number_unsigned()) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': 'data_offsets' must be two non-negative integers", origin, name);
  }
  info.begin = (*offsets_it)[0].get<uint64_t>();
  info.end = (*offsets_it)[1].get<uint64_t>();
  if (info.end < info.begin) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': data_offsets end {} < begin {}", origin, name, info.end,
         info.begin);
  }
  if (info.end - info.begin != nbytes) {
    fail(ErrorCode::InvalidFormat, "{}: tensor '{}': shape and dtype {} need {} bytes but data_offsets span {}", origin,
         name, dtype, nbytes, info.end - info.begin);
  }
  return info;
}

}  // namespace

size_t st_dtype_size(StDType dtype) { return lookup(dtype).size; }
const char* st_dtype_name(StDType dtype) { return lookup(dtype).name; }

int64_t StTensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<StTensorInfo> parse_safetensors(const uint8_t* file, size_t size, const std::string& origin,
                                            size_t* data_offset) {
  if (size < 8)
    fail(ErrorCode::InvalidFormat, "{}: file is {} bytes, too short for a safetensors header", origin, size);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | file[i];
  if (header_len > kMaxSafetensorsHeaderBytes) {
    fail(ErrorCode::InvalidFormat, "{}: header length {} exceeds the {} byte limit", origin, header_len,
         kMaxSafetensorsHeaderBytes);
  }
  if (header_len > size - 8) {
    fail(ErrorCode::InvalidFormat, "{}: header length {} runs past the end of the {} byte file", origin, header_len,
         size);
  }
  const char* header_begin = reinterpret_cast<const char*>(file + 8);
  check_json_depth(std::string_view(header_begin, header_len), origin);
  // A DOM keeps only the last of repeated keys; the format forbids them, so the parser callback
  // tracks the keys of every open object and rejects a repeat (a tensor named twice above all).
  std::vector<std::set<std::string>> open_objects;
  const nlohmann::json::parser_callback_t reject_duplicates = [&](int, nlohmann::json::parse_event_t event,
                                                                  nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == nlohmann::json::parse_event_t::object_end) {
      open_objects.pop_back();
    } else if (event == nlohmann::json::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second) {
        if (open_objects.size() == 1)
          fail(ErrorCode::InvalidFormat, "{}: tensor '{}' appears more than once", origin, key);
        fail(ErrorCode::InvalidFormat, "{}: key '{}' appears more than once in one header entry", origin, key);
      }
    }
    return true;
  };
  nlohmann::json header;
  try {
    // nlohmann rejects invalid UTF-8 inside strings while parsing.
    header = nlohmann::json::parse(header_begin, header_begin + header_len, reject_duplicates);
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::InvalidFormat, "{}: header is not valid UTF-8 JSON: {}", origin, e.what());
  }
  if (!header.is_object()) fail(ErrorCode::InvalidFormat, "{}: header is not a JSON object", origin);

  std::vector<StTensorInfo> tensors;
  tensors.reserve(header.size());
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) fail(ErrorCode::InvalidFormat, "{}: '__metadata__' is not an object", origin);
      continue;
    }
    tensors.push_back(parse_entry(it.key(), it.value(), origin));
  }

  const uint64_t data_size = size - 8 - header_len;
  std::vector<const StTensorInfo*> by_offset;
  by_offset.reserve(tensors.size());
  for (const auto& t : tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const StTensorInfo* a, const StTensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t cursor = 0;
  for (const StTensorInfo* t : by_offset) {
    if (t->begin != cursor) {
      fail(ErrorCode::InvalidFormat, "{}: tensor '{}' starts at byte {} but the previous tensor ends at {} ({})",
           origin, t->name, t->begin, cursor, t->begin > cursor ? "gap" : "overlap");
    }
    cursor = t->end;
  }
  if (cursor != data_size) {
    fail(ErrorCode::InvalidFormat, "{}: tensors cover {} bytes but the data section has {} ({})", origin, cursor,
         data_size, cursor > data_size ? "file truncated" : "trailing bytes");
  }
  *data_offset = 8 + header_len;
  return tensors;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) {
  tensors_ = parse_safetensors(file_.data(), file_.size(), path, &data_offset_);
  for (size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
}

const StTensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace izwi
