// Per-device temp space and random streams, each behind an engine variable.
#include "mxplug/resource.h"

#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "environment/environment.h"
#include "mxplug/engine.h"
#include "mxplug/storage.h"
#include "registry/host_api.h"

namespace mxplug {
namespace {

// Note [Temp-space copies]
// Ops that need scratch memory serialise on a temp-space block's variable, so k blocks let k such
// ops run at once, and each block grows to the largest request among the ops it serves. Blocks
// beyond what can run at once only add memory: a ResNet-18 training step at batch 64 had two of
// MXNet's default four grow to 50 MB each (the convolutions' reorder scratch). A device has
// MXNet's MXNET_CPU_TEMP_COPY / MXNET_GPU_TEMP_COPY blocks where set, else, on the CPU, one per
// CPU worker (one by default; MXNet's default is 4) and, on an accelerator, MXNet's one. A block
// that grows hands its old memory straight back to the device (MXNet's DirectFree): left in the
// storage pool, the outgrown blocks of a ResNet-18 step (16, 34, 34, 42 and 43 MB) sat idle and
// raised its peak by 147 MiB.
int TempSpaceCopies(Context ctx) {
  if (ctx.IsHost())
    return static_cast<int>(EnvInteger("MXNET_CPU_TEMP_COPY", Engine::Get()->Workers(ctx), 1, 64));
  return static_cast<int>(EnvInteger("MXNET_GPU_TEMP_COPY", 1, 1, 64));
}

// One scratch block, grown on demand. Only the engine function holding its variable touches it.
class TempSpaceBlock : public detail::TempSpaceProvider {
 public:
  TempSpaceBlock(Context ctx, VarHandle var) : ctx_(ctx), var_(var) {
    resource_.struct_size = sizeof(resource_);
    resource_.kind = kMXPResourceTempSpace;
    resource_.handle = static_cast<detail::TempSpaceProvider*>(this);
  }
  void* Get(size_t bytes) override {
    if (!block_ || block_->bytes() < bytes) {
      if (block_) block_->SkipPoolOnFree();  // Note [Temp-space copies]
      if (block_ && !ctx_.IsHost()) {
        // Note [Event completion]: the device may still run earlier users' work on the old block
        // (and a test device runs this very call on its stream), so it goes back to the device
        // from a host function ordered after this one on the block's variable, which waits for
        // their events. Growth is rare.
        Engine::Get()->PushSync([old = std::move(block_)](RunContext) mutable { old.reset(); },
                                Context::CPU(), {}, {var_}, FnProperty::kNormal, 0,
                                "TempSpaceRelease");
      }
      block_.reset();  // free first: the old block is not needed and memory may be tight
      block_ = Storage::Alloc(bytes, ctx_);
    }
    return block_->data();
  }
  const MXPResource* resource() const { return &resource_; }

 private:
  Context ctx_;
  VarHandle var_;
  std::shared_ptr<Storage> block_;
  MXPResource resource_{};
};

// SplitMix64's finaliser: spreads (seed, device id) into an unrelated-looking Philox key.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A device's Philox stream: a key from (seed, device id) and the next unused counter. The key
// leaves the device type out (it is always the CPU's): gpu(i) draws what cpu(i) draws for the
// same seed, so a kernel that uses its draws as the CPU's does (Dropout) gives the same numbers
// on either, while devices of different ids draw differently (data-parallel replicas drop
// different units, as in MXNet).
class RandomStreamState : public detail::RandomProvider {
 public:
  RandomStreamState(Context ctx, uint64_t seed) : ctx_(ctx) {
    resource_.struct_size = sizeof(resource_);
    resource_.kind = kMXPResourceRandom;
    resource_.handle = static_cast<detail::RandomProvider*>(this);
    Reset(seed);
  }
  void Reset(uint64_t seed) {
    key_ = Mix(seed ^ Mix((uint64_t(uint32_t(kDLCPU)) << 32) | uint32_t(ctx_.dev_id)));
    counter_ = 0;
  }
  void Reserve(uint64_t blocks, uint64_t* key, uint64_t* counter) override {
    *key = key_;
    *counter = counter_;
    counter_ += blocks;
  }
  const MXPResource* resource() const { return &resource_; }

 private:
  Context ctx_;
  uint64_t key_ = 0, counter_ = 0;
  MXPResource resource_{};
};

struct DeviceResources {
  std::vector<std::unique_ptr<TempSpaceBlock>> temp;
  std::vector<VarHandle> temp_vars;
  size_t next_temp = 0;
  std::unique_ptr<RandomStreamState> random;
  VarHandle random_var = nullptr;
};

class Manager {
 public:
  static Manager& Get() {
    // Never destroyed: engine functions may use it at exit.
    static Manager* manager = new Manager();
    return *manager;
  }

  ResourceHandle TempSpace(Context ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceResources& d = Device(ctx);
    if (d.temp.empty()) {
      for (int i = TempSpaceCopies(ctx); i > 0; --i) {
        d.temp_vars.push_back(Engine::Get()->NewResourceVar());
        d.temp.push_back(std::make_unique<TempSpaceBlock>(ctx, d.temp_vars.back()));
      }
    }
    const size_t i = d.next_temp++ % d.temp.size();
    return {d.temp[i]->resource(), d.temp_vars[i]};
  }

  ResourceHandle Random(Context ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceResources& d = Device(ctx);
    if (!d.random) {
      d.random = std::make_unique<RandomStreamState>(ctx, seed_);
      d.random_var = Engine::Get()->NewResourceVar();
    }
    return {d.random->resource(), d.random_var};
  }

  void Seed(uint64_t seed, const Context* only) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!only) seed_ = seed;
    for (auto& [ctx, d] : devices_) {
      if (!d.random || (only && ctx != *only)) continue;
      RandomStreamState* state = d.random.get();
      Engine::Get()->PushSync([state, seed](RunContext) { state->Reset(seed); }, Context::CPU(), {},
                              {d.random_var}, FnProperty::kNormal, 0, "random.seed");
    }
    if (only && !devices_[*only].random) {
      devices_[*only].random = std::make_unique<RandomStreamState>(*only, seed);
      devices_[*only].random_var = Engine::Get()->NewResourceVar();
    }
  }

 private:
  struct Less {
    bool operator()(const Context& a, const Context& b) const {
      return std::pair(a.dev_type, a.dev_id) < std::pair(b.dev_type, b.dev_id);
    }
  };
  DeviceResources& Device(Context ctx) { return devices_[ctx]; }

  std::mutex mu_;
  uint64_t seed_ = Resources::kDefaultSeed;
  std::map<Context, DeviceResources, Less> devices_;
};

}  // namespace

ResourceHandle Resources::TempSpace(Context ctx) { return Manager::Get().TempSpace(ctx); }
ResourceHandle Resources::Random(Context ctx) { return Manager::Get().Random(ctx); }
void Resources::Seed(uint64_t seed) { Manager::Get().Seed(seed, nullptr); }
void Resources::Seed(uint64_t seed, Context ctx) { Manager::Get().Seed(seed, &ctx); }

}  // namespace mxplug
