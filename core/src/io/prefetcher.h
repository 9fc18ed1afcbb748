// Makes the batches of an epoch ahead of the caller: worker threads make batch i, i+1, ... in
// parallel, at most `capacity` batches ahead of the one the caller takes next (so memory stays
// bounded however slow the caller is), and the caller takes them in order. An exception thrown
// making a batch is rethrown to the caller when it reaches that batch.
#ifndef MXPLUG_IO_PREFETCHER_H_
#define MXPLUG_IO_PREFETCHER_H_

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "mxplug/io.h"

namespace mxplug::io {

class Prefetcher {
 public:
  using MakeBatch = std::function<void(size_t batch, DataBatch* out)>;

  Prefetcher(int num_threads, int capacity);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  /*! \brief Stops the running epoch and starts making batches 0..num_batches-1 with `make`,
   * which is called from several threads at once. */
  void Start(size_t num_batches, MakeBatch make);
  /*! \brief Waits for the next batch; false after the last. \throws what `make` threw. */
  bool Next(DataBatch* out);

  // Note [Prefetching across fork] (prefetcher.cc): the pthread_atfork handlers.
  static void BeforeFork();
  static void InParentAfterFork();
  static void InChildAfterFork();

 private:
  struct Made {
    DataBatch batch;
    std::exception_ptr error;
  };
  void Stop();
  void Work();
  void StartThreads();
  // In a forked child: the threads were the parent's; make the batches not yet taken again.
  void RestartIfForkedLocked();

  const int num_threads_;
  const size_t capacity_;
  MakeBatch make_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<size_t, Made> made_;  // made, not yet taken
  size_t num_batches_ = 0;
  size_t next_to_make_ = 0;
  size_t next_to_take_ = 0;
  bool stopping_ = false;
  bool forked_ = false;  // the threads belong to the parent of this (forked) process
  std::vector<std::thread> threads_;
};

}  // namespace mxplug::io

#endif  // MXPLUG_IO_PREFETCHER_H_
