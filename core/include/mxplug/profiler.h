/*!
 * \file mxplug/profiler.h
 * \brief The profiler: records every engine function that runs while it is on (name, device,
 * thread, start, end) and writes Chrome trace JSON (chrome://tracing, Perfetto) and an aggregate
 * table per name. MXPLUG_PROFILER=trace.json turns it on for the whole run and writes the files
 * at exit. Users add their own events (MXNet's profiler objects: Task, Frame and Event spans,
 * Counter values, Marker instants), each in a category (its domain). Python:
 * mxplug.profiler.set_config(filename=...), set_state('run'|'stop'), dump(), dumps(), Domain...
 */
#ifndef MXPLUG_PROFILER_H_
#define MXPLUG_PROFILER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "mxplug/sdk/context.hpp"

namespace mxplug {

class Profiler {
 public:
  struct Event {
    const char* name;  // a literal, or "function" when the pusher gave none
    Context ctx;
    uint32_t thread;           // small per-thread index, in order of first event
    int64_t start_us, end_us;  // since the profiler's epoch
  };

  /*! \brief An event a user recorded: a span ('X'), a counter's value ('C') or an instant ('i'
   * with its scope: 'g' global, 'p' process, 't' thread). */
  struct UserEvent {
    std::string name, category;
    char phase;
    uint32_t thread;
    int64_t start_us, end_us;  // a counter or instant: end_us == start_us
    double value;              // a counter's
    char scope;                // an instant's
  };

  /*! \brief The process-wide profiler (reads MXPLUG_PROFILER on first use). */
  static Profiler& Get();

  /*! \brief Where Dump writes the trace; the aggregate table goes beside it as <file>.txt. */
  void SetConfig(const std::string& filename);
  const std::string& filename() const { return filename_; }
  void SetState(bool running) { running_.store(running, std::memory_order_release); }
  bool running() const { return running_.load(std::memory_order_relaxed); }

  /*! \brief Microseconds since the profiler's epoch. */
  int64_t Now() const;
  void Record(const char* name, Context ctx, int64_t start_us, int64_t end_us);

  /*! \brief A user's span, counter value or instant, recorded while the profiler runs. */
  void RecordSpan(const std::string& name, const std::string& category, int64_t start_us,
                  int64_t end_us);
  void RecordCounter(const std::string& name, const std::string& category, double value);
  void RecordInstant(const std::string& name, const std::string& category, char scope);

  std::vector<Event> Events() const;
  std::vector<UserEvent> UserEvents() const;
  /*! \brief Chrome trace JSON of every event recorded so far. */
  std::string TraceJson() const;
  /*! \brief Count, total and mean time per name, slowest total first. */
  std::string AggregateTable() const;
  /*! \brief MXNet's JSON of the same: {"Time": {category: {name: {"Count", "Total", "Min",
   * "Max", "Avg"}}}, "Unit": {"Time": "ms"}}, the engine's functions in category "operator". */
  std::string AggregateJson() const;
  /*! \brief Writes the trace to filename() and the table to filename().txt. \throws Error. */
  void Dump() const;
  /*! \brief Forgets the events recorded so far. */
  void Clear();

 private:
  Profiler();
  std::atomic<bool> running_{false};
  std::string filename_ = "profile.json";
  mutable std::mutex mu_;
  std::vector<Event> events_;
  std::vector<UserEvent> user_events_;
  int64_t epoch_ns_;
};

}  // namespace mxplug

#endif  // MXPLUG_PROFILER_H_
