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

class TShape {
 public:
  /*! \brief An unknown shape. */
  TShape() = default;
  TShape(std::initializer_list<int64_t> dims) : known_(true), dims_(dims) {}
  explicit TShape(std::vector<int64_t> dims) : known_(true), dims_(std::move(dims)) {}
  /*! \brief A shape of `ndim` dimensions, each `fill` (-1: unknown). */
  TShape(int ndim, int64_t fill) : known_(ndim >= 0), dims_(ndim > 0 ? ndim : 0, fill) {}
  TShape(const int64_t* begin, const int64_t* end) : known_(true), dims_(begin, end) {}

  /*! \brief Number of dimensions, or -1 when unknown. */
  int ndim() const { return known_ ? static_cast<int>(dims_.size()) : -1; }
  /*! \brief True when ndim and every dimension are known. */
  bool IsKnown() const {
    if (!known_) return false;
    for (int64_t d : dims_)
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
    for (int64_t d : dims_) n *= static_cast<uint64_t>(d);
    return static_cast<int64_t>(n);
  }
  /*!
   * \brief Whether the element count, and its bytes at `element_bytes` each, fit in int64, as
   * every index and size computed from the shape must (a shape with a dimension 0 holds no
   * elements whatever the others are, as PyTorch counts). True for a shape not fully known.
   */
  bool SizeFits(int64_t element_bytes = 1) const {
    if (!IsKnown()) return true;
    for (int64_t d : dims_)
      if (d == 0) return true;
    int64_t n = element_bytes;
    for (int64_t d : dims_)
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
  const int64_t* data() const { return dims_.data(); }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>::const_iterator begin() const { return dims_.begin(); }
  std::vector<int64_t>::const_iterator end() const { return dims_.end(); }

  bool operator==(const TShape& o) const { return known_ == o.known_ && dims_ == o.dims_; }
  bool operator!=(const TShape& o) const { return !(*this == o); }

  /*! \brief Python tuple notation, as MXNet prints shapes: "(2, 3)", "(5,)", "()"; "None" when
   * unknown; an unknown dimension prints as -1. */
  std::string ToString() const {
    if (!known_) return "None";
    std::string s = "(";
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (i) s += ", ";
      s += std::to_string(dims_[i]);
    }
    if (dims_.size() == 1) s += ",";
    return s + ")";
  }

 private:
  bool known_ = false;
  std::vector<int64_t> dims_;
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
