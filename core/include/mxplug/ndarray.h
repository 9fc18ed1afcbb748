/*!
 * \file mxplug/ndarray.h
 * \brief NDArray: a shape and dtype over device storage plus the engine variable that orders
 * every read and write of that storage. Every operation is an engine push; the synchronous
 * members (WaitToRead, SyncCopyToCPU, ...) are the sync points where errors of earlier pushes
 * surface. Views (Reshape, Slice, At) share storage and variable with their base array.
 */
#ifndef MXPLUG_NDARRAY_H_
#define MXPLUG_NDARRAY_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mxplug/engine.h"
#include "mxplug/sdk/context.hpp"
#include "mxplug/sdk/dtype.hpp"
#include "mxplug/sdk/tshape.hpp"
#include "mxplug/storage.h"

namespace mxplug {

/*!
 * \brief \throws Error "<what>: shape (...) of <dtype> has more elements or bytes than a 64-bit
 * size can count" unless TShape::SizeFits: every place that turns a shape into memory or a view
 * (arrays, files, DLPack imports, inferred outputs, reshapes) checks it, so a count that wraps
 * round can never size memory that reads then run past.
 */
void CheckSizeFits(const TShape& shape, int dtype, const std::string& what);

class NDArray {
 public:
  /*! \brief A none array (no storage), as MXNet's default-constructed NDArray. */
  NDArray() = default;
  /*! \brief An uninitialised array. \throws Error for an unknown shape or dtype, or no device. */
  NDArray(const TShape& shape, Context ctx, int dtype = kMXPFloat32);
  /*!
   * \brief Wraps memory another library owns (DLPack import): `keep_alive` is released when
   * the last view is gone and every pushed use of the memory has finished.
   */
  static NDArray FromExternal(void* data, const TShape& shape, int dtype, Context ctx,
                              std::shared_ptr<void> keep_alive);
  /*!
   * \brief A none array that keeps a shape and dtype: what a kernel call passes for a tensor it
   * neither reads nor writes (a gradient not asked for, an input backward does not read), so the
   * kernel still sees every tensor's shape, as MXNet's kernels do, with a null data pointer.
   */
  static NDArray Absent(const TShape& shape, int dtype);

  bool is_none() const { return chunk_ == nullptr; }
  const TShape& shape() const { return shape_; }
  int dtype() const { return dtype_; }
  Context ctx() const;
  int64_t size() const { return shape_.Size(); }
  size_t bytes() const { return static_cast<size_t>(size()) * DTypeSize(dtype_); }
  /*! \brief Shape and dtype as error messages give them: "(2, 3) float32". */
  std::string Describe() const { return shape_.ToString() + " " + DTypeName(dtype_); }
  /*! \brief The variable every push that touches this array's storage names. */
  VarHandle var() const;
  /*! \brief Address of the first element. Only valid to touch inside a pushed function or
   * after a sync point. */
  void* data() const;
  /*! \brief A compact row-major view for kernels; its shape points into this NDArray. */
  DLTensor ToDLTensor() const;
  /*! \brief True when both view the same storage (so a write to one is seen through the other). */
  bool SharesStorageWith(const NDArray& other) const { return chunk_ && chunk_ == other.chunk_; }
  /*! \brief The owner of the memory, kept alive by whoever holds it (DLPack export). */
  std::shared_ptr<void> KeepAlive() const;

  /*!
   * \brief Makes the storage read-only through every view of it, for memory that others read as
   * their own arrays (an iterator's data set, handed out as batches): a write then raises an
   * Error naming `owner` ("MNISTIter's images") instead of changing what later readers see.
   * Call before the array is shared.
   */
  void SetReadOnly(std::string owner);
  /*! \brief False for read-only storage (MXNet's NDArray.writable). */
  bool writable() const;
  /*! \brief \throws Error "<what> is read-only: ..." unless writable; `what` names the write. */
  void CheckWritable(const std::string& what) const;

  /*! \brief Waits for pending writes; rethrows (and clears) an error they left. */
  void WaitToRead() const;
  /*! \brief Waits for pending reads and writes. */
  void WaitToWrite() const;
  /*! \brief Copies `bytes` (all of the array) from host memory, ordered with other pushes; waits.
   */
  void SyncCopyFromCPU(const void* src, size_t bytes) const;
  /*! \brief Waits for pending writes, then copies all of the array to host memory. */
  void SyncCopyToCPU(void* dst, size_t bytes) const;

  /*! \brief Pushes a copy of `from` into `to` (any devices; same size and dtype). */
  static void Copy(const NDArray& from, const NDArray& to);
  /*! \brief A new array on ctx with the same contents (pushed). */
  NDArray CopyTo(Context ctx) const;

  /*! \brief A view with another shape of the same size. */
  NDArray Reshape(const TShape& shape) const;
  /*! \brief A view of rows [begin, end) of the first axis. */
  NDArray Slice(int64_t begin, int64_t end) const;
  /*! \brief A view of row i of the first axis, without that axis. */
  NDArray At(int64_t i) const;
  /*!
   * \brief A view of this array's first bytes as another shape and dtype: one buffer that serves
   * several arrays in turn (the executor's memory plan). \throws Error when it does not fit.
   */
  NDArray View(const TShape& shape, int dtype) const;

 private:
  struct Chunk;
  std::shared_ptr<Chunk> chunk_;
  TShape shape_;
  int dtype_ = kMXPFloat32;
  size_t byte_offset_ = 0;
};

}  // namespace mxplug

#endif  // MXPLUG_NDARRAY_H_
