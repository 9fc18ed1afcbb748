// Internal: the tensor lists of one kernel call, as the MXPKernelArgs the kernel receives.
// Shared by OpRunner (synchronous) and the imperative path (inside engine functions).
#ifndef MXPLUG_CORE_OPERATOR_KERNEL_CALL_H_
#define MXPLUG_CORE_OPERATOR_KERNEL_CALL_H_

#include <dlpack/dlpack.h>

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "mxplug/abi/op.h"
#include "mxplug/sdk/context.hpp"
#include "mxplug/sdk/tshape.hpp"

namespace mxplug::detail {

/*! \brief "data, weight, bias" ("none" when empty), for error messages. */
inline std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

/*! \brief "[(2, 3), (4,)]", for error messages. */
inline std::string ShapeList(const std::vector<TShape>& shapes) {
  std::string s;
  for (const TShape& t : shapes) s += (s.empty() ? "" : ", ") + t.ToString();
  return "[" + s + "]";
}

/*!
 * \brief A list of one kernel call's tensors (or their requests, variables, resources): few for
 * almost every op, so kept inside the call without a heap block of its own. A call allocated
 * a dozen such lists, each a malloc and a free on every imperative call (issue 26).
 */
template <typename T>
using CallList = boost::container::small_vector<T, 4>;

/*! \brief `*views` made the kernel's views of `arrays` (in place: a list of a call is refilled). */
template <typename Arrays>
void SetViews(CallList<DLTensor>* views, const Arrays& arrays) {
  views->clear();
  for (const auto& a : arrays) views->push_back(a.ToDLTensor());
}

template <typename Arrays>
CallList<DLTensor> Views(const Arrays& arrays) {
  CallList<DLTensor> out;
  SetViews(&out, arrays);
  return out;
}

// The tensor lists of one kernel call; they must outlive the MXPKernelArgs that point into them.
struct KernelViews {
  CallList<DLTensor> in, out, aux, out_grad, in_grad;
  CallList<int32_t> req;

  template <typename Resources>
  MXPKernelArgs Args(bool is_train, Context ctx, const Resources& requested,
                     void* stream = nullptr) const {
    MXPKernelArgs a{};
    a.struct_size = sizeof(a);
    a.is_train = is_train ? 1 : 0;
    a.device = ctx.ToDLDevice();
    a.stream = stream;
    a.requested = requested.data();
    a.num_requested = requested.size();
    a.in_data = in.data();
    a.num_in_data = in.size();
    a.out_data = out.data();
    a.num_out_data = out.size();
    a.aux = aux.data();
    a.num_aux = aux.size();
    a.out_grad = out_grad.data();
    a.num_out_grad = out_grad.size();
    a.in_grad = in_grad.data();
    a.num_in_grad = in_grad.size();
    a.req = req.data();
    a.num_req = req.size();
    return a;
  }
};

}  // namespace mxplug::detail

#endif  // MXPLUG_CORE_OPERATOR_KERNEL_CALL_H_
