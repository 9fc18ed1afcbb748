/*!
 * \file mxplug/profiler.h
 * \brief The profiler: records every engine function that runs while it is on (name, device,
 * thread, start, end) and writes Chrome trace JSON (chrome://tracing, Perfetto) and an aggregate
 * table per name. MXPLUG_PROFILER=trace.json turns it on for the whole run and writes the files
 * at exit. Python: mxplug.profiler.set_config(filename=...), set_state('run'|'stop'), dump(),
 * dumps().
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
    uint32_t thread;   // small per-thread index, in order of first event
    int64_t start_us, end_us;  // since the profiler's epoch
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

  std::vector<Event> Events() const;
  /*! \brief Chrome trace JSON of every event recorded so far. */
  std::string TraceJson() const;
  /*! \brief Count, total and mean time per name, slowest total first. */
  std::string AggregateTable() const;
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
  int64_t epoch_ns_;
};

}  // namespace mxplug

#endif  // MXPLUG_PROFILER_H_
