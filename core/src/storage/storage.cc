#include "mxplug/storage.h"

#include <cstdlib>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "environment/environment.h"
#include "mxplug/error.h"
#include "mxplug/runtime.h"
#include "sync/spin_lock.h"

#if defined(__SANITIZE_ADDRESS__)
#define MXPLUG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MXPLUG_ASAN 1
#endif
#endif
#ifdef MXPLUG_ASAN
#include <sanitizer/asan_interface.h>
// A pooled block is poisoned while idle, so AddressSanitizer still reports use after free.
#define MXPLUG_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define MXPLUG_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define MXPLUG_POISON(p, n) ((void)(p), (void)(n))
#define MXPLUG_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace mxplug {
namespace {

// Note [Storage pool]
// Freed blocks are kept per (device, device id, size class) and handed to the next allocation of
// that class, as MXNet's pooled storage manager does: a training loop allocates the same sizes
// every step, and fresh memory costs a page fault per 4 KiB on first touch (a new 64 MiB output
// is ~16,000 faults) or a driver call on a GPU. Idle pooled bytes per device are capped by
// MXPLUG_STORAGE_POOL_MB (default 1024; 0 turns pooling off); when an allocation fails, the
// device's idle blocks are released and it is tried once more.
//
// Accelerators follow MXNet's GPU pool variables besides: MXNET_GPU_MEM_POOL_TYPE picks how sizes
// are classed ("Naive", the default: as on the CPU; "Round": powers of two up to
// 2^MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF bytes, default 2^24, multiples of that above, so that
// varying sizes reuse blocks at the cost of up to 2x; "Unpooled": every free goes back to the
// device at once), and MXNET_GPU_MEM_POOL_RESERVE (percent of the device's memory, default 5)
// keeps room for what allocates outside the pool (cuBLAS workspaces, other processes): before
// asking the device for a block that would leave less than that free, the pool releases its
// idle blocks of the device.

enum class PoolType { kNaive, kRound, kUnpooled };

struct AcceleratorPool {
  PoolType type = PoolType::kNaive;
  size_t linear_cutoff = size_t(1) << 24;
  uint64_t reserve_percent = 5;
  std::string error;  // a value it could not read: every accelerator allocation fails with it

  static const AcceleratorPool& Get() {
    static const AcceleratorPool pool = FromEnvironment();
    if (!pool.error.empty()) throw Error(pool.error, kMXPInvalidArgument);
    return pool;
  }

 private:
  static AcceleratorPool FromEnvironment() {
    AcceleratorPool p;
    try {
      if (const char* type = std::getenv("MXNET_GPU_MEM_POOL_TYPE"); type && *type) {
        const std::string t = type;
        if (t == "Round")
          p.type = PoolType::kRound;
        else if (t == "Unpooled")
          p.type = PoolType::kUnpooled;
        else if (t != "Naive")
          throw Error("MXNET_GPU_MEM_POOL_TYPE=" + t +
                      ": unknown pool type; expected Naive, Round or Unpooled");
      }
      p.linear_cutoff =
          size_t(1) << EnvInteger("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF", 24, 12, 40);
      p.reserve_percent =
          static_cast<uint64_t>(EnvInteger("MXNET_GPU_MEM_POOL_RESERVE", 5, 0, 100));
    } catch (const Error& e) {
      p.error = e.what();
    }
    return p;
  }
};

// Where a block comes from and goes back to: the memory of a device, or (pinned) the host memory
// its host_allocate page-locks (Note [Pinned host memory]).
struct Home {
  const DeviceEntry* device;
  int32_t id;
  bool pinned;

  bool accelerator() const { return !pinned && device->device_type != kDLCPU; }
  void* Allocate(size_t size) const {
    return pinned ? device->HostAllocate(id, size)
                  : device->Allocate(id, size, Storage::kAlignment);
  }
  void Free(void* ptr) const { pinned ? device->HostFree(id, ptr) : device->Free(id, ptr); }
  bool operator==(const Home& o) const {
    return device == o.device && id == o.id && pinned == o.pinned;
  }
};

// Requests round up to a power of two below a page, else to whole pages, so nearby sizes share;
// on an accelerator with the Round pool, as Note [Storage pool] says.
size_t SizeClass(const Home& home, size_t bytes) {
  constexpr size_t kPage = 4096;
  size_t c = Storage::kAlignment;
  if (home.accelerator() && AcceleratorPool::Get().type == PoolType::kRound) {
    const size_t cutoff = AcceleratorPool::Get().linear_cutoff;
    if (bytes > cutoff) return (bytes + cutoff - 1) / cutoff * cutoff;
    while (c < bytes) c *= 2;
    return c;
  }
  if (bytes > kPage) return (bytes + kPage - 1) / kPage * kPage;
  while (c < bytes) c *= 2;
  return c;
}

// Whether freed blocks of the home are kept for reuse.
bool Pooled(const Home& home) {
  return !home.accelerator() || AcceleratorPool::Get().type != PoolType::kUnpooled;
}

size_t PoolLimitBytes() {
  static const size_t limit = [] {
    const char* env = std::getenv("MXPLUG_STORAGE_POOL_MB");
    return static_cast<size_t>(env ? std::strtoull(env, nullptr, 10) : 1024) << 20;
  }();
  return limit;
}

class BlockPool {
 public:
  void* Take(const Home& home, size_t size) {
    std::lock_guard<detail::SpinLock> lock(mu_);
    auto it = free_.find(Key{home, size});
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* ptr = it->second.back();
    it->second.pop_back();
    idle_[home] -= size;
    if (!home.accelerator()) MXPLUG_UNPOISON(ptr, size);
    return ptr;
  }

  // Keeps the block when the home's idle bytes stay under the limit; false: the caller frees.
  bool Give(const Home& home, void* ptr, size_t size) {
    if (!Pooled(home)) return false;
    std::lock_guard<detail::SpinLock> lock(mu_);
    size_t& idle = idle_[home];
    if (idle + size > PoolLimitBytes()) return false;
    free_[Key{home, size}].push_back(ptr);
    if (!home.accelerator()) MXPLUG_POISON(ptr, size);
    idle += size;
    return true;
  }

  // Frees every idle block of one home (after its allocator said no).
  void Release(const Home& home) {
    std::vector<std::pair<void*, size_t>> blocks;
    {
      std::lock_guard<detail::SpinLock> lock(mu_);
      for (auto& [key, list] : free_)
        if (key.home == home) {
          for (void* p : list) blocks.emplace_back(p, key.size);
          list.clear();
        }
      idle_[home] = 0;
    }
    for (auto [p, size] : blocks) {
      if (!home.accelerator()) MXPLUG_UNPOISON(p, size);
      home.Free(p);
    }
  }

 private:
  struct HomeHash {
    size_t operator()(const Home& h) const {
      return (std::hash<const void*>()(h.device) * 31 + static_cast<size_t>(h.id)) * 2 + h.pinned;
    }
  };
  struct Key {
    Home home;
    size_t size;
    bool operator==(const Key& o) const { return home == o.home && size == o.size; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return HomeHash()(k.home) ^ (std::hash<size_t>()(k.size) * 0x9e3779b97f4a7c15ULL);
    }
  };
  detail::SpinLock mu_;  // Note [Short locks]
  std::unordered_map<Key, std::vector<void*>, KeyHash> free_;
  std::unordered_map<Home, size_t, HomeHash> idle_;
};

// Never destroyed, like the Runtime whose devices it holds blocks of (Note [No dlclose]).
BlockPool& Pool() {
  static auto* pool = new BlockPool();
  return *pool;
}

// MXNET_GPU_MEM_POOL_RESERVE: releases the device's idle blocks when a new block of `size` would
// leave less than the reserve free. A backend that does not report its memory reserves nothing.
void KeepReserve(const Home& home, size_t size) {
  const uint64_t percent = AcceleratorPool::Get().reserve_percent;
  if (percent == 0) return;
  uint64_t free_bytes = 0, total_bytes = 0;
  try {
    std::tie(free_bytes, total_bytes) = home.device->MemoryInfo(home.id);
  } catch (const Error&) {
    return;
  }
  if (free_bytes < size || free_bytes - size < total_bytes / 100 * percent) Pool().Release(home);
}

}  // namespace

std::shared_ptr<Storage> Storage::Alloc(size_t bytes, Context ctx) {
  Runtime& rt = Runtime::Get();
  // Copies and kernels of host memory go through the CPU backend; pinned blocks come from an
  // accelerator's host_allocate where one serves them (what CheckContext returns then).
  const DeviceEntry* allocator = &rt.CheckedBackend(ctx);
  const DeviceEntry* device = allocator;
  const bool pinned = ctx.IsHostPinned() && allocator->device_type != ctx.Compute().dev_type;
  if (pinned) device = rt.GetDevice(ctx.Compute().dev_type).get();
  const Home home{allocator, ctx.dev_id, pinned};
  // A zero-byte tensor still gets a distinct, valid pointer, as NumPy's do.
  const size_t size = SizeClass(home, bytes);
  void* data = Pool().Take(home, size);
  if (!data && home.accelerator()) KeepReserve(home, size);
  if (!data) {
    try {
      data = home.Allocate(size);
    } catch (const Error&) {
      Pool().Release(home);
      data = home.Allocate(size);
    }
  }
  return std::make_shared<Storage>(Key{}, device, allocator, pinned, ctx, data, bytes);
}

Storage::~Storage() {
  const Home home{allocator_, ctx_.dev_id, pinned_};
  if (!pooled_ || !Pool().Give(home, data_, SizeClass(home, bytes_))) home.Free(data_);
}

}  // namespace mxplug
