// The table-driven config.json reader (io/config_fields.h): what an absent key means per row, the
// member's type, and the range errors that name the origin and the key.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "common/error_message.h"
#include "io/config_fields.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;

struct Shape {
  int64_t layers = 0;
  int64_t width = 7;
  int32_t rate = 0;
  double eps = 1e-6;
  double theta = 0;
};

constexpr ConfigField<Shape> kShapeFields[] = {
    {"layers", &Shape::layers, 1, 64, kRequired},    {"width", &Shape::width, 1, 1024},
    {"rate", &Shape::rate, 1000, 48000, 16000},      {"eps", &Shape::eps, 0, 0.1},
    {"theta", &Shape::theta, 0, 1e6, 10000.0, true},
};

Shape read(const nlohmann::json& json) {
  Shape shape;
  read_checked_fields(JsonFields(json, "config.json"), kShapeFields, shape);
  return shape;
}

TEST(ConfigFields, AbsentKeysTakeTheRowsDefaultOrKeepTheMember) {
  const Shape shape = read({{"layers", 2}});
  EXPECT_EQ(shape.layers, 2);
  EXPECT_EQ(shape.width, 7);
  EXPECT_EQ(shape.rate, 16000);
  EXPECT_DOUBLE_EQ(shape.eps, 1e-6);
  EXPECT_DOUBLE_EQ(shape.theta, 10000.0);
  const Shape given = read({{"layers", 3}, {"width", 9}, {"rate", 24000}, {"eps", 1e-5}, {"theta", 5e5}});
  EXPECT_EQ(given.width, 9);
  EXPECT_EQ(given.rate, 24000);
  EXPECT_DOUBLE_EQ(given.eps, 1e-5);
  EXPECT_DOUBLE_EQ(given.theta, 5e5);
}

TEST(ConfigFields, RequiredKeyMissingOrMistypedNamesIt) {
  EXPECT_EQ(error_message([] { read({{"width", 9}}); }), "config.json: required field 'layers' is missing");
  EXPECT_EQ(error_code_of([] { read({{"layers", "two"}}); }), ErrorCode::InvalidFormat);
  EXPECT_NE(error_message([] { read({{"layers", "two"}}); }).find("'layers'"), std::string::npos);
  // int32 members are read as int32: a value past it is a type error, not a wrapped rate.
  EXPECT_NE(error_message([] {
              read({{"layers", 1}, {"rate", 4294967297}});
            }).find("outside the range"),
            std::string::npos);
}

TEST(ConfigFields, OutOfRangeValuesNameTheKeyAndRange) {
  EXPECT_EQ(error_message([] {
              read({{"layers", 65}});
            }),
            "config.json: field 'layers' is 65, it must be at least 1 and at most 64");
  EXPECT_EQ(error_message([] {
              read({{"layers", 1}, {"rate", 999}});
            }),
            "config.json: field 'rate' is 999, it must be at least 1000 and at most 48000");
  EXPECT_EQ(error_message([] {
              read({{"layers", 1}, {"eps", 0.5}});
            }),
            "config.json: field 'eps' is 0.5, it must be at least 0 and at most 0.1");
  // above_lo: the lower bound itself is out.
  EXPECT_EQ(error_message([] {
              read({{"layers", 1}, {"theta", 0}});
            }),
            "config.json: field 'theta' is 0, it must be above 0 and at most 1000000");
  EXPECT_EQ(error_message([] { read({{"layers", 1}, {"eps", 0}}); }), "");
}

}  // namespace
}  // namespace izwi
