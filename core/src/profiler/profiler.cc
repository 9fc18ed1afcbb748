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
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
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

void Profiler::RecordSpan(const std::string& name, const std::string& category, int64_t start_us,
                          int64_t end_us) {
  if (!running()) return;
  uint32_t thread = ThreadIndex();
  std::lock_guard<std::mutex> lock(mu_);
  user_events_.push_back({name, category, 'X', thread, start_us, end_us, 0.0, 0});
}

void Profiler::RecordCounter(const std::string& name, const std::string& category, double value) {
  if (!running()) return;
  uint32_t thread = ThreadIndex();
  const int64_t now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  user_events_.push_back({name, category, 'C', thread, now, now, value, 0});
}

void Profiler::RecordInstant(const std::string& name, const std::string& category, char scope) {
  if (!running()) return;
  uint32_t thread = ThreadIndex();
  const int64_t now = Now();
  std::lock_guard<std::mutex> lock(mu_);
  user_events_.push_back({name, category, 'i', thread, now, now, 0.0, scope});
}

std::vector<Profiler::UserEvent> Profiler::UserEvents() const {
  std::lock_guard<std::mutex> lock(mu_);
  return user_events_;
}

std::vector<Profiler::Event> Profiler::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

void Profiler::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
  user_events_.clear();
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
      trace.push_back({{"name", "process_name"},
                       {"ph", "M"},
                       {"pid", it->second},
                       {"args", {{"name", device}}}});
    trace.push_back({{"name", e.name},
                     {"cat", "engine"},
                     {"ph", "X"},
                     {"ts", e.start_us},
                     {"dur", std::max<int64_t>(e.end_us - e.start_us, 0)},
                     {"pid", it->second},
                     {"tid", e.thread},
                     {"args", {{"device", device}}}});
  }
  // A user's events: one trace "process" per category (domain).
  for (const UserEvent& e : UserEvents()) {
    auto [it, fresh] = pids.emplace(e.category, static_cast<int>(pids.size()));
    if (fresh)
      trace.push_back({{"name", "process_name"},
                       {"ph", "M"},
                       {"pid", it->second},
                       {"args", {{"name", e.category}}}});
    nlohmann::json event = {
        {"name", e.name},   {"cat", e.category}, {"ph", std::string(1, e.phase)},
        {"ts", e.start_us}, {"pid", it->second}, {"tid", e.thread}};
    if (e.phase == 'X') event["dur"] = std::max<int64_t>(e.end_us - e.start_us, 0);
    if (e.phase == 'C') event["args"] = {{e.name, e.value}};
    if (e.phase == 'i') event["s"] = std::string(1, e.scope);
    trace.push_back(event);
  }
  return nlohmann::json{{"traceEvents", trace}, {"displayTimeUnit", "ms"}}.dump(1);
}

namespace {

struct Stat {
  int64_t count = 0, total_us = 0, min_us = 0, max_us = 0;
  void Add(int64_t d) {
    min_us = count ? std::min(min_us, d) : d;
    max_us = count ? std::max(max_us, d) : d;
    ++count;
    total_us += d;
  }
};

// Durations per category and name: the engine's functions under "operator", a user's spans
// under their domains.
std::map<std::string, std::map<std::string, Stat>> Durations(
    const std::vector<Profiler::Event>& events, const std::vector<Profiler::UserEvent>& user) {
  std::map<std::string, std::map<std::string, Stat>> stats;
  for (const Profiler::Event& e : events) stats["operator"][e.name].Add(e.end_us - e.start_us);
  for (const Profiler::UserEvent& e : user)
    if (e.phase == 'X') stats[e.category][e.name].Add(e.end_us - e.start_us);
  return stats;
}

}  // namespace

std::string Profiler::AggregateJson() const {
  nlohmann::json time = nlohmann::json::object();
  for (const auto& [category, names] : Durations(Events(), UserEvents()))
    for (const auto& [name, s] : names)
      time[category][name] = {{"Count", s.count},
                              {"Total", s.total_us / 1000.0},
                              {"Min", s.min_us / 1000.0},
                              {"Max", s.max_us / 1000.0},
                              {"Avg", s.total_us / 1000.0 / static_cast<double>(s.count)}};
  return nlohmann::json{{"Time", time}, {"Unit", {{"Time", "ms"}}}}.dump(4);
}

std::string Profiler::AggregateTable() const {
  // The engine's functions by name; a user's spans as "domain:name".
  std::vector<std::pair<std::string, Stat>> rows;
  for (const auto& [category, names] : Durations(Events(), UserEvents()))
    for (const auto& [name, s] : names)
      rows.emplace_back(category == "operator" ? name : category + ":" + name, s);
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
