/*!
 * \file mxplug/tensor.h
 * \brief Tensor: a shape and dtype over Storage on some device, with a DLTensor view for
 * kernels. Synchronous; NDArray adds the engine on top.
 */
#ifndef MXPLUG_TENSOR_H_
#define MXPLUG_TENSOR_H_

#include <cstddef>
#include <memory>
#include <vector>

#include <dlpack/dlpack.h>

#include "mxplug/sdk/context.hpp"
#include "mxplug/error.h"
#include "mxplug/sdk/dtype.hpp"
#include "mxplug/sdk/operator.hpp"
#include "mxplug/sdk/tshape.hpp"
#include "mxplug/storage.h"

namespace mxplug {

class Tensor {
 public:
  Tensor() = default;
  /*! \brief Uninitialised memory of a known shape. \throws Error for unknown shape or dtype. */
  static Tensor Empty(const TShape& shape, int dtype, Context ctx = Context::CPU());
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, const TShape& shape,
                           Context ctx = Context::CPU()) {
    Tensor t = Empty(shape, DTypeFlag<T>(), ctx);
    if (values.size() != static_cast<size_t>(shape.Size()))
      throw Error("Tensor::FromVector: " + std::to_string(values.size()) +
                  " values do not fill shape " + shape.ToString(), kMXPInvalidArgument);
    t.CopyFromHost(values.data(), values.size() * sizeof(T));
    return t;
  }

  bool is_none() const { return storage_ == nullptr; }
  const TShape& shape() const { return shape_; }
  int dtype() const { return dtype_; }
  Context ctx() const { return storage_ ? storage_->ctx() : Context(); }
  int64_t size() const { return shape_.Size(); }
  size_t bytes() const { return static_cast<size_t>(size()) * DTypeSize(dtype_); }
  void* data() const { return storage_ ? storage_->data() : nullptr; }

  /*! \brief A view for kernels; valid while this Tensor lives. */
  DLTensor ToDLTensor() const;
  void CopyFromHost(const void* src, size_t bytes);
  void CopyToHost(void* dst, size_t bytes) const;
  /*! \brief A copy on another context (through the device backends). */
  Tensor CopyTo(Context ctx) const;
  template <typename T>
  std::vector<T> ToVector() const {
    if (DTypeFlag<T>() != dtype_)
      throw Error("Tensor::ToVector: tensor holds " + DTypeName(dtype_) + ", not " +
                  DTypeName(DTypeFlag<T>()), kMXPInvalidArgument);
    std::vector<T> out(static_cast<size_t>(size()));
    CopyToHost(out.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  std::shared_ptr<Storage> storage_;
  TShape shape_;
  int dtype_ = kMXPFloat32;
};

}  // namespace mxplug

#endif  // MXPLUG_TENSOR_H_
