// mxplug::sdk::Once (Note [No std::call_once]): what std::call_once promises, checked by counting.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mxplug/sdk/once.hpp"

namespace {

TEST(SdkOnce, RunsOnceAcrossThreadsAndEveryCallerSeesItsEffect) {
  mxplug::sdk::Once once;
  std::atomic<int> runs{0};
  int value = 0;  // written by the one run, read by every caller after Run returns
  std::atomic<int> saw_value{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&] {
      once.Run([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // callers arrive meanwhile
        value = 42;
        ++runs;
      });
      if (value == 42) ++saw_value;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(saw_value.load(), 16);
  once.Run([&] { ++runs; });
  EXPECT_EQ(runs.load(), 1);
}

TEST(SdkOnce, ARunThatThrowsPropagatesAndLeavesItToRunAgain) {
  mxplug::sdk::Once once;
  int runs = 0;
  EXPECT_THROW(once.Run([&] {
    ++runs;
    throw std::runtime_error("no device yet");
  }),
               std::runtime_error);
  once.Run([&] { ++runs; });
  once.Run([&] { ++runs; });
  EXPECT_EQ(runs, 2);
}

}  // namespace
