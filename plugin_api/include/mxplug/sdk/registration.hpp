/*!
 * \file mxplug/sdk/registration.hpp
 * \brief Registration for plugin authors: MXPLUG_PLUGIN (the one entry point, once per plugin),
 * MXPLUG_REGISTER_OP_PROPERTY, MXPLUG_REGISTER_KERNEL, MXPLUG_REGISTER_DEVICE,
 * MXPLUG_REGISTER_COMM and MXPLUG_REGISTER_PARAMETER. See Note [Registration is recorded, not
 * performed].
 *
 * Note [Registration is recorded, not performed]
 * The macros run at static-initialisation time, but they only append to this plugin's own
 * record list. Nothing reaches the host until the host has checked the ABI handshake and calls
 * register_all, which hands the records over. So a plugin of the wrong version registers nothing,
 * and a refused plugin leaves no trace. The record list is defined by MXPLUG_PLUGIN with hidden
 * visibility, so two plugins never share it, whatever flags they were built with.
 *
 * Every C function here is a trampoline that catches all exceptions and returns an MXPStatus.
 */
#ifndef MXPLUG_SDK_REGISTRATION_HPP_
#define MXPLUG_SDK_REGISTRATION_HPP_

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mxplug/abi/plugin.h"
#include "mxplug/sdk/comm_backend.hpp"
#include "mxplug/sdk/device_backend.hpp"
#include "mxplug/sdk/once.hpp"
#include "mxplug/sdk/operator.hpp"
#include "mxplug/sdk/operator_property.hpp"
#include "mxplug/sdk/parameter.hpp"

#if defined(__GNUC__)
#define MXPLUG_SDK_HIDDEN __attribute__((visibility("hidden")))
#else
#define MXPLUG_SDK_HIDDEN
#endif

namespace mxplug {

class OpRegistration;

namespace sdk {

struct KernelRecord;
struct DeviceRecord;
struct CommRecord;

/*! \brief Everything one plugin's macros recorded. */
struct PluginRecords {
  std::vector<OpRegistration*> ops;
  std::vector<KernelRecord*> kernels;
  std::vector<DeviceRecord*> devices;
  std::vector<CommRecord*> comms;
  std::vector<std::pair<const char*, void (*)()>> param_checks;
  // Registration code that needs the host (MXPLUG_REGISTER_AT_LOAD), run after the records.
  std::vector<MXPStatus* (*)(const MXPHostApi*, MXPRegistrar*)> at_load;
};

// Defined once per plugin by MXPLUG_PLUGIN.
MXPLUG_SDK_HIDDEN PluginRecords& Records();
MXPLUG_SDK_HIDDEN const MXPHostApi*& HostSlot();
MXPLUG_SDK_HIDDEN const char* PluginName();

inline const MXPHostApi* Host() { return HostSlot(); }

/*! \brief Turns a host status into an exception (freeing the status). */
inline void ThrowIfError(MXPStatus* status) {
  if (!status) return;
  std::string msg = Host()->status_message(status);
  Host()->status_free(status);
  throw std::runtime_error(msg);
}

inline MXPStatus* MakeStatus(int32_t code, const std::string& message) {
  return Host()->status_new(code, message.c_str());
}

/*! \brief Runs `fn`, turning any exception into a status: no exception crosses the ABI. */
template <typename Fn>
MXPStatus* Guard(Fn&& fn) noexcept {
  try {
    fn();
    return nullptr;
  } catch (const CommTimeout& e) {
    return MakeStatus(kMXPDeadlineExceeded, e.what());
  } catch (const std::invalid_argument& e) {
    return MakeStatus(kMXPInvalidArgument, e.what());
  } catch (const std::out_of_range& e) {
    return MakeStatus(kMXPOutOfRange, e.what());
  } catch (const std::bad_alloc&) {
    return MakeStatus(kMXPResourceExhausted, "out of memory");
  } catch (const std::exception& e) {
    return MakeStatus(kMXPInternal, e.what());
  } catch (...) {
    return MakeStatus(kMXPUnknown, "unknown C++ exception");
  }
}

inline KwArgs ToKwArgs(const char* const* keys, const char* const* values, size_t n) {
  KwArgs kwargs;
  kwargs.reserve(n);
  for (size_t i = 0; i < n; ++i) kwargs.emplace_back(keys[i], values[i]);
  return kwargs;
}

inline std::vector<TShape> ReadShapes(const MXPShapeSlots* slots) {
  std::vector<TShape> shapes(Host()->shape_count(slots));
  for (size_t i = 0; i < shapes.size(); ++i) {
    int32_t ndim = -1;
    const int64_t* dims = nullptr;
    ThrowIfError(Host()->shape_get(slots, i, &ndim, &dims));
    if (ndim >= 0) shapes[i] = TShape(dims, dims + ndim);
  }
  return shapes;
}

inline void WriteShapes(const std::vector<TShape>& shapes, MXPShapeSlots* slots, const char* what) {
  if (shapes.size() != Host()->shape_count(slots))
    throw std::logic_error(std::string("InferShape resized the ") + what + " shape list");
  for (size_t i = 0; i < shapes.size(); ++i)
    ThrowIfError(Host()->shape_set(slots, i, shapes[i].ndim(), shapes[i].data()));
}

inline OpContext ToOpContext(const MXPKernelArgs* a) {
  OpContext ctx;
  ctx.is_train = a->is_train != 0;
  ctx.run_ctx.ctx = Context{a->device.device_type, a->device.device_id};
  ctx.run_ctx.stream = a->stream;
  for (size_t i = 0; i < a->num_requested; ++i) {
    Resource r;
    r.raw = a->requested[i];
    r.host = Host();
    r.type =
        r.raw->kind == kMXPResourceRandom ? ResourceRequest::kRandom : ResourceRequest::kTempSpace;
    ctx.requested.push_back(r);
  }
  if (a->struct_size >= MXP_STRUCT_SIZE(MXPKernelArgs, on_complete_token) && a->on_complete) {
    ctx.async_on_complete = [fn = a->on_complete,
                             token = a->on_complete_token](std::exception_ptr error) {
      fn(token, error ? Guard([&] { std::rethrow_exception(error); }) : nullptr);
    };
  }
  return ctx;
}

inline uint32_t ResourceMask(const std::vector<ResourceRequest>& reqs) {
  uint32_t mask = 0;
  for (const ResourceRequest& r : reqs)
    mask |= r.type == ResourceRequest::kRandom ? kMXPResourceRandom : kMXPResourceTempSpace;
  return mask;
}

/*! \brief A property instance as the host sees it: the author's object plus borrowed lists. */
struct PropertyInstance {
  std::unique_ptr<OperatorProperty> prop;
  std::vector<std::string> lists[3];
  std::vector<const char*> list_ptrs[3];
  std::vector<MXPInplacePair> inplace[2];
  std::vector<TShape> last_in_shapes;
};

// ---- Section: kernels ----

/*! \brief How a kernel's Forward and Backward end: on return, or later through
 * OpContext::async_on_complete (MXPKernelDef::asynchronous). */
enum class KernelRun { kSync, kAsync };

struct KernelInstance {
  std::unique_ptr<Operator> op;
};

// Note [Kernel argument lists]
// Operator::Forward and Backward take their tensors and requests in std::vectors, as MXNet's do.
// Made afresh for each call they cost three to five heap allocations, a large share of a small
// call's time. Each thread keeps a set of lists per nesting level instead (a kernel may run
// another kernel on its thread) and refills them call after call; a TBlob is a view, so the
// lists keep nothing alive between calls.
class KernelArgLists {
 public:
  KernelArgLists() : stack_(Stack()) {
    if (stack_.depth == stack_.levels.size()) stack_.levels.emplace_back();
    level_ = &stack_.levels[stack_.depth++];
  }
  ~KernelArgLists() { --stack_.depth; }
  KernelArgLists(const KernelArgLists&) = delete;
  KernelArgLists& operator=(const KernelArgLists&) = delete;

  // The `slot`th list (one per tensor list of a call) holding views of `tensors`.
  const std::vector<TBlob>& Blobs(int slot, const DLTensor* tensors, size_t n) {
    std::vector<TBlob>& blobs = level_->blobs[slot];
    blobs.clear();
    for (size_t i = 0; i < n; ++i) blobs.emplace_back(tensors[i]);
    return blobs;
  }
  const std::vector<OpReqType>& Req(const int32_t* req, size_t n) {
    level_->req.clear();
    for (size_t i = 0; i < n; ++i) level_->req.push_back(static_cast<OpReqType>(req[i]));
    return level_->req;
  }

 private:
  struct Level {
    std::vector<TBlob> blobs[5];
    std::vector<OpReqType> req;
  };
  struct LevelStack {
    std::deque<Level> levels;  // a deque: a level stays put while deeper ones are added
    size_t depth = 0;
  };
  static LevelStack& Stack() {
    thread_local LevelStack stack;
    return stack;
  }

  LevelStack& stack_;
  Level* level_;
};

inline MXPStatus* KernelForward(void* state, const MXPKernelArgs* a) {
  return Guard([&] {
    auto* k = static_cast<KernelInstance*>(state);
    KernelArgLists lists;
    k->op->Forward(ToOpContext(a), lists.Blobs(0, a->in_data, a->num_in_data),
                   lists.Req(a->req, a->num_req), lists.Blobs(1, a->out_data, a->num_out_data),
                   lists.Blobs(2, a->aux, a->num_aux));
  });
}

inline MXPStatus* KernelBackward(void* state, const MXPKernelArgs* a) {
  return Guard([&] {
    auto* k = static_cast<KernelInstance*>(state);
    KernelArgLists lists;
    k->op->Backward(ToOpContext(a), lists.Blobs(0, a->out_grad, a->num_out_grad),
                    lists.Blobs(1, a->in_data, a->num_in_data),
                    lists.Blobs(2, a->out_data, a->num_out_data), lists.Req(a->req, a->num_req),
                    lists.Blobs(3, a->in_grad, a->num_in_grad), lists.Blobs(4, a->aux, a->num_aux));
  });
}

inline void KernelDestroy(void*, void* state) { delete static_cast<KernelInstance*>(state); }

/*! \brief One (op, device type) kernel registration. */
struct KernelRecord {
  std::string op_name;
  MXPKernelDef def{};
  // Makes the Operator for kwargs and a device; set by the registering macro.
  Operator* (*make)(const KernelRecord& self, const KwArgs& kwargs, Context ctx) = nullptr;
  const OpRegistration* owner = nullptr;  // for kernels made by a property's CreateOperator

  static MXPStatus* Create(void* user, const char* const* keys, const char* const* values, size_t n,
                           DLDevice device, void** state) {
    return Guard([&] {
      auto* self = static_cast<KernelRecord*>(user);
      Context ctx{device.device_type, device.device_id};
      std::unique_ptr<Operator> op(self->make(*self, ToKwArgs(keys, values, n), ctx));
      if (!op)
        throw std::logic_error(self->op_name +
                               ": CreateOperator returned no operator for this device");
      *state = new KernelInstance{std::move(op)};
    });
  }

  void Fill(int32_t device_type, KernelRun run = KernelRun::kSync) {
    def.struct_size = MXP_STRUCT_SIZE(MXPKernelDef, asynchronous);
    def.asynchronous = run == KernelRun::kAsync ? 1 : 0;
    def.op_name = op_name.c_str();
    def.device_type = device_type;
    def.user = this;
    def.create = &KernelRecord::Create;
    def.destroy = &KernelDestroy;
    def.forward = &KernelForward;
    // Operator::Backward's default throws "no backward", which reaches the host as a status.
    def.backward = &KernelBackward;
  }
};

/*! \brief Records a kernel whose Operator class is constructed as OpClass(kwargs, ctx). */
template <typename OpClass>
KernelRecord& RegisterKernel(const char* op_name, DLDeviceType device_type) {
  static_assert(std::is_constructible_v<OpClass, const KwArgs&, Context>,
                "a kernel class registered with MXPLUG_REGISTER_KERNEL needs a constructor "
                "OpClass(const mxplug::KwArgs& kwargs, mxplug::Context ctx)");
  auto* rec = new KernelRecord();
  rec->op_name = op_name;
  rec->make = [](const KernelRecord&, const KwArgs& kwargs, Context ctx) -> Operator* {
    return new OpClass(kwargs, ctx);
  };
  rec->Fill(device_type);
  Records().kernels.push_back(rec);
  return *rec;
}

// ---- Section: devices ----

// The host calls device_count on every allocation, from any thread, and keeps the strings it is
// given ("borrowed, static" in abi/device.h): so the count and its reason are asked of the
// backend once (again after a call that threw), and each description once per device id, kept
// where later calls do not move it.
struct DeviceRecord {
  std::string name;
  std::unique_ptr<DeviceBackend> backend;
  Once counted;
  int32_t count = 0;
  std::string reason;  // why the count is zero
  std::mutex describe_mutex;
  std::map<int32_t, std::string> descriptions;  // by device id
  MXPDeviceDef def{};

  static DeviceRecord* Self(void* user) { return static_cast<DeviceRecord*>(user); }
  static DeviceBackend& B(void* user) { return *Self(user)->backend; }

  // Which optional (1.2, 1.4) functions the backend class overrides: only those are published.
  struct Overrides {
    bool memset, memory_info, host_memory, event_query, attributes, thread_start, collectives;
  };
  // &Backend::F has DeviceBackend's member type unless Backend (or a base between) declares F.
  template <typename Backend>
  static constexpr Overrides OverridesOf() {
    using Base = DeviceBackend;
    using std::is_same_v;
    return {!is_same_v<decltype(&Backend::Memset), decltype(&Base::Memset)>,
            !is_same_v<decltype(&Backend::MemoryInfo), decltype(&Base::MemoryInfo)>,
            !is_same_v<decltype(&Backend::HostAllocate), decltype(&Base::HostAllocate)>,
            !is_same_v<decltype(&Backend::QueryEvent), decltype(&Base::QueryEvent)>,
            !is_same_v<decltype(&Backend::Attributes), decltype(&Base::Attributes)>,
            !is_same_v<decltype(&Backend::StartThread), decltype(&Base::StartThread)>,
            !is_same_v<decltype(&Backend::CollectiveReduce), decltype(&Base::CollectiveReduce)> &&
                !is_same_v<decltype(&Backend::CollectiveBroadcast),
                           decltype(&Base::CollectiveBroadcast)>};
  }

  void Fill(int32_t device_type, Overrides overrides) {
    def.struct_size = MXP_STRUCT_SIZE(MXPDeviceDef, collective_broadcast);
    def.name = name.c_str();
    def.device_type = device_type;
    def.user = this;
    def.device_count = [](void* u, int32_t* count, const char** reason) {
      return Guard([&] {
        DeviceRecord* self = Self(u);
        self->counted.Run([self] {
          self->reason.clear();  // from a call that threw
          self->count = self->backend->DeviceCount(&self->reason);
        });
        *count = self->count;
        *reason = self->count == 0 ? self->reason.c_str() : nullptr;
      });
    };
    def.describe = [](void* u, int32_t id, const char** text) {
      return Guard([&] {
        DeviceRecord* self = Self(u);
        if (id < 0) throw std::out_of_range("device id " + std::to_string(id));
        std::lock_guard<std::mutex> lock(self->describe_mutex);
        auto it = self->descriptions.find(id);
        if (it == self->descriptions.end())
          it = self->descriptions.emplace(id, self->backend->Describe(id)).first;
        *text = it->second.c_str();
      });
    };
    def.allocate = [](void* u, int32_t id, size_t bytes, size_t align, void** ptr) {
      return Guard([&] { *ptr = B(u).Allocate(id, bytes, align); });
    };
    def.free = [](void* u, int32_t id, void* ptr) { B(u).Free(id, ptr); };
    def.copy = [](void* u, DLDevice dd, void* dst, DLDevice sd, const void* src, size_t n,
                  void* s) { return Guard([&] { B(u).Copy(dd, dst, sd, src, n, s); }); };
    def.stream_create = [](void* u, int32_t id, void** s) {
      return Guard([&] { *s = B(u).CreateStream(id); });
    };
    def.stream_destroy = [](void* u, int32_t id, void* s) { B(u).DestroyStream(id, s); };
    def.stream_synchronize = [](void* u, int32_t id, void* s) {
      return Guard([&] { B(u).SynchronizeStream(id, s); });
    };
    def.event_create = [](void* u, int32_t id, void** e) {
      return Guard([&] { *e = B(u).CreateEvent(id); });
    };
    def.event_destroy = [](void* u, int32_t id, void* e) { B(u).DestroyEvent(id, e); };
    def.event_record = [](void* u, int32_t id, void* e, void* s) {
      return Guard([&] { B(u).RecordEvent(id, e, s); });
    };
    def.stream_wait_event = [](void* u, int32_t id, void* s, void* e) {
      return Guard([&] { B(u).WaitEvent(id, s, e); });
    };
    def.event_synchronize = [](void* u, int32_t id, void* e) {
      return Guard([&] { B(u).SynchronizeEvent(id, e); });
    };
    def.synchronize = [](void* u, int32_t id) { return Guard([&] { B(u).Synchronize(id); }); };
    if (overrides.memset)
      def.memset = [](void* u, int32_t id, void* p, int32_t value, size_t n, void* s) {
        return Guard([&] { B(u).Memset(id, p, value, n, s); });
      };
    if (overrides.memory_info)
      def.memory_info = [](void* u, int32_t id, uint64_t* free_bytes, uint64_t* total_bytes) {
        return Guard([&] { B(u).MemoryInfo(id, free_bytes, total_bytes); });
      };
    if (overrides.host_memory) {
      def.host_allocate = [](void* u, int32_t id, size_t n, void** p) {
        return Guard([&] { *p = B(u).HostAllocate(id, n); });
      };
      def.host_free = [](void* u, int32_t id, void* p) { B(u).HostFree(id, p); };
    }
    if (overrides.event_query)
      def.event_query = [](void* u, int32_t id, void* e, int32_t* complete) {
        return Guard([&] { *complete = B(u).QueryEvent(id, e) ? 1 : 0; });
      };
    if (overrides.attributes)
      def.attributes = [](void* u, int32_t id, MXPDeviceAttributes* out) {
        return Guard([&] {
          // Filled in a full-size struct, then as much handed over as the host made room for.
          MXPDeviceAttributes mine{};
          mine.struct_size = sizeof mine;
          B(u).Attributes(id, &mine);
          const size_t n = out->struct_size < sizeof mine ? out->struct_size : sizeof mine;
          mine.struct_size = out->struct_size;
          mine.ext = out->ext;
          std::memcpy(out, &mine, n);
        });
      };
    if (overrides.thread_start)
      def.thread_start = [](void* u, int32_t id) { return Guard([&] { B(u).StartThread(id); }); };
    if (overrides.collectives) {
      def.collective_reduce = [](void* u, int32_t n, const DLTensor* const* in, DLTensor* out,
                                 int32_t root) {
        return Guard([&] { B(u).CollectiveReduce(n, in, out, root); });
      };
      def.collective_broadcast = [](void* u, int32_t n, DLTensor* const* buffers, int32_t root) {
        return Guard([&] { B(u).CollectiveBroadcast(n, buffers, root); });
      };
    }
  }
};

template <typename Backend>
DeviceRecord& RegisterDevice(const char* name, DLDeviceType device_type) {
  auto* rec = new DeviceRecord();
  rec->name = name;
  rec->backend = std::make_unique<Backend>();
  rec->Fill(device_type, DeviceRecord::OverridesOf<Backend>());
  Records().devices.push_back(rec);
  return *rec;
}

// ---- Section: communication backends ----

struct CommRecord {
  std::string name;
  std::unique_ptr<CommBackend> backend;
  std::vector<int32_t> memory_types;
  Once checked;
  bool available = false;
  std::string reason;  // why not available
  MXPCommDef def{};

  static CommBackend& B(void* user) { return *static_cast<CommRecord*>(user)->backend; }
  // Fills a full-size info, then hands over as much as the host made room for.
  template <typename Fn>
  static void WithInfo(MXPCommMessageInfo* out, Fn&& fn) {
    MXPCommMessageInfo mine{};
    mine.struct_size = sizeof mine;
    fn(&mine);
    if (!out) return;
    const size_t n = out->struct_size < sizeof mine ? out->struct_size : sizeof mine;
    mine.struct_size = out->struct_size;
    mine.ext = out->ext;
    std::memcpy(out, &mine, n);
  }

  void Fill() {
    memory_types = backend->MemoryTypes();
    def.struct_size = MXP_STRUCT_SIZE(MXPCommDef, finalize);
    def.name = name.c_str();
    def.memory_types = memory_types.data();
    def.num_memory_types = memory_types.size();
    def.user = this;
    // Asked once: the strings handed out are "borrowed, static".
    def.available = [](void* u, int32_t* yes, const char** reason) {
      return Guard([&] {
        auto* self = static_cast<CommRecord*>(u);
        self->checked.Run([self] { self->available = self->backend->Available(&self->reason); });
        *yes = self->available ? 1 : 0;
        *reason = self->available ? nullptr : self->reason.c_str();
      });
    };
    def.init = [](void* u, const MXPCommBootstrap* b, int64_t timeout_ms, MXPComm** world) {
      return Guard([&] { *world = B(u).Init(b, timeout_ms); });
    };
    def.rank = [](void* u, MXPComm* c, int32_t* rank) {
      return Guard([&] { *rank = B(u).Rank(c); });
    };
    def.size = [](void* u, MXPComm* c, int32_t* size) {
      return Guard([&] { *size = B(u).Size(c); });
    };
    def.split = [](void* u, MXPComm* c, int32_t color, int32_t key, int64_t timeout_ms,
                   MXPComm** out) {
      return Guard([&] { *out = B(u).Split(c, color, key, timeout_ms); });
    };
    def.comm_free = [](void* u, MXPComm* c) { return Guard([&] { B(u).Free(c); }); };
    def.allreduce = [](void* u, MXPComm* c, DLTensor* t, int32_t op, void* s, MXPCommRequest** r) {
      return Guard([&] { *r = B(u).Allreduce(c, t, static_cast<MXPCommReduceOp>(op), s); });
    };
    def.broadcast = [](void* u, MXPComm* c, DLTensor* t, int32_t root, void* s,
                       MXPCommRequest** r) {
      return Guard([&] { *r = B(u).Broadcast(c, t, root, s); });
    };
    def.barrier = [](void* u, MXPComm* c, MXPCommRequest** r) {
      return Guard([&] { *r = B(u).Barrier(c); });
    };
    def.send = [](void* u, MXPComm* c, const void* data, uint64_t bytes, int32_t dest, int32_t tag,
                  MXPCommRequest** r) {
      return Guard([&] { *r = B(u).Send(c, data, bytes, dest, tag); });
    };
    def.recv = [](void* u, MXPComm* c, void* data, uint64_t bytes, int32_t source, int32_t tag,
                  MXPCommRequest** r) {
      return Guard([&] { *r = B(u).Recv(c, data, bytes, source, tag); });
    };
    def.probe = [](void* u, MXPComm* c, int32_t source, int32_t tag, int32_t* found,
                   MXPCommMessageInfo* info) {
      return Guard([&] {
        WithInfo(info,
                 [&](MXPCommMessageInfo* i) { *found = B(u).Probe(c, source, tag, i) ? 1 : 0; });
      });
    };
    def.test = [](void* u, MXPCommRequest* r, int32_t* done, MXPCommMessageInfo* info) {
      return Guard(
          [&] { WithInfo(info, [&](MXPCommMessageInfo* i) { *done = B(u).Test(r, i) ? 1 : 0; }); });
    };
    def.cancel = [](void* u, MXPCommRequest* r) { return Guard([&] { B(u).Cancel(r); }); };
    def.abort = [](void* u, MXPComm* c, int32_t code) { B(u).Abort(c, code); };
    def.finalize = [](void* u) { return Guard([&] { B(u).Finalize(); }); };
  }
};

template <typename Backend>
CommRecord& RegisterComm(const char* name) {
  static_assert(std::is_base_of_v<CommBackend, Backend>, "Backend must derive from CommBackend");
  auto* rec = new CommRecord();
  rec->name = name;
  rec->backend = std::make_unique<Backend>();
  rec->Fill();
  Records().comms.push_back(rec);
  return *rec;
}

template <typename P>
bool RegisterParameter(const char* name) {
  // Building the field list runs the author's declarations; doing it inside register_all turns a
  // mistake there into a refused plugin instead of a crash at load.
  Records().param_checks.emplace_back(name, [] { (void)P::Fields(); });
  return true;
}

}  // namespace sdk

// ---- Section: ops ----

/*! \brief One op's registration (returned by MXPLUG_REGISTER_OP_PROPERTY for chaining). */
class OpRegistration {
 public:
  // A std::function, so that an op made at run time (an adapter's, plugins/mxnet_lib) can
  // capture what it needs.
  using Factory = std::function<std::unique_ptr<OperatorProperty>()>;

  OpRegistration(std::string name, Factory factory) : name_(std::move(name)), factory_(factory) {}

  OpRegistration& describe(std::string doc) { return doc_ = std::move(doc), *this; }
  /*! \brief Documents an input (MXNet's add_argument). */
  OpRegistration& add_argument(std::string name, std::string type, std::string doc) {
    arguments_.push_back({std::move(name), std::move(type), std::move(doc)});
    return *this;
  }
  /*! \brief Documents the parameters (pass `Param::Fields()`). */
  OpRegistration& add_arguments(const std::vector<FieldInfo>& fields) {
    for (const FieldInfo& f : fields) fields_.push_back(&f);
    return *this;
  }
  /*! \brief Registers a kernel for `device_type` made by the property's CreateOperator. */
  OpRegistration& add_kernel(DLDeviceType device_type, sdk::KernelRun run = sdk::KernelRun::kSync) {
    auto* rec = new sdk::KernelRecord();
    rec->op_name = name_;
    rec->owner = this;
    rec->make = [](const sdk::KernelRecord& self, const KwArgs& kwargs, Context ctx) {
      std::unique_ptr<OperatorProperty> prop = self.owner->factory_();
      prop->Init(kwargs);
      return prop->CreateOperator(ctx);
    };
    rec->Fill(device_type, run);
    sdk::Records().kernels.push_back(rec);
    return *this;
  }

  const std::string& name() const { return name_; }

  /*! \brief The C definition handed to the host; built once, then stable. */
  const MXPOpDef* Def() {
    if (def_.struct_size) return &def_;
    for (const FieldInfo* f : fields_) {
      MXPParamDef p{};
      p.struct_size = MXP_STRUCT_SIZE(MXPParamDef, doc);
      p.name = f->name.c_str();
      p.type = f->type;
      p.type_text = f->type_text.c_str();
      p.default_value = f->has_default ? f->default_text.c_str() : nullptr;
      p.has_lower_bound = f->has_lower;
      p.has_upper_bound = f->has_upper;
      p.lower_bound = f->lower;
      p.upper_bound = f->upper;
      p.doc = f->doc.c_str();
      params_.push_back(p);
      std::vector<const char*> choices;
      for (const auto& e : f->enum_values) choices.push_back(e.first.c_str());
      choices_.push_back(std::move(choices));
    }
    for (size_t i = 0; i < params_.size(); ++i) {
      params_[i].choices = choices_[i].data();
      params_[i].num_choices = choices_[i].size();
      param_ptrs_.push_back(&params_[i]);
    }
    for (const Argument& a : arguments_) {
      MXPArgumentDef d{};
      d.struct_size = MXP_STRUCT_SIZE(MXPArgumentDef, doc);
      d.name = a.name.c_str();
      d.type_text = a.type.c_str();
      d.doc = a.doc.c_str();
      argument_defs_.push_back(d);
    }
    for (const MXPArgumentDef& d : argument_defs_) argument_ptrs_.push_back(&d);

    def_.name = name_.c_str();
    def_.doc = doc_.c_str();
    def_.params = param_ptrs_.data();
    def_.num_params = param_ptrs_.size();
    def_.arguments = argument_ptrs_.data();
    def_.num_arguments = argument_ptrs_.size();
    def_.user = this;
    def_.create = &Create;
    def_.destroy = [](void*, void* p) { delete static_cast<sdk::PropertyInstance*>(p); };
    def_.list = &List;
    def_.infer_shape = &InferShape;
    def_.infer_type = &InferType;
    def_.backward_dependency = &BackwardDependency;
    def_.inplace_options = &InplaceOptions;
    def_.resources = &Resources;
    def_.num_visible_outputs = [](void* p, size_t* count) {
      return sdk::Guard([&] {
        const int n = Inst(p)->prop->NumVisibleOutputs();
        if (n < 0 || static_cast<size_t>(n) > Inst(p)->lists[1].size())
          throw std::out_of_range("NumVisibleOutputs returned " + std::to_string(n));
        *count = static_cast<size_t>(n);
      });
    };
    def_.struct_size = MXP_STRUCT_SIZE(MXPOpDef, num_visible_outputs);
    return &def_;
  }

 private:
  struct Argument {
    std::string name, type, doc;
  };

  static sdk::PropertyInstance* Inst(void* p) { return static_cast<sdk::PropertyInstance*>(p); }

  static MXPStatus* Create(void* user, const char* const* keys, const char* const* values, size_t n,
                           void** out) {
    return sdk::Guard([&] {
      auto* self = static_cast<OpRegistration*>(user);
      auto inst = std::make_unique<sdk::PropertyInstance>();
      inst->prop = self->factory_();
      inst->prop->Init(sdk::ToKwArgs(keys, values, n));
      for (int k = 0; k < 3; ++k) {
        inst->lists[k] = k == 0   ? inst->prop->ListArguments()
                         : k == 1 ? inst->prop->ListOutputs()
                                  : inst->prop->ListAuxiliaryStates();
        for (const std::string& s : inst->lists[k]) inst->list_ptrs[k].push_back(s.c_str());
      }
      *out = inst.release();
    });
  }

  static MXPStatus* List(void* p, int32_t kind, size_t* count, const char* const** names) {
    return sdk::Guard([&] {
      if (kind < 0 || kind > 2)
        throw std::out_of_range("unknown list kind " + std::to_string(kind));
      *count = Inst(p)->list_ptrs[kind].size();
      *names = Inst(p)->list_ptrs[kind].data();
    });
  }

  static MXPStatus* InferShape(void* p, MXPShapeSlots* in, MXPShapeSlots* out, MXPShapeSlots* aux,
                               int32_t* complete) {
    return sdk::Guard([&] {
      std::vector<TShape> ins = sdk::ReadShapes(in), outs = sdk::ReadShapes(out),
                          auxs = sdk::ReadShapes(aux);
      bool done = Inst(p)->prop->InferShape(&ins, &outs, &auxs);
      sdk::WriteShapes(ins, in, "input");
      sdk::WriteShapes(outs, out, "output");
      sdk::WriteShapes(auxs, aux, "auxiliary");
      Inst(p)->last_in_shapes = ins;
      *complete = done ? 1 : 0;
    });
  }

  static MXPStatus* InferType(void* p, int32_t* in, size_t nin, int32_t* out, size_t nout,
                              int32_t* aux, size_t naux, int32_t* complete) {
    return sdk::Guard([&] {
      std::vector<int> ins(in, in + nin), outs(out, out + nout), auxs(aux, aux + naux);
      bool done = Inst(p)->prop->InferType(&ins, &outs, &auxs);
      if (ins.size() != nin || outs.size() != nout || auxs.size() != naux)
        throw std::logic_error("InferType resized a type list");
      std::copy(ins.begin(), ins.end(), in);
      std::copy(outs.begin(), outs.end(), out);
      std::copy(auxs.begin(), auxs.end(), aux);
      *complete = done ? 1 : 0;
    });
  }

  // Ids as MXNet numbers them: out_grad, then in_data, then out_data, then in_grad.
  static std::vector<int> Ids(int begin, size_t n) {
    std::vector<int> ids(n);
    for (size_t i = 0; i < n; ++i) ids[i] = begin + static_cast<int>(i);
    return ids;
  }

  static MXPStatus* BackwardDependency(void* p, uint8_t* og, uint8_t* id, uint8_t* od) {
    return sdk::Guard([&] {
      const int nin = static_cast<int>(Inst(p)->lists[0].size());
      const int nout = static_cast<int>(Inst(p)->lists[1].size());
      std::vector<int> deps = Inst(p)->prop->DeclareBackwardDependency(Ids(0, nout), Ids(nout, nin),
                                                                       Ids(nout + nin, nout));
      for (int d : deps) {
        if (d < 0 || d >= 2 * nout + nin)
          throw std::out_of_range("DeclareBackwardDependency returned unknown id " +
                                  std::to_string(d));
        if (d < nout)
          og[d] = 1;
        else if (d < nout + nin)
          id[d - nout] = 1;
        else
          od[d - nout - nin] = 1;
      }
    });
  }

  static MXPStatus* InplaceOptions(void* p, int32_t phase, size_t* count,
                                   const MXPInplacePair** pairs) {
    return sdk::Guard([&] {
      sdk::PropertyInstance* inst = Inst(p);
      const int nin = static_cast<int>(inst->lists[0].size());
      const int nout = static_cast<int>(inst->lists[1].size());
      std::vector<MXPInplacePair>& res = inst->inplace[phase == kMXPPhaseBackward ? 1 : 0];
      res.clear();
      if (phase == kMXPPhaseForward) {
        for (auto [i, o] : inst->prop->ForwardInplaceOption(Ids(0, nin), Ids(nin, nout))) {
          if (i < 0 || i >= nin || o < nin || o >= nin + nout)
            throw std::out_of_range("ForwardInplaceOption returned an unknown id");
          res.push_back({kMXPRoleInData, i, kMXPRoleOutData, o - nin});
        }
      } else {
        const int grad_begin = 2 * nout + nin;
        for (auto [s, d] : inst->prop->BackwardInplaceOption(
                 Ids(0, nout), Ids(nout, nin), Ids(nout + nin, nout), Ids(grad_begin, nin))) {
          if (d < grad_begin || d >= grad_begin + nin || s < 0 || s >= grad_begin)
            throw std::out_of_range("BackwardInplaceOption returned an unknown id");
          MXPInplacePair pair{kMXPRoleOutGrad, s, kMXPRoleInGrad, d - grad_begin};
          if (s >= nout + nin)
            pair.src_role = kMXPRoleOutData, pair.src_index = s - nout - nin;
          else if (s >= nout)
            pair.src_role = kMXPRoleInData, pair.src_index = s - nout;
          res.push_back(pair);
        }
      }
      *count = res.size();
      *pairs = res.data();
    });
  }

  static MXPStatus* Resources(void* p, int32_t phase, uint32_t* mask) {
    return sdk::Guard([&] {
      sdk::PropertyInstance* inst = Inst(p);
      *mask = sdk::ResourceMask(phase == kMXPPhaseForward
                                    ? inst->prop->ForwardResource(inst->last_in_shapes)
                                    : inst->prop->BackwardResource(inst->last_in_shapes));
    });
  }

  std::string name_, doc_;
  Factory factory_;
  std::vector<Argument> arguments_;
  std::vector<const FieldInfo*> fields_;
  std::vector<MXPParamDef> params_;
  std::vector<std::vector<const char*>> choices_;
  std::vector<const MXPParamDef*> param_ptrs_;
  std::vector<MXPArgumentDef> argument_defs_;
  std::vector<const MXPArgumentDef*> argument_ptrs_;
  MXPOpDef def_{};
};

namespace sdk {

template <typename Prop>
OpRegistration& RegisterOp(const char* name) {
  static_assert(std::is_base_of_v<OperatorProperty, Prop>,
                "Prop must derive from OperatorProperty");
  auto* reg = new OpRegistration(
      name, []() -> std::unique_ptr<OperatorProperty> { return std::make_unique<Prop>(); });
  Records().ops.push_back(reg);
  return *reg;
}

/*! \brief Hands every record to the host; called by the host after the handshake. */
inline MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  HostSlot() = host;
  MXPStatus* status = Guard([] {
    for (const auto& check : Records().param_checks) {
      try {
        check.second();
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string("parameter struct ") + check.first + ": " + e.what());
      }
    }
  });
  if (status) return status;
  for (OpRegistration* op : Records().ops) {
    const MXPOpDef* def = nullptr;
    if ((status = Guard([&] { def = op->Def(); }))) return status;
    if ((status = host->register_op(registrar, def))) return status;
  }
  for (KernelRecord* k : Records().kernels)
    if ((status = host->register_kernel(registrar, &k->def))) return status;
  for (DeviceRecord* d : Records().devices)
    if ((status = host->register_device(registrar, &d->def))) return status;
  if (!Records().comms.empty() && !MXP_HAS_FIELD(host, MXPHostApi, register_comm))
    return MakeStatus(kMXPUnimplemented, std::string("plugin '") + PluginName() +
                                             "' registers a communication backend, which needs "
                                             "plugin ABI 1.3; this host is older");
  for (CommRecord* c : Records().comms)
    if ((status = host->register_comm(registrar, &c->def))) return status;
  for (auto fn : Records().at_load)
    if ((status = fn(host, registrar))) return status;
  return nullptr;
}

inline bool RegisterAtLoad(MXPStatus* (*fn)(const MXPHostApi*, MXPRegistrar*)) {
  Records().at_load.push_back(fn);
  return true;
}

#ifndef MXPLUG_PLUGIN_ABI_MINOR_MIN
#define MXPLUG_PLUGIN_ABI_MINOR_MIN 0
#endif

/*! \brief The handshake half of mxplug_init: describe the plugin, register nothing yet. */
inline MXPStatus* Init(const MXPHostApi* host, MXPPluginApi* out, const char* name,
                       const char* version, const char* vendor, const char* min_host_version) {
  HostSlot() = host;
  MXPPluginApi info{};
  info.struct_size = MXP_STRUCT_SIZE(MXPPluginApi, register_all);
  info.abi_major = MXP_ABI_MAJOR;
  info.abi_minor_built = MXP_ABI_MINOR;
  info.abi_minor_min = MXPLUG_PLUGIN_ABI_MINOR_MIN;
  info.name = name;
  info.version = version;
  info.vendor = vendor;
  info.min_host_version = min_host_version;
#if defined(__clang__)
  info.build_info = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.build_info = "gcc " __VERSION__;
#else
  info.build_info = "unknown compiler";
#endif
  info.register_all = &RegisterAll;
  // The host says how much room it gave; write no more than that (Note in abi/plugin.h).
  size_t n = out->struct_size < info.struct_size ? out->struct_size : info.struct_size;
  info.struct_size = n;
  std::memcpy(out, &info, n);
  return nullptr;
}

}  // namespace sdk

/*!
 * \brief Registers OperatorProperty class Prop as op `name` and returns the registration for
 * chaining. MXPLUG_REGISTER_OP_PROPERTY is sugar for this; call it directly from a helper that
 * registers a family of similar ops. Only from a static initialiser (see the Note above).
 */
template <typename Prop>
OpRegistration& RegisterOpProperty(const char* name) {
  return sdk::RegisterOp<Prop>(name);
}

}  // namespace mxplug

/*!
 * \brief Defines the plugin's entry point (exactly once per plugin, in any one source file).
 * \param NAME short id ("nn"); VERSION the plugin's release; VENDOR who ships it.
 * Define MXPLUG_PLUGIN_MIN_HOST_VERSION before including to require a host release.
 */
#ifndef MXPLUG_PLUGIN_MIN_HOST_VERSION
#define MXPLUG_PLUGIN_MIN_HOST_VERSION nullptr
#endif
#define MXPLUG_PLUGIN(NAME, VERSION, VENDOR)                                                      \
  namespace mxplug::sdk {                                                                         \
  PluginRecords& Records() {                                                                      \
    /* Never destroyed: the host may call into these records until the process ends. */           \
    static PluginRecords* records = new PluginRecords();                                          \
    return *records;                                                                              \
  }                                                                                               \
  const MXPHostApi*& HostSlot() {                                                                 \
    static const MXPHostApi* host = nullptr;                                                      \
    return host;                                                                                  \
  }                                                                                               \
  const char* PluginName() { return NAME; }                                                       \
  }                                                                                               \
  extern "C" MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {       \
    return ::mxplug::sdk::Init(host, out, NAME, VERSION, VENDOR, MXPLUG_PLUGIN_MIN_HOST_VERSION); \
  }

/*! \brief Registers OperatorProperty class Prop as op Name; chain describe, add_argument(s),
 * add_kernel. */
#define MXPLUG_REGISTER_OP_PROPERTY(Name, Prop)                    \
  static ::mxplug::OpRegistration& mxplug_op_registration_##Name = \
      ::mxplug::RegisterOpProperty<Prop>(#Name)
/*! \brief Same, for a name that is not an identifier ("myorg.MyOp"); Var names the registration. */
#define MXPLUG_REGISTER_OP_PROPERTY_AS(Var, NameString, Prop)     \
  static ::mxplug::OpRegistration& mxplug_op_registration_##Var = \
      ::mxplug::RegisterOpProperty<Prop>(NameString)
/*! \brief Registers Operator class OpClass, built as OpClass(kwargs, ctx), as op Name's kernel on
 * DevType. */
#define MXPLUG_REGISTER_KERNEL(Name, DevType, OpClass)                                \
  static ::mxplug::sdk::KernelRecord& mxplug_kernel_registration_##Name##_##DevType = \
      ::mxplug::sdk::RegisterKernel<OpClass>(#Name, DevType)
#define MXPLUG_REGISTER_KERNEL_AS(Var, NameString, DevType, OpClass)     \
  static ::mxplug::sdk::KernelRecord& mxplug_kernel_registration_##Var = \
      ::mxplug::sdk::RegisterKernel<OpClass>(NameString, DevType)
/*! \brief Registers DeviceBackend class Backend for DLPack device type DevType under `name`. */
#define MXPLUG_REGISTER_DEVICE(Name, DevType, Backend)                    \
  static ::mxplug::sdk::DeviceRecord& mxplug_device_registration_##Name = \
      ::mxplug::sdk::RegisterDevice<Backend>(#Name, DevType)
/*! \brief Registers CommBackend class Backend as communication backend `Name` ("mpi"). */
#define MXPLUG_REGISTER_COMM(Name, Backend)                           \
  static ::mxplug::sdk::CommRecord& mxplug_comm_registration_##Name = \
      ::mxplug::sdk::RegisterComm<Backend>(#Name)
/*!
 * \brief Runs `Fn(host, registrar)` when the plugin registers, after everything the other macros
 * recorded: for registrations that depend on the host (its version, what is already loaded).
 */
#define MXPLUG_REGISTER_AT_LOAD(Name, Fn) \
  static bool mxplug_at_load_registration_##Name = ::mxplug::sdk::RegisterAtLoad(Fn)
/*! \brief Checks parameter struct P's declarations when the plugin registers. */
#define MXPLUG_REGISTER_PARAMETER(P) \
  static bool mxplug_parameter_registration_##P = ::mxplug::sdk::RegisterParameter<P>(#P)

#endif  // MXPLUG_SDK_REGISTRATION_HPP_
