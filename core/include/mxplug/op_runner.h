/*!
 * \file mxplug/op_runner.h
 * \brief OpRunner: one op, configured by kwargs, run directly on Tensors of one device:
 * inference of output shapes and types, allocation, the plugin's kernel, temp space. The
 * synchronous path under NDArray and the executor, and what tests call ops through.
 */
#ifndef MXPLUG_OP_RUNNER_H_
#define MXPLUG_OP_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "mxplug/kernel.h"
#include "mxplug/op.h"
#include "mxplug/sdk/context.hpp"
#include "mxplug/sdk/parameter.hpp"
#include "mxplug/tensor.h"

namespace mxplug {

class Runtime;

class OpRunner {
 public:
  /*!
   * \param runtime where the op and its kernel are looked up (default: Runtime::Get()); tensors
   * and temp space always come from the process-wide runtime's device backends.
   * \throws Error for an unknown op, bad kwargs, or no kernel of the op on ctx's device type.
   */
  OpRunner(const std::string& op, const KwArgs& kwargs, Context ctx = Context::CPU(),
           Runtime* runtime = nullptr);
  ~OpRunner();

  const OpProperty& property() const { return *property_; }

  /*! \brief Infers output shapes and types from the inputs, allocates outputs, runs forward. */
  std::vector<Tensor> Forward(const std::vector<Tensor>& inputs,
                              const std::vector<Tensor>& aux = {}, bool is_train = false);
  /*! \brief Forward into given outputs with a req per output. */
  void ForwardInto(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                   const std::vector<OpReqType>& req, const std::vector<Tensor>& aux = {},
                   bool is_train = false);
  /*! \brief Allocates input gradients (kWriteTo) and runs backward. */
  std::vector<Tensor> Backward(const std::vector<Tensor>& out_grads,
                               const std::vector<Tensor>& inputs,
                               const std::vector<Tensor>& outputs,
                               const std::vector<Tensor>& aux = {});
  /*! \brief Backward into given gradients with a req per input. */
  void BackwardInto(const std::vector<Tensor>& out_grads, const std::vector<Tensor>& inputs,
                    const std::vector<Tensor>& outputs, const std::vector<Tensor>& in_grads,
                    const std::vector<OpReqType>& req, const std::vector<Tensor>& aux = {});

  /*! \brief The most temp space one of this runner's calls asked for, in bytes (0: none yet). */
  size_t temp_space_bytes() const;

 private:
  struct TempSpace;
  void CheckCount(const char* what, size_t got, const std::vector<std::string>& names) const;
  void CheckDevice(const char* what, const std::vector<Tensor>& tensors) const;
  /*! \brief The resources the op asked for in a phase, as the kernel receives them. */
  std::vector<const MXPResource*> Requested(MXPPhase phase) const;

  Context ctx_;
  std::unique_ptr<OpProperty> property_;
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<TempSpace> temp_;
};

}  // namespace mxplug

#endif  // MXPLUG_OP_RUNNER_H_
