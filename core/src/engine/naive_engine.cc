// The naive engine: every function runs to completion on the pushing thread before the push
// returns, for debugging (MXPLUG_ENGINE=naive). Dependencies and errors follow exactly the same
// rules as the threaded engine, because both share EngineCore.
#include <map>

#include "engine/engine_core.h"
#include "mxplug/runtime.h"

namespace mxplug::engine_detail {

class NaiveEngine : public EngineCore {
 public:
  ~NaiveEngine() override {
    Drain();
    for (auto& kv : streams_) {
      auto device = Runtime::Get().GetDevice(kv.first.first);
      device->def.stream_destroy(device->def.user, kv.first.second, kv.second);
    }
  }

  EngineType type() const override { return EngineType::kNaive; }
  std::string Describe() const override { return "naive engine: functions run synchronously on the pushing thread"; }

 protected:
  void Execute(Opr* opr) override {
    RunContext rctx{opr->ctx, StreamFor(opr->ctx)};  // may throw: before `done` is in use
    Done done;
    opr->done = &done;
    Run(opr, rctx);
    done.Wait();  // an async function may complete from another thread
  }

 private:
  void* StreamFor(Context ctx) {
    if (ctx.dev_type == kDLCPU) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_pair(ctx.dev_type, ctx.dev_id);
    auto it = streams_.find(key);
    if (it != streams_.end()) return it->second;
    auto device = Runtime::Get().GetDevice(ctx.dev_type);
    void* stream = nullptr;
    ThrowIfError(device->def.stream_create(device->def.user, ctx.dev_id, &stream),
                 "naive engine: creating a stream on " + ctx.ToString());
    return streams_[key] = stream;
  }

  std::mutex mu_;
  std::map<std::pair<int32_t, int32_t>, void*> streams_;
};

std::unique_ptr<EngineCore> MakeNaiveEngine() { return std::make_unique<NaiveEngine>(); }

}  // namespace mxplug::engine_detail
