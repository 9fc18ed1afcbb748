// An asynchronous device for tests ("testdev", DLPack kDLExtDev, four devices). Its memory is host
// memory, but it behaves as a GPU does towards the host: each stream is a queue that a thread of
// its own runs later, every job delayed (MXPLUG_TESTDEV_DELAY_US, default 50 microseconds), so a
// copy or kernel queued on a stream is not done when the call that queued it returns. A host that
// let an engine function complete before its stream did would hand readers stale data and reuse
// memory still being written: the tests run on this device to catch exactly that.
//
// Kernels: when it registers, the device takes every kernel registered for the CPU so far
// (MXPHostApi::visit_kernels) and registers a kernel for the same op on itself that queues the CPU
// kernel's call on the stream. So every op the CPU plugins have runs here, and results can be
// compared with the CPU's exactly.
//
// Checks of the host's side of the contract: stream work must come from a thread bound to the
// stream's device (thread_start), and a failed job's error is reported by the next event recorded
// on its stream (see Event), or by the stream's synchronize when no event was recorded since.
// Collectives among its devices run on the host, in the calling thread (NCCL's role in the CUDA
// plugin). Three test hooks are exported (mxplug_testdev_*, by its own version script): one holds
// every stream still, one counts the events that exist, one the collectives run.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mxplug/plugin.hpp"

namespace {

constexpr int kDevices = 4;
constexpr uint64_t kMemoryBytes = uint64_t(1) << 30;  // what memory_info reports as total

std::chrono::microseconds Delay() {
  static const auto delay = [] {
    const char* env = std::getenv("MXPLUG_TESTDEV_DELAY_US");
    return std::chrono::microseconds(env ? std::atoi(env) : 50);
  }();
  return delay;
}

thread_local int tls_bound_device = -1;  // set by thread_start

// Test hooks, found with dlsym (extern "C" below): a gate that keeps every stream from starting
// its next job while held, so a test can know that stream work has not run yet; and a count of
// the events that exist.
std::mutex gate_mu;
std::condition_variable gate_cv;
bool gate_held = false;
std::atomic<int64_t> live_events{0};
std::atomic<int64_t> collectives{0};

void PassGate() {
  std::unique_lock<std::mutex> lock(gate_mu);
  gate_cv.wait(lock, [] { return !gate_held; });
}

// A queue of jobs run in order by a thread of its own, each after the delay.
class Stream {
 public:
  explicit Stream(int device) : device_(device), thread_([this] { Loop(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  int device() const { return device_; }

  void Enqueue(std::function<void()> job) {
    if (tls_bound_device != device_)
      throw std::logic_error("work queued on a stream of testdev(" + std::to_string(device_) +
                             ") from a thread bound to " +
                             (tls_bound_device < 0
                                  ? std::string("no device")
                                  : "testdev(" + std::to_string(tls_bound_device) + ")") +
                             " (the host skipped thread_start)");
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }

  // From a job of this stream: takes the error an earlier job raised, so that the event recorded
  // next reports it instead of the stream.
  std::exception_ptr TakeError() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(error_, nullptr);
  }

  // Waits for every job queued so far; rethrows (once) the first error a job raised.
  void Synchronize() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t target = queued_total_ + jobs_.size();
    cv_.wait(lock, [&] { return done_total_ >= target; });
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopped
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      ++queued_total_;
      lock.unlock();
      PassGate();
      std::this_thread::sleep_for(Delay());
      std::exception_ptr error;
      try {
        job();
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !error_) error_ = error;
      ++done_total_;
      cv_.notify_all();
    }
  }

  const int device_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  uint64_t queued_total_ = 0;  // jobs taken off the queue
  uint64_t done_total_ = 0;    // jobs finished
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

// Completes when the jobs queued on its stream before the record have run. A job of that stream
// that failed before the record is reported by the event (as a kernel fault on a GPU is by
// cudaEventSynchronize), each time it is waited for or queried, and passed on to a stream that
// waits for it (as CUDA's sticky errors reach later work).
struct Event {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0, reached = 0;  // generations
  uint64_t failed_generation = 0;      // the recording `error` belongs to
  std::exception_ptr error;

  // With mu held: rethrows the error of recording `generation`, if it had one.
  void ThrowIfFailed(uint64_t generation) const {
    if (error && failed_generation == generation) std::rethrow_exception(error);
  }
};

Stream* AsStream(void* s) { return static_cast<Stream*>(s); }
Event* AsEvent(void* e) { return static_cast<Event*>(e); }

// Host memory aligned as asked; a zero-byte request still gets a distinct block.
void* AlignedBlock(size_t bytes, size_t alignment) {
  void* p = std::aligned_alloc(
      alignment, std::max(alignment, (bytes + alignment - 1) / alignment * alignment));
  if (!p) throw std::bad_alloc();
  return p;
}

class TestDevice : public mxplug::DeviceBackend {
 public:
  int DeviceCount(std::string*) override { return kDevices; }
  std::string Describe(int dev_id) override {
    return "asynchronous test device " + std::to_string(dev_id) + " (host memory, delayed streams)";
  }
  void* Allocate(int dev_id, size_t bytes, size_t alignment) override {
    CheckId(dev_id);
    void* p = AlignedBlock(bytes, alignment);
    allocated_[dev_id] += bytes;
    sizes_mu_.lock();
    sizes_[p] = bytes;
    sizes_mu_.unlock();
    return p;
  }
  void Free(int dev_id, void* ptr) override {
    sizes_mu_.lock();
    auto it = sizes_.find(ptr);
    if (it != sizes_.end()) {
      allocated_[dev_id] -= it->second;
      sizes_.erase(it);
    }
    sizes_mu_.unlock();
    std::free(ptr);
  }
  void Copy(DLDevice, void* dst, DLDevice, const void* src, size_t bytes, void* stream) override {
    if (!stream) {
      std::memmove(dst, src, bytes);
      return;
    }
    AsStream(stream)->Enqueue([=] { std::memmove(dst, src, bytes); });
  }
  void Memset(int dev_id, void* ptr, int value, size_t bytes, void* stream) override {
    CheckId(dev_id);
    if (!stream) {
      std::memset(ptr, value, bytes);
      return;
    }
    // A value that is not a byte fails in the job, later, as a kernel fault does on a GPU: the
    // error must reach the host through the stream's synchronize.
    AsStream(stream)->Enqueue([=] {
      if (value < 0 || value > 255)
        throw std::invalid_argument(
            "testdev: memset value " + std::to_string(value) +
            " is not a byte (a fault reported by the stream, after the call)");
      std::memset(ptr, value, bytes);
    });
  }
  void MemoryInfo(int dev_id, uint64_t* free_bytes, uint64_t* total_bytes) override {
    CheckId(dev_id);
    *total_bytes = kMemoryBytes;
    *free_bytes = kMemoryBytes - std::min<uint64_t>(kMemoryBytes, allocated_[dev_id].load());
  }
  void Attributes(int dev_id, MXPDeviceAttributes* out) override {
    CheckId(dev_id);
    out->compute_capability_major = 9;
    out->compute_capability_minor = 0;
    out->multiprocessor_count = 4 + dev_id;
    out->warp_size = 32;
    out->max_threads_per_block = 1024;
    out->total_memory = kMemoryBytes;
    out->shared_memory_per_block = 48 << 10;
  }
  // "Pinned" host memory: ordinary memory that comes filled with the byte 0xA0 + device id, so
  // that a test can tell that a cpu_pinned array's block came from here, and for which device.
  // (CUDA's pinned memory comes uninitialised; tests there ask cudaPointerGetAttributes.)
  void* HostAllocate(int dev_id, size_t bytes) override {
    CheckId(dev_id);
    void* p = AlignedBlock(bytes, 64);
    std::memset(p, 0xA0 + dev_id, bytes);
    return p;
  }
  void HostFree(int, void* ptr) override { std::free(ptr); }

  void StartThread(int dev_id) override {
    CheckId(dev_id);
    tls_bound_device = dev_id;
  }

  void* CreateStream(int dev_id) override {
    CheckId(dev_id);
    auto* stream = new Stream(dev_id);
    std::lock_guard<std::mutex> lock(streams_mu_);
    streams_.insert(stream);
    return stream;
  }
  void DestroyStream(int, void* stream) override {
    {
      std::lock_guard<std::mutex> lock(streams_mu_);
      streams_.erase(AsStream(stream));
    }
    delete AsStream(stream);
  }
  void SynchronizeStream(int, void* stream) override { AsStream(stream)->Synchronize(); }
  void* CreateEvent(int dev_id) override {
    CheckId(dev_id);
    ++live_events;
    return new Event();
  }
  void DestroyEvent(int, void* event) override {
    --live_events;
    delete AsEvent(event);
  }
  void RecordEvent(int, void* event, void* stream) override {
    Event* e = AsEvent(event);
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(e->mu);
      generation = ++e->recorded;
    }
    Stream* s = AsStream(stream);
    s->Enqueue([e, s, generation] {
      std::exception_ptr error = s->TakeError();
      std::lock_guard<std::mutex> lock(e->mu);
      if (error) e->error = error, e->failed_generation = generation;
      e->reached = std::max(e->reached, generation);
      e->cv.notify_all();
    });
  }
  void WaitEvent(int, void* stream, void* event) override {
    Event* e = AsEvent(event);
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(e->mu);
      generation = e->recorded;
    }
    AsStream(stream)->Enqueue([e, generation] {
      WaitFor(e, generation);
      std::lock_guard<std::mutex> lock(e->mu);
      e->ThrowIfFailed(generation);  // becomes this stream's error
    });
  }
  void SynchronizeEvent(int, void* event) override {
    Event* e = AsEvent(event);
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(e->mu);
      generation = e->recorded;
    }
    WaitFor(e, generation);
    std::lock_guard<std::mutex> lock(e->mu);
    e->ThrowIfFailed(generation);
  }
  bool QueryEvent(int, void* event) override {
    Event* e = AsEvent(event);
    std::lock_guard<std::mutex> lock(e->mu);
    if (e->reached < e->recorded) return false;
    e->ThrowIfFailed(e->recorded);
    return true;
  }
  void Synchronize(int dev_id) override {
    CheckId(dev_id);
    std::lock_guard<std::mutex> lock(streams_mu_);
    for (Stream* s : streams_)
      if (s->device() == dev_id) s->Synchronize();
  }

  // Collectives, as NCCL's single-process ones are used (the host has checked the buffers: one
  // per device, of one dtype and size); complete on return. Sums run in the buffers' dtype, in
  // device order.
  void CollectiveReduce(int count, const DLTensor* const* inputs, DLTensor* output, int) override {
    std::vector<mxplug::TBlob> ordered;
    for (int i = 0; i < count; ++i) ordered.emplace_back(*inputs[i]);
    std::sort(ordered.begin(), ordered.end(), [](const mxplug::TBlob& a, const mxplug::TBlob& b) {
      return a.dev_.device_id < b.dev_.device_id;
    });
    const mxplug::TBlob out(*output);
    switch (out.type_flag_) {
      case kMXPFloat32:
        return Sum<float>(ordered, out);
      case kMXPFloat64:
        return Sum<double>(ordered, out);
      case kMXPInt32:
        return Sum<int32_t>(ordered, out);
      case kMXPInt64:
        return Sum<int64_t>(ordered, out);
      default:
        throw std::invalid_argument(
            "testdev: collective_reduce sums float32, float64, int32 and "
            "int64 only");
    }
  }
  void CollectiveBroadcast(int count, DLTensor* const* buffers, int root) override {
    const mxplug::TBlob from(*buffers[root]);
    const size_t bytes = from.Size() * mxplug::DTypeSize(from.type_flag_);
    for (int i = 0; i < count; ++i)
      if (i != root) std::memmove(mxplug::TBlob(*buffers[i]).dptr_, from.dptr_, bytes);
    ++collectives;
  }

 private:
  static void WaitFor(Event* e, uint64_t generation) {
    std::unique_lock<std::mutex> lock(e->mu);
    e->cv.wait(lock, [&] { return e->reached >= generation; });
  }
  template <typename T>
  static void Sum(const std::vector<mxplug::TBlob>& inputs, const mxplug::TBlob& output) {
    std::vector<T> total(output.Size(), T(0));
    for (const mxplug::TBlob& in : inputs) {
      const T* x = in.dptr<T>();
      for (size_t i = 0; i < total.size(); ++i) total[i] += x[i];
    }
    std::memcpy(output.dptr<T>(), total.data(), total.size() * sizeof(T));
    ++collectives;
  }
  static void CheckId(int dev_id) {
    if (dev_id < 0 || dev_id >= kDevices)
      throw std::out_of_range("testdev(" + std::to_string(dev_id) + ") does not exist; there are " +
                              std::to_string(kDevices));
  }
  std::atomic<uint64_t> allocated_[kDevices] = {};
  std::mutex sizes_mu_;
  std::map<void*, size_t> sizes_;
  std::mutex streams_mu_;
  std::set<Stream*> streams_;
};

// ---- Kernels: each CPU kernel, queued on the stream ----

struct Delegate {
  std::string op_name;
  MXPKernelDef cpu{};  // the CPU kernel's table
  MXPKernelDef def{};  // ours, registered for kDLExtDev
};

// A kernel instance: the CPU kernel's, shared with the calls still queued, so that the host may
// destroy the instance before its stream has run them.
struct Instance {
  const Delegate* delegate;
  void* cpu_state = nullptr;
  ~Instance() {
    if (cpu_state) delegate->cpu.destroy(delegate->cpu.user, cpu_state);
  }
};
using InstancePtr = std::shared_ptr<Instance>;

// A kernel call's arguments, owned by the queued job: the host's are valid only during the call.
// The tensors are said to be on the CPU, whose kernel runs them on this device's host memory.
class OwnedArgs {
 public:
  explicit OwnedArgs(const MXPKernelArgs& a) : args(a) {
    args.device = DLDevice{kDLCPU, 0};
    args.stream = nullptr;
    args.in_data = Own(a.in_data, a.num_in_data, 0);
    args.out_data = Own(a.out_data, a.num_out_data, 1);
    args.aux = Own(a.aux, a.num_aux, 2);
    args.out_grad = Own(a.out_grad, a.num_out_grad, 3);
    args.in_grad = Own(a.in_grad, a.num_in_grad, 4);
    for (size_t i = 0; i < a.num_requested; ++i) resources_.push_back(*a.requested[i]);
    for (const MXPResource& r : resources_) resource_ptrs_.push_back(&r);
    args.requested = resource_ptrs_.data();
    req_.assign(a.req, a.req + a.num_req);
    args.req = req_.data();
  }
  OwnedArgs(const OwnedArgs&) = delete;
  MXPKernelArgs args;

 private:
  const DLTensor* Own(const DLTensor* list, size_t n, int slot) {
    tensors_[slot].assign(list, list + n);
    for (DLTensor& t : tensors_[slot]) {
      t.device = DLDevice{kDLCPU, 0};
      if (t.shape) t.shape = dims_.emplace_back(t.shape, t.shape + t.ndim).data();
      if (t.strides) t.strides = dims_.emplace_back(t.strides, t.strides + t.ndim).data();
    }
    return tensors_[slot].data();
  }
  std::vector<DLTensor> tensors_[5];
  std::deque<std::vector<int64_t>> dims_;  // a deque: adding never moves the earlier ones
  std::vector<MXPResource> resources_;
  std::vector<const MXPResource*> resource_ptrs_;
  std::vector<int32_t> req_;
};

MXPStatus* Queue(void* state, const MXPKernelArgs* a, bool backward) {
  return mxplug::sdk::Guard([&] {
    InstancePtr instance = *static_cast<InstancePtr*>(state);
    auto owned = std::make_shared<OwnedArgs>(*a);
    auto run = [instance, owned, backward] {
      const MXPKernelDef& cpu = instance->delegate->cpu;
      MXPStatus* status =
          (backward ? cpu.backward : cpu.forward)(instance->cpu_state, &owned->args);
      mxplug::sdk::ThrowIfError(status);
    };
    if (a->stream)
      AsStream(a->stream)->Enqueue(run);
    else
      run();
  });
}

MXPStatus* RegisterKernels(const MXPHostApi* host, MXPRegistrar* registrar) {
  if (!MXP_HAS_FIELD(host, MXPHostApi, visit_kernels)) return nullptr;    // a host before 1.2
  static auto* delegates = new std::vector<std::unique_ptr<Delegate>>();  // for the process
  std::vector<std::unique_ptr<Delegate>> found;
  MXPStatus* status =
      host->visit_kernels(registrar, kDLCPU, &found, [](void* user, const MXPKernelDef* def) {
        auto d = std::make_unique<Delegate>();
        d->op_name = def->op_name;
        std::memcpy(&d->cpu, def, std::min(def->struct_size, sizeof(MXPKernelDef)));
        static_cast<std::vector<std::unique_ptr<Delegate>>*>(user)->push_back(std::move(d));
        return static_cast<MXPStatus*>(nullptr);
      });
  if (status) return status;
  for (auto& d : found) {
    MXPKernelDef& def = d->def;
    def.struct_size = MXP_STRUCT_SIZE(MXPKernelDef, backward);
    def.op_name = d->op_name.c_str();
    def.device_type = kDLExtDev;
    def.user = d.get();
    def.create = [](void* user, const char* const* keys, const char* const* values, size_t n,
                    DLDevice, void** state) {
      return mxplug::sdk::Guard([&] {
        auto* delegate = static_cast<const Delegate*>(user);
        auto instance = std::make_shared<Instance>(Instance{delegate});
        mxplug::sdk::ThrowIfError(delegate->cpu.create(delegate->cpu.user, keys, values, n,
                                                       DLDevice{kDLCPU, 0}, &instance->cpu_state));
        *state = new InstancePtr(std::move(instance));
      });
    };
    def.destroy = [](void*, void* state) { delete static_cast<InstancePtr*>(state); };
    def.forward = [](void* state, const MXPKernelArgs* a) { return Queue(state, a, false); };
    if (d->cpu.backward)
      def.backward = [](void* state, const MXPKernelArgs* a) { return Queue(state, a, true); };
    if ((status = host->register_kernel(registrar, &def))) return status;
    delegates->push_back(std::move(d));
  }
  return nullptr;
}

}  // namespace

// Holds (1) or releases (0) every stream's next job.
extern "C" __attribute__((visibility("default"))) void mxplug_testdev_hold_streams(int hold) {
  {
    std::lock_guard<std::mutex> lock(gate_mu);
    gate_held = hold != 0;
  }
  gate_cv.notify_all();
}

// Collectives run (collective_reduce and collective_broadcast calls that completed).
extern "C" __attribute__((visibility("default"))) int64_t mxplug_testdev_collectives() {
  return collectives.load();
}

// Events created and not yet destroyed.
extern "C" __attribute__((visibility("default"))) int64_t mxplug_testdev_live_events() {
  return live_events.load();
}

MXPLUG_REGISTER_DEVICE(testdev, kDLExtDev, TestDevice);
MXPLUG_REGISTER_AT_LOAD(testdev_kernels, &RegisterKernels);

MXPLUG_PLUGIN("test_device", "1.0.0", "tests")
