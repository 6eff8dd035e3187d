#include "izwi/errors.h"

#include "common/enum_names.h"
#include "izwi/output.h"

namespace izwi {

namespace {

constexpr EnumName<ErrorCode> kErrorCodeNames[] = {
    {ErrorCode::InvalidArgument, "InvalidArgument"},
    {ErrorCode::NotFound, "NotFound"},
    {ErrorCode::Unsupported, "Unsupported"},
    {ErrorCode::InvalidFormat, "InvalidFormat"},
    {ErrorCode::ResourceExhausted, "ResourceExhausted"},
    {ErrorCode::Aborted, "Aborted"},
    {ErrorCode::Internal, "Internal"},
};
static_assert(enum_names_in_order(kErrorCodeNames));

constexpr EnumName<FinishReason> kFinishReasonNames[] = {
    {FinishReason::None, "none"}, {FinishReason::Eos, "eos"},     {FinishReason::Length, "length"},
    {FinishReason::Stop, "stop"}, {FinishReason::Abort, "abort"}, {FinishReason::Error, "error"},
};
static_assert(enum_names_in_order(kFinishReasonNames));

}  // namespace

const char* to_string(ErrorCode code) noexcept { return enum_name(kErrorCodeNames, code, "Unknown"); }

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

const char* to_string(FinishReason reason) noexcept { return enum_name(kFinishReasonNames, reason, "unknown"); }

}  // namespace izwi
