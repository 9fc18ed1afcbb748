// Internal: the executor's memory plan (Note [Memory plan] in memory_plan.cc).
#ifndef MXPLUG_CORE_EXECUTOR_MEMORY_PLAN_H_
#define MXPLUG_CORE_EXECUTOR_MEMORY_PLAN_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "mxplug/executor.h"

namespace mxplug {

/*! \brief Where a buffer's memory comes from. */
enum class BufferRole {
  kUnused,     // no step touches it
  kExternal,   // an array the caller bound (arguments, auxiliary states, argument gradients)
  kInternal,   // planned: shares a block with buffers whose lifetimes do not overlap
  kOutput,     // planned, and never given back (the caller reads outputs after the steps)
  kZero,       // a gradient nothing produces: its own array, zeroed once at bind
  kHeadInput,  // where Backward copies a given output gradient: its own array
};

/*! \brief The buffers one step reads and writes, and the pairs (input, output) the op may share. */
struct PlanStep {
  std::vector<uint32_t> reads, writes;
  std::vector<std::pair<uint32_t, uint32_t>> inplace;
};

struct MemoryPlan {
  std::vector<int> storage;         // per buffer: its block, -1 when not planned
  std::vector<size_t> block_bytes;  // per block
  std::vector<int> block_pool;      // per block: the pool of its buffers
  MemoryReport report;
};

/*!
 * \brief Assigns a block to each kInternal and kOutput buffer, in step order. With `share` false
 * every buffer gets a block of its own (the naive plan). `pools` numbers each buffer's device
 * (empty: all one): buffers share blocks only within a pool.
 */
MemoryPlan PlanMemory(const std::vector<PlanStep>& steps, const std::vector<size_t>& bytes,
                      const std::vector<BufferRole>& roles, const std::vector<int>& dtypes,
                      bool share, const std::vector<int>& pools = {});

}  // namespace mxplug

#endif  // MXPLUG_CORE_EXECUTOR_MEMORY_PLAN_H_
