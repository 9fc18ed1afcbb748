// The profiler records engine functions and writes a Chrome trace and an aggregate table.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mxplug/engine.h"
#include "mxplug/profiler.h"
#include "test_paths.h"

namespace mxplug {
namespace {

TEST(Profiler, RecordsEngineFunctionsAndWritesTraceAndTable) {
  Profiler& profiler = Profiler::Get();
  profiler.Clear();
  profiler.SetState(true);
  auto engine = Engine::Create(EngineType::kThreaded);
  VarHandle a = engine->NewVar(), b = engine->NewVar();
  for (int i = 0; i < 3; ++i) engine->PushSync([](RunContext) {}, Context::CPU(), {}, {a}, FnProperty::kNormal, 0, "WriteA");
  engine->PushSync([](RunContext) {}, Context::CPU(), {a}, {b}, FnProperty::kNormal, 0, "ReadAWriteB");
  engine->WaitForAll();
  profiler.SetState(false);
  engine->PushSync([](RunContext) {}, Context::CPU(), {}, {a}, FnProperty::kNormal, 0, "NotRecorded");
  engine->WaitForAll();

  std::vector<Profiler::Event> events = profiler.Events();
  ASSERT_EQ(events.size(), 4u);
  int write_a = 0;
  int64_t last_write_end = 0, read_start = 0;
  for (const auto& e : events) {
    EXPECT_LE(e.start_us, e.end_us);
    EXPECT_EQ(e.ctx, Context::CPU());
    if (std::string(e.name) == "WriteA") {
      ++write_a;
      last_write_end = std::max(last_write_end, e.end_us);
    } else {
      read_start = e.start_us;
    }
  }
  EXPECT_EQ(write_a, 3);
  EXPECT_GE(read_start, last_write_end);  // the read of a ran after the writes of a

  nlohmann::json trace = nlohmann::json::parse(profiler.TraceJson());
  int complete_events = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++complete_events;
    if (e["ph"] == "M") {
      EXPECT_EQ(e["args"]["name"], "cpu(0)");
    }
  }
  EXPECT_EQ(complete_events, 4);

  std::string table = profiler.AggregateTable();
  std::istringstream lines(table);
  std::string header, name;
  std::getline(lines, header);
  EXPECT_NE(header.find("Count"), std::string::npos);
  std::map<std::string, int> counts;
  long long count;
  std::string rest;
  while (lines >> name >> count && std::getline(lines, rest)) counts[name] = static_cast<int>(count);
  EXPECT_EQ(counts, (std::map<std::string, int>{{"WriteA", 3}, {"ReadAWriteB", 1}}));

  std::string file = test::kScratchDir + "/trace.json";
  profiler.SetConfig(file);
  profiler.Dump();
  std::ifstream in(file), in_table(file + ".txt");
  EXPECT_EQ(nlohmann::json::parse(in)["traceEvents"].size(), trace["traceEvents"].size());
  std::stringstream written;
  written << in_table.rdbuf();
  EXPECT_EQ(written.str(), table);
  profiler.Clear();
}

}  // namespace
}  // namespace mxplug
