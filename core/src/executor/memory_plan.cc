#include "executor/memory_plan.h"

#include <algorithm>
#include <cstdint>

namespace mxplug {

// Note [Memory plan]
// The steps run in the order given; a planned buffer lives from the step that first writes it to
// the last step that reads it (a step that adds to a buffer reads it too). Walking the steps:
//  - in place: a forward or backward step may write an output (or input gradient) over a tensor it
//    reads that the op lists in its in-place options for that phase, when that tensor is a planned
//    buffer of the same size and dtype that no other step reads (MXNet's "inplace" strategy);
//  - co-share: otherwise the output takes a free block, the smallest that fits or else the largest
//    (grown), and a block is free again once the last reader of its buffer has run (MXNet's
//    "co-share"). A block is taken only by a step that depends, through the data it reads, on
//    every step that used the block before: buffers of branches that may run at the same time never
//    share memory, so the plan costs no parallelism. Sharing a block also shares its engine
//    variable, so the engine orders the users of a block even where this analysis is too coarse.
// Dependencies are kept as one bitset of ancestors per step; past kMaxTracked steps (a bitset
// matrix of 32 MB) the plan shares by step order alone, and the engine variable keeps it correct.

namespace {

constexpr size_t kMaxTracked = 16384;

struct Block {
  size_t bytes = 0;
  bool free = false;
  std::vector<uint32_t> users;  // the steps that wrote or read its current buffer
  int pool = 0;
};

}  // namespace

MemoryPlan PlanMemory(const std::vector<PlanStep>& steps, const std::vector<size_t>& bytes,
                      const std::vector<BufferRole>& roles, const std::vector<int>& dtypes,
                      bool share, const std::vector<int>& pools) {
  const size_t nbuf = bytes.size(), nstep = steps.size();
  auto pool = [&](uint32_t b) { return pools.empty() ? 0 : pools[b]; };
  MemoryPlan plan;
  plan.storage.assign(nbuf, -1);
  auto planned = [&](uint32_t b) {
    return roles[b] == BufferRole::kInternal || roles[b] == BufferRole::kOutput;
  };

  std::vector<bool> used(nbuf, false);
  std::vector<uint32_t> refs(nbuf, 0);  // steps that read the buffer
  for (const PlanStep& s : steps) {
    std::vector<uint32_t> reads = s.reads;
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (uint32_t b : reads) ++refs[b], used[b] = true;
    for (uint32_t b : s.writes) used[b] = true;
  }
  for (size_t b = 0; b < nbuf; ++b) {
    if (!used[b] || roles[b] == BufferRole::kUnused || roles[b] == BufferRole::kExternal) continue;
    plan.report.naive += bytes[b];
    if (!planned(b))
      plan.report.planned += bytes[b];  // zero buffers and head inputs: their own arrays
  }

  // Ancestors of each step, through the last writer of each buffer it reads or writes.
  const bool track = share && nstep <= kMaxTracked;
  const size_t words = (nstep + 63) / 64;
  std::vector<std::vector<uint64_t>> ancestors(track ? nstep : 0, std::vector<uint64_t>(words, 0));
  if (track) {
    std::vector<int64_t> last_writer(nbuf, -1);
    for (size_t s = 0; s < nstep; ++s) {
      auto depend = [&](uint32_t b) {
        const int64_t w = last_writer[b];
        if (w < 0) return;
        for (size_t k = 0; k < words; ++k) ancestors[s][k] |= ancestors[w][k];
        ancestors[s][w / 64] |= uint64_t{1} << (w % 64);
      };
      for (uint32_t b : steps[s].reads) depend(b);
      for (uint32_t b : steps[s].writes) depend(b);
      for (uint32_t b : steps[s].writes) last_writer[b] = static_cast<int64_t>(s);
    }
  }
  auto is_ancestor = [&](uint32_t a, size_t s) {
    return !track || a == s || (ancestors[s][a / 64] >> (a % 64) & 1);
  };

  std::vector<Block> blocks;
  std::vector<bool> handed_on(nbuf, false);  // its block went to an output written in place
  auto release = [&](uint32_t b) {
    if (roles[b] == BufferRole::kOutput || handed_on[b] || plan.storage[b] < 0) return;
    blocks[plan.storage[b]].free = true;
  };
  for (size_t s = 0; s < nstep; ++s) {
    const PlanStep& step = steps[s];
    for (uint32_t b : step.writes) {
      if (!planned(b) || plan.storage[b] >= 0) continue;
      const size_t need = bytes[b];
      if (!share) {
        plan.storage[b] = static_cast<int>(blocks.size());
        blocks.push_back(Block{need, false, {}, pool(b)});
        continue;
      }
      for (const auto& [src, dst] : step.inplace) {
        if (dst != b || roles[src] != BufferRole::kInternal || plan.storage[src] < 0 ||
            handed_on[src] || refs[src] != 1 || bytes[src] != need || dtypes[src] != dtypes[b] ||
            pool(src) != pool(b))
          continue;
        plan.storage[b] = plan.storage[src];
        handed_on[src] = true;
        plan.report.inplace += need;
        break;
      }
      if (plan.storage[b] >= 0) continue;
      int fit = -1, grow = -1;
      for (size_t k = 0; k < blocks.size(); ++k) {
        const Block& blk = blocks[k];
        if (!blk.free || blk.pool != pool(b)) continue;
        bool ordered = true;
        for (uint32_t u : blk.users) ordered = ordered && is_ancestor(u, s);
        if (!ordered) continue;
        if (blk.bytes >= need) {
          if (fit < 0 || blk.bytes < blocks[fit].bytes) fit = static_cast<int>(k);
        } else if (grow < 0 || blk.bytes > blocks[grow].bytes) {
          grow = static_cast<int>(k);
        }
      }
      const int k = fit >= 0 ? fit : grow;
      if (k < 0) {
        plan.storage[b] = static_cast<int>(blocks.size());
        blocks.push_back(Block{need, false, {}, pool(b)});
        continue;
      }
      Block& blk = blocks[k];
      blk.free = false;
      blk.users.clear();
      blk.bytes = std::max(blk.bytes, need);
      plan.storage[b] = k;
      plan.report.shared += need;
    }
    auto touch = [&](uint32_t b) {
      if (plan.storage[b] < 0) return;
      std::vector<uint32_t>& users = blocks[plan.storage[b]].users;
      if (users.empty() || users.back() != s) users.push_back(static_cast<uint32_t>(s));
    };
    for (uint32_t b : step.writes) touch(b);
    std::vector<uint32_t> reads = step.reads;
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (uint32_t b : reads) {
      touch(b);
      if (planned(b) && --refs[b] == 0) release(b);
    }
    for (uint32_t b : step.writes)
      if (planned(b) && refs[b] == 0) release(b);  // written, read by no later step
  }
  for (const Block& blk : blocks) {
    plan.block_bytes.push_back(blk.bytes);
    plan.block_pool.push_back(blk.pool);
    plan.report.planned += blk.bytes;
  }
  return plan;
}

}  // namespace mxplug
