#include "mxplug/profiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mxplug/atomic_file.h"
#include "mxplug/error.h"

namespace mxplug {
namespace {

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint32_t ThreadIndex() {
  static std::atomic<uint32_t> next{0};
  thread_local uint32_t index = next.fetch_add(1);
  return index;
}

}  // namespace

Profiler::Profiler() : epoch_ns_(SteadyNs()) {
  if (const char* file = std::getenv("MXPLUG_PROFILER"); file && *file) {
    filename_ = file;
    running_ = true;
    // Written at exit; the engine drains before (its handler was registered later, runs first).
    std::atexit([] {
      try {
        Profiler::Get().Dump();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "[mxplug error] profiler: %s\n", e.what());
      }
    });
  }
}

Profiler& Profiler::Get() {
  static Profiler* profiler = new Profiler();  // never destroyed: engine workers may record late
  return *profiler;
}

void Profiler::SetConfig(const std::string& filename) {
  std::lock_guard<std::mutex> lock(mu_);
  filename_ = filename;
}

int64_t Profiler::Now() const { return (SteadyNs() - epoch_ns_) / 1000; }

void Profiler::Record(const char* name, Context ctx, int64_t start_us, int64_t end_us) {
  uint32_t thread = ThreadIndex();
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back({name ? name : "function", ctx, thread, start_us, end_us});
}

std::vector<Profiler::Event> Profiler::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

void Profiler::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
}

std::string Profiler::TraceJson() const {
  std::vector<Event> events = Events();
  // One trace "process" per device, one "thread" per engine worker.
  std::map<std::string, int> pids;
  nlohmann::json trace = nlohmann::json::array();
  for (const Event& e : events) {
    std::string device = e.ctx.ToString();
    auto [it, fresh] = pids.emplace(device, static_cast<int>(pids.size()));
    if (fresh)
      trace.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", it->second},
                       {"args", {{"name", device}}}});
    trace.push_back({{"name", e.name}, {"cat", "engine"}, {"ph", "X"}, {"ts", e.start_us},
                     {"dur", std::max<int64_t>(e.end_us - e.start_us, 0)}, {"pid", it->second},
                     {"tid", e.thread}, {"args", {{"device", device}}}});
  }
  return nlohmann::json{{"traceEvents", trace}, {"displayTimeUnit", "ms"}}.dump(1);
}

std::string Profiler::AggregateTable() const {
  struct Stat {
    int64_t count = 0, total_us = 0, max_us = 0;
  };
  std::map<std::string, Stat> stats;
  for (const Event& e : Events()) {
    Stat& s = stats[e.name];
    int64_t d = e.end_us - e.start_us;
    ++s.count;
    s.total_us += d;
    s.max_us = std::max(s.max_us, d);
  }
  std::vector<std::pair<std::string, Stat>> rows(stats.begin(), stats.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.total_us > b.second.total_us; });
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-32s %10s %14s %12s %12s\n", "Name", "Count", "Total (ms)",
                "Mean (us)", "Max (us)");
  out << line;
  for (const auto& [name, s] : rows) {
    std::snprintf(line, sizeof(line), "%-32s %10lld %14.3f %12.2f %12lld\n", name.c_str(),
                  static_cast<long long>(s.count), s.total_us / 1000.0,
                  static_cast<double>(s.total_us) / static_cast<double>(s.count),
                  static_cast<long long>(s.max_us));
    out << line;
  }
  return out.str();
}

void Profiler::Dump() const {
  std::string file;
  {
    std::lock_guard<std::mutex> lock(mu_);
    file = filename_;
  }
  try {
    WriteFileAtomically(file, TraceJson());
    WriteFileAtomically(file + ".txt", AggregateTable());
  } catch (const Error& e) {
    throw Error(std::string("profiler: ") + e.what(), kMXPUnavailable);
  }
}

}  // namespace mxplug
