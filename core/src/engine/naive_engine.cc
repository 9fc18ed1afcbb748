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
    for (auto& [key, stream] : streams_)
      Runtime::Get().GetDevice(key.first)->DestroyStream(key.second, stream);
  }

  EngineType type() const override { return EngineType::kNaive; }
  std::string Describe() const override {
    return "naive engine: functions run synchronously on the pushing thread";
  }
  int Workers(Context) const override { return 1; }

 protected:
  void Execute(Opr* opr) override {
    // May throw: before `done` is in use.
    std::shared_ptr<const DeviceEntry> device;
    void* stream = nullptr;
    if (!opr->ctx.IsHost() && opr->prop != FnProperty::kAsync &&
        opr->prop != FnProperty::kDeleteVar) {
      device = Runtime::Get().GetDevice(opr->ctx.dev_type);
      device->StartThread(opr->ctx.dev_id);  // the pushing thread runs it: bind it each time
      stream = StreamFor(*device, opr->ctx);
    }
    Done done;
    opr->done = &done;
    Run(opr, RunContext{opr->ctx, stream}, device.get());
    done.Wait();  // an async function may complete from another thread
  }

 private:
  void* StreamFor(const DeviceEntry& device, Context ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_pair(ctx.dev_type, ctx.dev_id);
    auto it = streams_.find(key);
    if (it != streams_.end()) return it->second;
    return streams_[key] = device.CreateStream(ctx.dev_id);
  }

  std::mutex mu_;
  std::map<std::pair<int32_t, int32_t>, void*> streams_;
};

std::unique_ptr<EngineCore> MakeNaiveEngine() { return std::make_unique<NaiveEngine>(); }

}  // namespace mxplug::engine_detail
