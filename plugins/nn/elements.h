// What the nn kernels written over a device's element loop (activation.h, softmax.h, loss.h...)
// share: the names of a variable number of inputs, reading an element in double, the lines of an
// array along an axis, and a count that one call makes on the device (for gradients normalised by
// the number of valid entries).
#ifndef MXPLUG_PLUGINS_NN_ELEMENTS_H_
#define MXPLUG_PLUGINS_NN_ELEMENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

/*! \brief The input names of an op of n inputs (UpSampling, khatri_rao): arg0, arg1... */
inline std::vector<std::string> ArgNames(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

/*! \brief An element in double, through its compute type (float16 converts to float only). */
template <class T>
MXPLUG_XINLINE double AsDouble(T v) {
  return static_cast<double>(static_cast<mxplug::ComputeType<T>>(v));
}

/*! \brief The lines of an array along one axis: line l starts at element Base(l), and its n
 * elements are `inner` apart. */
struct Lines {
  int64_t count, n, inner;
  MXPLUG_XINLINE int64_t Base(int64_t l) const { return (l / inner) * n * inner + l % inner; }
};

inline Lines LinesAlong(const mxplug::TShape& s, int axis) {
  const int64_t outer = s.ProdShape(0, axis), inner = s.ProdShape(axis + 1, s.ndim());
  return {outer * inner, s[axis], inner};
}

/*! \brief How many of v[0..n) satisfy pred (given the value in double), at least 1, written to
 * *count by one call: a normaliser that stays on the device. */
template <class T, class Pred>
struct CountAtLeastOne {
  const T* v;
  int64_t n;
  Pred pred;
  double* count;
  MXPLUG_XINLINE void operator()(int64_t) const {
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) k += pred(AsDouble(v[i])) ? 1 : 0;
    *count = static_cast<double>(k > 1 ? k : 1);
  }
};

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_ELEMENTS_H_
