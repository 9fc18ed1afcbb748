/*!
 * \file mxplug/sdk/tshape.hpp
 * \brief TShape: a tensor shape that may be unknown (ndim -1) or partly unknown (a dim of -1),
 * as in MXNet's numpy-shape semantics. Shared by plugins and the core (no plugin state here).
 */
#ifndef MXPLUG_SDK_TSHAPE_HPP_
#define MXPLUG_SDK_TSHAPE_HPP_

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace mxplug {

// Note [Inline dimensions]
// Every array, view and kernel argument carries a shape, and an imperative call copies several
// (its inputs into the call, the TBlobs a kernel receives): a shape that lived on the heap cost an
// allocation per copy, about a quarter of the allocations of a 1-element call from Python. Up to
// kInlineDims dimensions (every layer's tensors; MXNet's TShape keeps 4 on the stack) live in the
// object; more go to the heap.
class TShape {
 public:
  static constexpr int kInlineDims = 6;

  /*! \brief An unknown shape. */
  TShape() = default;
  TShape(std::initializer_list<int64_t> dims) { Assign(dims.begin(), dims.end()); }
  explicit TShape(const std::vector<int64_t>& dims) {
    Assign(dims.data(), dims.data() + dims.size());
  }
  /*! \brief A shape of `ndim` dimensions, each `fill` (-1: unknown). */
  TShape(int ndim, int64_t fill) {
    if (ndim < 0) return;
    Resize(ndim);
    for (int i = 0; i < ndim; ++i) dims_[i] = fill;
  }
  TShape(const int64_t* begin, const int64_t* end) { Assign(begin, end); }
  TShape(const TShape& o) { CopyFrom(o); }
  TShape(TShape&& o) noexcept { MoveFrom(&o); }
  TShape& operator=(const TShape& o) {
    if (this != &o) CopyFrom(o);
    return *this;
  }
  TShape& operator=(TShape&& o) noexcept {
    if (this != &o) {
      Release();
      MoveFrom(&o);
    }
    return *this;
  }
  ~TShape() { Release(); }

  /*! \brief Number of dimensions, or -1 when unknown. */
  int ndim() const { return ndim_; }
  /*! \brief True when ndim and every dimension are known. */
  bool IsKnown() const {
    if (ndim_ < 0) return false;
    for (int64_t d : *this)
      if (d < 0) return false;
    return true;
  }
  /*!
   * \brief Product of dimensions (1 for a scalar shape), or -1 when not known. Multiplied
   * unsigned: a shape with a dimension 0 gives 0 in any order, and a count past int64 wraps
   * instead of being undefined behaviour (SizeFits says whether it fits; the core checks it
   * wherever a shape becomes memory).
   */
  int64_t Size() const {
    if (!IsKnown()) return -1;
    uint64_t n = 1;
    for (int64_t d : *this) n *= static_cast<uint64_t>(d);
    return static_cast<int64_t>(n);
  }
  /*!
   * \brief Whether the element count, and its bytes at `element_bytes` each, fit in int64, as
   * every index and size computed from the shape must (a shape with a dimension 0 holds no
   * elements whatever the others are, as PyTorch counts). True for a shape not fully known.
   */
  bool SizeFits(int64_t element_bytes = 1) const {
    if (!IsKnown()) return true;
    for (int64_t d : *this)
      if (d == 0) return true;
    int64_t n = element_bytes;
    for (int64_t d : *this)
      if (__builtin_mul_overflow(n, d, &n)) return false;
    return true;
  }
  /*! \brief Product of dimensions [begin, end). */
  int64_t ProdShape(int begin, int end) const {
    int64_t n = 1;
    for (int i = begin; i < end; ++i) n *= dims_[i];
    return n;
  }

  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  const int64_t* data() const { return dims_; }
  /*! \brief The dimensions as a vector (empty when unknown). */
  std::vector<int64_t> dims() const { return std::vector<int64_t>(begin(), end()); }
  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + (ndim_ > 0 ? ndim_ : 0); }

  bool operator==(const TShape& o) const {
    if (ndim_ != o.ndim_) return false;
    for (int i = 0; i < ndim_; ++i)
      if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const TShape& o) const { return !(*this == o); }

  /*! \brief Python tuple notation, as MXNet prints shapes: "(2, 3)", "(5,)", "()"; "None" when
   * unknown; an unknown dimension prints as -1. */
  std::string ToString() const {
    if (ndim_ < 0) return "None";
    std::string s = "(";
    for (int i = 0; i < ndim_; ++i) {
      if (i) s += ", ";
      s += std::to_string(dims_[i]);
    }
    if (ndim_ == 1) s += ",";
    return s + ")";
  }

 private:
  // Makes room for `ndim` dimensions (their values unset); the shape holds none before.
  void Resize(int ndim) {
    ndim_ = ndim;
    dims_ = ndim > kInlineDims ? new int64_t[ndim] : inline_;
  }
  void Assign(const int64_t* begin, const int64_t* end) {
    Resize(static_cast<int>(end - begin));
    for (int i = 0; i < ndim_; ++i) dims_[i] = begin[i];
  }
  void CopyFrom(const TShape& o) {
    Release();
    if (o.ndim_ >= 0) Assign(o.begin(), o.end());
  }
  // Takes `o`'s dimensions, leaving it unknown.
  void MoveFrom(TShape* o) {
    ndim_ = o->ndim_;
    if (o->dims_ != o->inline_) {
      dims_ = o->dims_;
    } else {
      dims_ = inline_;
      for (int i = 0; i < kInlineDims; ++i) inline_[i] = o->inline_[i];
    }
    o->ndim_ = -1;
    o->dims_ = o->inline_;
  }
  void Release() {
    if (dims_ != inline_) delete[] dims_;
    dims_ = inline_;
    ndim_ = -1;
  }

  int ndim_ = -1;  // -1: unknown
  int64_t inline_[kInlineDims] = {};
  int64_t* dims_ = inline_;  // inline_, or a heap array past kInlineDims dimensions
};

/*!
 * \brief Merges what `other` knows of a shape into `*shape`, as MXNet 1.x's shape inference does
 * (its shape_assign, where 0 is an unknown dimension): an unknown shape takes `other`, and each
 * unknown dimension takes `other`'s. \returns false, leaving `*shape` unchanged, where they
 * disagree: another number of dimensions, or two different known sizes.
 */
inline bool MergeShape(TShape* shape, const TShape& other) {
  if (other.ndim() < 0) return true;
  if (shape->ndim() < 0) {
    *shape = other;
    return true;
  }
  if (shape->ndim() != other.ndim()) return false;
  TShape merged = *shape;
  for (int i = 0; i < merged.ndim(); ++i) {
    if (merged[i] < 0)
      merged[i] = other[i];
    else if (other[i] >= 0 && other[i] != merged[i])
      return false;
  }
  *shape = merged;
  return true;
}

/*!
 * \brief An axis given as MXNet does (negative counts from the end) as an index in [0, ndim).
 * \throws std::out_of_range naming `what` ("axis", "dim") when it is not an axis of ndim dims.
 */
inline int NormalizeAxis(int64_t axis, int ndim, const char* what = "axis") {
  if (axis < -ndim || axis >= ndim)
    throw std::out_of_range(std::string(what) + " " + std::to_string(axis) +
                            " is out of range for an " + "array of " + std::to_string(ndim) +
                            " dimensions");
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

}  // namespace mxplug

#endif  // MXPLUG_SDK_TSHAPE_HPP_
