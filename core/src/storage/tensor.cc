#include "mxplug/tensor.h"

#include "mxplug/runtime.h"

namespace mxplug {

Tensor Tensor::Empty(const TShape& shape, int dtype, Context ctx) {
  if (!shape.IsKnown())
    throw Error("Tensor::Empty: shape " + shape.ToString() + " is not fully known",
                kMXPInvalidArgument);
  if (DTypeSize(dtype) == 0)
    throw Error("Tensor::Empty: unknown dtype " + DTypeName(dtype), kMXPInvalidArgument);
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.storage_ = Storage::Alloc(static_cast<size_t>(shape.Size()) * DTypeSize(dtype), ctx);
  return t;
}

DLTensor Tensor::ToDLTensor() const {
  DLTensor t{};
  t.data = data();
  t.device = ctx().ToDLDevice();
  t.ndim = shape_.ndim() < 0 ? 0 : shape_.ndim();
  t.dtype = ToDLDataType(dtype_);
  t.shape = const_cast<int64_t*>(shape_.data());
  t.strides = nullptr;  // compact, row-major
  t.byte_offset = 0;
  return t;
}

void Tensor::CopyFromHost(const void* src, size_t n) {
  if (n != bytes())
    throw Error("Tensor::CopyFromHost: " + std::to_string(n) + " bytes given, tensor of shape " +
                    shape_.ToString() + " holds " + std::to_string(bytes()),
                kMXPInvalidArgument);
  storage_->device().Copy(ctx(), data(), Context::CPU(), src, n);
}

void Tensor::CopyToHost(void* dst, size_t n) const {
  if (n != bytes())
    throw Error("Tensor::CopyToHost: " + std::to_string(n) + " bytes asked, tensor of shape " +
                    shape_.ToString() + " holds " + std::to_string(bytes()),
                kMXPInvalidArgument);
  storage_->device().Copy(Context::CPU(), dst, ctx(), data(), n);
}

Tensor Tensor::CopyTo(Context to) const {
  Tensor out = Empty(shape_, dtype_, to);
  // The backend of the accelerator side performs the copy; host to host uses the CPU backend.
  const DeviceEntry& backend = !to.IsHost() ? out.storage_->device() : storage_->device();
  backend.Copy(to, out.data(), ctx(), data(), bytes());
  return out;
}

}  // namespace mxplug
