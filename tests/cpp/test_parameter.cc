// Parameter structs: defaults, parsing of every field type, and the error texts users see.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "mxplug/op.h"
#include "mxplug/runtime.h"
#include "mxplug/sdk/parameter.hpp"

namespace {

using mxplug::KwArgs;
using mxplug::ParamError;
using mxplug::TShape;

struct TestParam : mxplug::Parameter<TestParam> {
  int num;
  bool flag;
  double rate;
  std::string name;
  TShape kernel;
  int mode;
  std::optional<int> axis;
  uint32_t count;
  MXPLUG_DECLARE_PARAMETER(TestParam) {
    MXPLUG_DECLARE_FIELD(num).set_lower_bound(1).describe("a count");
    MXPLUG_DECLARE_FIELD(flag).set_default(false);
    MXPLUG_DECLARE_FIELD(rate).set_default(0.5).set_range(0, 1);
    MXPLUG_DECLARE_FIELD(name).set_default("x");
    MXPLUG_DECLARE_FIELD(kernel).set_default(TShape{1, 1});
    MXPLUG_DECLARE_FIELD(mode).set_default(0).add_enum("max", 0).add_enum("avg", 1);
    MXPLUG_DECLARE_FIELD(axis).set_default(std::nullopt);
    MXPLUG_DECLARE_FIELD(count).set_default(3);
  }
};

std::string ErrorOf(const KwArgs& kwargs) {
  TestParam p;
  try {
    p.Init(kwargs, "TestOp");
  } catch (const ParamError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Parameter, DefaultsApplyWhenOnlyRequiredGiven) {
  TestParam p;
  p.Init({{"num", "4"}});
  EXPECT_EQ(p.num, 4);
  EXPECT_FALSE(p.flag);
  EXPECT_DOUBLE_EQ(p.rate, 0.5);
  EXPECT_EQ(p.name, "x");
  EXPECT_EQ(p.kernel, (TShape{1, 1}));
  EXPECT_EQ(p.mode, 0);
  EXPECT_FALSE(p.axis.has_value());
  EXPECT_EQ(p.count, 3u);
}

TEST(Parameter, ParsesEveryFieldType) {
  TestParam p;
  p.Init({{"num", " 7 "},
          {"flag", "True"},
          {"rate", "1e-1"},
          {"name", "conv"},
          {"kernel", "(3, 5)"},
          {"mode", "avg"},
          {"axis", "-1"},
          {"count", "9"}});
  EXPECT_EQ(p.num, 7);
  EXPECT_TRUE(p.flag);
  EXPECT_DOUBLE_EQ(p.rate, 0.1);
  EXPECT_EQ(p.name, "conv");
  EXPECT_EQ(p.kernel, (TShape{3, 5}));
  EXPECT_EQ(p.mode, 1);
  ASSERT_TRUE(p.axis.has_value());
  EXPECT_EQ(*p.axis, -1);
  EXPECT_EQ(p.count, 9u);
  p.Init({{"num", "1"}, {"axis", "None"}, {"flag", "0"}});
  EXPECT_FALSE(p.axis.has_value());
  EXPECT_FALSE(p.flag);
}

TEST(Parameter, ShapeForms) {
  for (auto [text, expected] :
       std::vector<std::pair<std::string, TShape>>{{"(2, 3)", TShape{2, 3}},
                                                   {"[4]", TShape{4}},
                                                   {"(5,)", TShape{5}},
                                                   {"()", TShape(std::vector<int64_t>{})},
                                                   {"7", TShape{7}}}) {
    TestParam p;
    p.Init({{"num", "1"}, {"kernel", text}});
    EXPECT_EQ(p.kernel, expected) << text;
  }
  for (std::string bad : {"(2,,3)", "(a)", "(2, 3", "", ",5"})
    EXPECT_NE(ErrorOf({{"num", "1"}, {"kernel", bad}}).find("expected a shape such as (2, 3)"),
              std::string::npos)
        << bad;
}

// MXNet's "tuple of <float>" (the aggregated updates' lrs and wds).
struct FloatsParam : mxplug::Parameter<FloatsParam> {
  std::vector<float> lrs;
  std::vector<float> wds;
  MXPLUG_DECLARE_PARAMETER(FloatsParam) {
    MXPLUG_DECLARE_FIELD(lrs);
    MXPLUG_DECLARE_FIELD(wds).set_default(std::vector<float>{0.5f, 2.0f});
  }
};

TEST(Parameter, FloatTupleForms) {
  for (auto [text, expected] :
       std::vector<std::pair<std::string, std::vector<float>>>{{"(0.1, 0.2)", {0.1f, 0.2f}},
                                                               {"[1e-3,4]", {1e-3f, 4.0f}},
                                                               {"(5,)", {5.0f}},
                                                               {"()", {}},
                                                               {"-0.25", {-0.25f}}}) {
    FloatsParam p;
    p.Init({{"lrs", text}});
    EXPECT_EQ(p.lrs, expected) << text;
    EXPECT_EQ(p.wds, (std::vector<float>{0.5f, 2.0f}));
  }
  FloatsParam p;
  for (std::string bad : {"(0.1,,2)", "(a, b)", "(1, 2", ""}) {
    try {
      p.Init({{"lrs", bad}}, "TestOp");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ParamError& e) {
      EXPECT_NE(std::string(e.what()).find("expected a tuple of numbers such as (0.1, 0.2)"),
                std::string::npos)
          << e.what();
    }
  }
  const auto& fields = FloatsParam::Fields();
  EXPECT_EQ(fields[0].type_text, "tuple of <float>");
  EXPECT_EQ(fields[1].default_text, "(0.5, 2)");
}

TEST(Parameter, ErrorsNameOpFieldValueAndWhatIsAllowed) {
  EXPECT_EQ(ErrorOf({{"num", "-3"}}),
            "TestOp: parameter 'num' = -3 is out of range: expected an integer >= 1");
  EXPECT_EQ(ErrorOf({{"num", "abc"}}),
            "TestOp: invalid value 'abc' for parameter 'num': expected an integer >= 1");
  EXPECT_EQ(ErrorOf({{"num", "2.5"}}),
            "TestOp: invalid value '2.5' for parameter 'num': expected an integer >= 1");
  EXPECT_EQ(ErrorOf({{"num", "1"}, {"foo", "bar"}}),
            "TestOp: unknown parameter 'foo'; valid parameters are num, flag, rate, name, kernel, "
            "mode, axis, count");
  EXPECT_EQ(ErrorOf({}), "TestOp: required parameter 'num' is missing: expected an integer >= 1");
  EXPECT_EQ(ErrorOf({{"num", "1"}, {"rate", "1.5"}}),
            "TestOp: parameter 'rate' = 1.5 is out of range: expected a number in [0, 1]");
  EXPECT_EQ(ErrorOf({{"num", "1"}, {"mode", "min"}}),
            "TestOp: invalid value 'min' for parameter 'mode': expected one of 'max', 'avg'");
  EXPECT_EQ(
      ErrorOf({{"num", "1"}, {"flag", "yes"}}),
      "TestOp: invalid value 'yes' for parameter 'flag': expected a boolean (true, false, 1 or 0)");
  EXPECT_EQ(ErrorOf({{"num", "1"}, {"count", "-1"}}),
            "TestOp: invalid value '-1' for parameter 'count': expected an integer");
  EXPECT_EQ(ErrorOf({{"num", "99999999999"}}),
            "TestOp: invalid value '99999999999' for parameter 'num': expected an integer >= 1");
  EXPECT_EQ(ErrorOf({{"num", "1"}, {"axis", "x"}}),
            "TestOp: invalid value 'x' for parameter 'axis': expected an integer, or None");
}

TEST(Parameter, MxnetAttributeKeysAreNotParameters) {
  TestParam p;
  EXPECT_NO_THROW(p.Init({{"num", "2"}, {"__lr_mult__", "0.1"}, {"__layout__", "NCHW"}}));
  EXPECT_EQ(p.num, 2);
}

TEST(Parameter, FieldsDescribeThemselves) {
  const auto& fields = TestParam::Fields();
  ASSERT_EQ(fields.size(), 8u);
  EXPECT_EQ(fields[0].name, "num");
  EXPECT_FALSE(fields[0].has_default);
  EXPECT_EQ(fields[0].doc, "a count");
  EXPECT_EQ(fields[4].default_text, "(1, 1)");
  EXPECT_EQ(fields[5].type_text, "{'max', 'avg'}");
  EXPECT_EQ(fields[5].default_text, "max");
  EXPECT_EQ(fields[6].default_text, "None");
}

// The same errors, end to end through a real plugin: FullyConnected from plugins/nn.
class PluginParams : public ::testing::Test {
 protected:
  void SetUp() override { mxplug::Runtime::Get().EnsureDefaultPluginsLoaded(); }
  static std::string ErrorOf(const KwArgs& kwargs) {
    try {
      mxplug::OpProperty prop(mxplug::Runtime::Get().GetOp("FullyConnected"), kwargs);
    } catch (const mxplug::Error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(PluginParams, FullyConnectedRejectsBadKwargsWithClearText) {
  EXPECT_EQ(
      ErrorOf({{"num_hidden", "-3"}}),
      "FullyConnected: parameter 'num_hidden' = -3 is out of range: expected an integer >= 1");
  EXPECT_EQ(
      ErrorOf({{"num_hidden", "abc"}}),
      "FullyConnected: invalid value 'abc' for parameter 'num_hidden': expected an integer >= 1");
  EXPECT_EQ(ErrorOf({{"num_hidden", "4"}, {"bias", "1"}}),
            "FullyConnected: unknown parameter 'bias'; valid parameters are num_hidden, no_bias, "
            "flatten");
  EXPECT_EQ(ErrorOf({}),
            "FullyConnected: required parameter 'num_hidden' is missing: expected an integer >= 1");
  EXPECT_EQ(ErrorOf({{"num_hidden", "4"}}), "no error");
}

TEST_F(PluginParams, FullyConnectedSchemaAsRegistered) {
  auto op = mxplug::Runtime::Get().GetOp("FullyConnected");
  ASSERT_EQ(op->params.size(), 3u);
  EXPECT_EQ(op->params[0].Summary(), "int >= 1, required");
  EXPECT_EQ(op->params[1].Summary(), "boolean, default false");
  EXPECT_EQ(op->params[2].Summary(), "boolean, default true");
  mxplug::OpProperty no_bias(op, {{"num_hidden", "2"}, {"no_bias", "true"}});
  EXPECT_EQ(no_bias.ListArguments(), (std::vector<std::string>{"data", "weight"}));
}

}  // namespace
