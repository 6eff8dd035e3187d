// The table lookups behind every enum's name (common/enum_names.h) and the public to_string
// functions built on them.

#include <gtest/gtest.h>

#include <string>

#include "common/enum_names.h"
#include "common/op_profile.h"
#include "izwi/chat.h"
#include "izwi/errors.h"
#include "izwi/output.h"

namespace izwi {
namespace {

enum class Fruit { Apple, Pear, Plum };
constexpr EnumName<Fruit> kFruitNames[] = {{Fruit::Apple, "apple"}, {Fruit::Pear, "pear"}, {Fruit::Plum, "plum"}};
static_assert(enum_names_in_order(kFruitNames));
constexpr EnumName<Fruit> kSkipsPear[] = {{Fruit::Apple, "apple"}, {Fruit::Plum, "plum"}};
static_assert(!enum_names_in_order(kSkipsPear));
constexpr EnumName<Fruit> kSwapped[] = {{Fruit::Pear, "pear"}, {Fruit::Apple, "apple"}};
static_assert(!enum_names_in_order(kSwapped));

TEST(EnumNames, NamesEveryValueAndFallsBackOutsideTheTable) {
  EXPECT_STREQ(enum_name(kFruitNames, Fruit::Apple, "?"), "apple");
  EXPECT_STREQ(enum_name(kFruitNames, Fruit::Plum, "?"), "plum");
  EXPECT_STREQ(enum_name(kFruitNames, static_cast<Fruit>(3), "?"), "?");
  EXPECT_STREQ(enum_name(kFruitNames, static_cast<Fruit>(-1), "?"), "?");
}

TEST(EnumNames, ParsesExactNamesOnly) {
  EXPECT_EQ(enum_from_name(kFruitNames, "pear"), Fruit::Pear);
  EXPECT_EQ(enum_from_name(kFruitNames, "Pear"), std::nullopt);
  EXPECT_EQ(enum_from_name(kFruitNames, "pea"), std::nullopt);
  EXPECT_EQ(enum_from_name(kFruitNames, ""), std::nullopt);
}

TEST(EnumNames, PublicNamesAreUnchanged) {
  EXPECT_STREQ(to_string(ErrorCode::InvalidArgument), "InvalidArgument");
  EXPECT_STREQ(to_string(ErrorCode::Internal), "Internal");
  EXPECT_STREQ(to_string(static_cast<ErrorCode>(99)), "Unknown");
  EXPECT_STREQ(to_string(FinishReason::None), "none");
  EXPECT_STREQ(to_string(FinishReason::Length), "length");
  EXPECT_STREQ(to_string(FinishReason::Error), "error");
  EXPECT_STREQ(to_string(static_cast<FinishReason>(99)), "unknown");
  EXPECT_STREQ(to_string(ChatTemplateFamily::ChatML), "ChatML");
  EXPECT_STREQ(to_string(ChatTemplateFamily::Mistral), "Mistral");
  EXPECT_STREQ(profiled_op_name(ProfiledOp::AttentionInputs), "attention_inputs");
  EXPECT_STREQ(profiled_op_name(static_cast<ProfiledOp>(99)), "?");
}

}  // namespace
}  // namespace izwi
