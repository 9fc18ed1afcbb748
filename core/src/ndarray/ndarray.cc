#include "mxplug/ndarray.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "mxplug/error.h"
#include "mxplug/runtime.h"

namespace mxplug {

// The memory and the variable shared by an array and its views. The memory's owner (a Storage,
// or whatever a DLPack producer handed us) is released by a delete function pushed on the
// variable, so it outlives every function pushed before the last view went away.
struct NDArray::Chunk {
  Chunk(void* d, Context c, std::shared_ptr<void> o)
      : data(d), ctx(c), owner(std::move(o)), var(Engine::Get()->NewVar()) {}
  ~Chunk() {
    // Most arrays die idle: the memory goes back here, after the variable (Note [Idle deletes]).
    Engine* engine = Engine::Get();
    if (engine->DeleteIfIdle(ctx, var)) return;
    engine->PushDelete([owner = std::move(owner)](RunContext) mutable { owner.reset(); }, ctx, var);
  }
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  void* data;
  Context ctx;
  std::shared_ptr<void> owner;
  VarHandle var;
  std::string read_only_owner;  // empty: writable
};

namespace {}  // namespace

void CheckSizeFits(const TShape& shape, int dtype, const std::string& what) {
  if (!shape.SizeFits(std::max<int64_t>(1, static_cast<int64_t>(DTypeSize(dtype)))))
    throw Error(what + ": shape " + shape.ToString() + " of " + DTypeName(dtype) +
                    " has more elements or bytes than a 64-bit size can count",
                kMXPInvalidArgument);
}

namespace {

void CheckShape(const TShape& shape, int dtype, const char* what) {
  if (!shape.IsKnown())
    throw Error(std::string(what) + ": shape " + shape.ToString() + " is not fully known",
                kMXPInvalidArgument);
  if (DTypeSize(dtype) == 0)
    throw Error(std::string(what) + ": unknown dtype " + DTypeName(dtype), kMXPInvalidArgument);
  CheckSizeFits(shape, dtype, what);
}

}  // namespace

NDArray::NDArray(const TShape& shape, Context ctx, int dtype) : shape_(shape), dtype_(dtype) {
  CheckShape(shape, dtype, "NDArray");
  std::shared_ptr<Storage> storage =
      Storage::Alloc(static_cast<size_t>(shape.Size()) * DTypeSize(dtype), ctx);
  void* data = storage->data();
  chunk_ = std::make_shared<Chunk>(data, ctx, std::move(storage));
}

NDArray NDArray::FromExternal(void* data, const TShape& shape, int dtype, Context ctx,
                              std::shared_ptr<void> keep_alive) {
  CheckShape(shape, dtype, "NDArray::FromExternal");
  Runtime::Get().CheckContext(ctx);
  NDArray a;
  a.shape_ = shape;
  a.dtype_ = dtype;
  a.chunk_ = std::make_shared<Chunk>(data, ctx, std::move(keep_alive));
  return a;
}

NDArray NDArray::Absent(const TShape& shape, int dtype) {
  NDArray a;
  a.shape_ = shape;
  a.dtype_ = dtype;
  return a;
}

Context NDArray::ctx() const { return chunk_ ? chunk_->ctx : Context(); }
VarHandle NDArray::var() const { return chunk_ ? chunk_->var : nullptr; }
void* NDArray::data() const {
  return chunk_ ? static_cast<char*>(chunk_->data) + byte_offset_ : nullptr;
}
std::shared_ptr<void> NDArray::KeepAlive() const { return chunk_; }

void NDArray::SetReadOnly(std::string owner) {
  if (chunk_) chunk_->read_only_owner = std::move(owner);
}

bool NDArray::writable() const { return !chunk_ || chunk_->read_only_owner.empty(); }

void NDArray::CheckWritable(const std::string& what) const {
  if (!writable())
    throw Error(what + " is read-only: it shares memory with " + chunk_->read_only_owner +
                    ", which later reads would see changed; write into a copy (NDArray.copy())",
                kMXPInvalidArgument);
}

DLTensor NDArray::ToDLTensor() const {
  DLTensor t{};
  t.data = chunk_ ? chunk_->data : nullptr;
  t.byte_offset = byte_offset_;
  t.device = ctx().ToDLDevice();
  t.ndim = shape_.ndim() < 0 ? 0 : shape_.ndim();
  t.dtype = ToDLDataType(dtype_);
  t.shape = const_cast<int64_t*>(shape_.data());
  t.strides = nullptr;  // compact, row-major
  return t;
}

namespace {
void CheckNotNone(const NDArray& a, const char* what) {
  if (a.is_none())
    throw Error(std::string(what) + ": the array is empty (none)", kMXPInvalidArgument);
}
}  // namespace

void NDArray::WaitToRead() const {
  if (chunk_) Engine::Get()->WaitForVar(chunk_->var);
}

void NDArray::WaitToWrite() const {
  if (!chunk_) return;
  // The engine waits only for writers; a no-op write is ordered after every earlier reader too.
  Engine::Get()->PushSync([](RunContext) {}, ctx(), {}, {chunk_->var}, FnProperty::kNormal, 0,
                          "WaitToWrite");
  Engine::Get()->WaitForVar(chunk_->var);
}

void NDArray::SyncCopyFromCPU(const void* src, size_t n) const {
  CheckNotNone(*this, "NDArray::SyncCopyFromCPU");
  CheckWritable("NDArray::SyncCopyFromCPU: the destination");
  if (n != bytes())
    throw Error("NDArray::SyncCopyFromCPU: " + std::to_string(n) + " bytes given, array of shape " +
                    shape_.ToString() + " and dtype " + DTypeName(dtype_) + " holds " +
                    std::to_string(bytes()),
                kMXPInvalidArgument);
  void* dst = data();
  Context to = ctx();
  std::shared_ptr<Chunk> keep = chunk_;
  Engine::Get()->PushSync(
      [keep, dst, to, src, n](RunContext rctx) {
        Runtime::Get()
            .GetDevice(to.Compute().dev_type)
            ->Copy(to, dst, Context::CPU(), src, n, rctx.stream);
      },
      to, {}, {chunk_->var}, to.IsHost() ? FnProperty::kNormal : FnProperty::kCopyToDevice, 0,
      "CopyFromCPU");
  Engine::Get()->WaitForVar(chunk_->var);
}

void NDArray::SyncCopyToCPU(void* dst, size_t n) const {
  CheckNotNone(*this, "NDArray::SyncCopyToCPU");
  if (n != bytes())
    throw Error("NDArray::SyncCopyToCPU: " + std::to_string(n) + " bytes asked, array of shape " +
                    shape_.ToString() + " and dtype " + DTypeName(dtype_) + " holds " +
                    std::to_string(bytes()),
                kMXPInvalidArgument);
  WaitToRead();
  if (n == 0) return;
  Runtime::Get().GetDevice(ctx().Compute().dev_type)->Copy(Context::CPU(), dst, ctx(), data(), n);
}

void NDArray::Copy(const NDArray& from, const NDArray& to) {
  CheckNotNone(from, "NDArray::Copy");
  CheckNotNone(to, "NDArray::Copy");
  if (from.size() != to.size() || from.dtype_ != to.dtype_)
    throw Error(
        "NDArray::Copy: source " + from.Describe() + " does not fit destination " + to.Describe(),
        kMXPInvalidArgument);
  if (from.SharesStorageWith(to) && from.byte_offset_ == to.byte_offset_) return;
  to.CheckWritable("NDArray::Copy: the destination");
  const Context fc = from.ctx(), tc = to.ctx();
  // The accelerator side's backend copies (host to host: the CPU backend), on its copy workers.
  const bool to_device = !tc.IsHost();
  const Context run_on = (to_device ? tc : fc).Compute();
  const FnProperty prop = to_device && fc.IsHost()      ? FnProperty::kCopyToDevice
                          : !fc.IsHost() && tc.IsHost() ? FnProperty::kCopyFromDevice
                                                        : FnProperty::kNormal;
  std::shared_ptr<Chunk> keep_from = from.chunk_, keep_to = to.chunk_;
  void* dst = to.data();
  const void* src = from.data();
  const size_t n = from.bytes();
  Engine::Get()->PushSync(
      [keep_from, keep_to, dst, src, n, fc, tc, run_on](RunContext rctx) {
        if (n) Runtime::Get().GetDevice(run_on.dev_type)->Copy(tc, dst, fc, src, n, rctx.stream);
      },
      run_on, {from.chunk_->var}, {to.chunk_->var}, prop, 0, "CopyTo");
}

NDArray NDArray::CopyTo(Context ctx) const {
  CheckNotNone(*this, "NDArray::CopyTo");
  NDArray out(shape_, ctx, dtype_);
  Copy(*this, out);
  return out;
}

NDArray NDArray::Reshape(const TShape& shape) const {
  CheckNotNone(*this, "NDArray::Reshape");
  CheckSizeFits(shape, dtype_, "NDArray::Reshape");
  if (!shape.IsKnown() || shape.Size() != size())
    throw Error("NDArray::Reshape: cannot view an array of shape " + shape_.ToString() +
                    " as shape " + shape.ToString() + " (sizes differ)",
                kMXPInvalidArgument);
  NDArray v = *this;
  v.shape_ = shape;
  return v;
}

NDArray NDArray::Slice(int64_t begin, int64_t end) const {
  CheckNotNone(*this, "NDArray::Slice");
  if (shape_.ndim() < 1)
    throw Error("NDArray::Slice: cannot slice a 0-d array", kMXPInvalidArgument);
  if (begin < 0 || end < begin || end > shape_[0])
    throw Error("NDArray::Slice: [" + std::to_string(begin) + ", " + std::to_string(end) +
                    ") is out of range for axis 0 of shape " + shape_.ToString(),
                kMXPOutOfRange);
  NDArray v = *this;
  const int64_t row = shape_.ndim() > 1 ? shape_.ProdShape(1, shape_.ndim()) : 1;
  v.byte_offset_ += static_cast<size_t>(begin * row) * DTypeSize(dtype_);
  v.shape_[0] = end - begin;
  return v;
}

NDArray NDArray::At(int64_t i) const {
  CheckNotNone(*this, "NDArray::At");
  if (shape_.ndim() < 1) throw Error("NDArray::At: cannot index a 0-d array", kMXPInvalidArgument);
  if (i < 0 || i >= shape_[0])
    throw Error("NDArray::At: index " + std::to_string(i) +
                    " is out of range for axis 0 of shape " + shape_.ToString(),
                kMXPOutOfRange);
  NDArray v = Slice(i, i + 1);
  v.shape_ = TShape(std::vector<int64_t>(shape_.begin() + 1, shape_.end()));
  return v;
}

NDArray NDArray::View(const TShape& shape, int dtype) const {
  CheckNotNone(*this, "NDArray::View");
  CheckShape(shape, dtype, "NDArray::View");
  const size_t need = static_cast<size_t>(shape.Size()) * DTypeSize(dtype);
  if (need > bytes())
    throw Error("NDArray::View: shape " + shape.ToString() + " of " + DTypeName(dtype) + " needs " +
                    std::to_string(need) + " bytes, the array holds " + std::to_string(bytes()),
                kMXPOutOfRange);
  NDArray v = *this;
  v.shape_ = shape;
  v.dtype_ = dtype;
  return v;
}

}  // namespace mxplug
