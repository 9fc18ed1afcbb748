/*!
 * \file mxplug/imperative.h
 * \brief ImperativeOp: one op with fixed kwargs, invoked on NDArrays through the engine (what
 * `mx.nd.<op>(...)` runs). Shapes and dtypes are inferred and outputs allocated at the call, so
 * bad input raises there; the kernel runs later on an engine worker, and its errors surface at
 * the next sync point of an output.
 */
#ifndef MXPLUG_IMPERATIVE_H_
#define MXPLUG_IMPERATIVE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mxplug/kernel.h"
#include "mxplug/ndarray.h"
#include "mxplug/op.h"
#include "mxplug/sdk/operator.hpp"
#include "mxplug/sdk/parameter.hpp"

namespace mxplug {

class ImperativeOp {
 public:
  /*!
   * \brief The op configured by kwargs, made once per distinct (name, kwargs) and cached.
   * \throws Error for an unknown op or bad kwargs (the message names the op and the parameter).
   */
  static std::shared_ptr<const ImperativeOp> Get(const std::string& name, const KwArgs& kwargs);
  ImperativeOp(std::shared_ptr<const OpEntry> entry, const KwArgs& kwargs);
  /*!
   * \brief The op '_copy', the one op the core itself names: the executor and the kvstore sum
   * arrays as copies with kAddTo, since the device ABI has no arithmetic. \throws Error naming
   * `who` when no loaded plugin registers it.
   */
  static std::shared_ptr<const ImperativeOp> Copy(const std::string& who);

  const OpProperty& property() const { return property_; }
  const std::string& name() const { return property_.op().name; }
  /*! \brief The inputs a call takes: the arguments, then the auxiliary states. */
  const std::vector<std::string>& input_names() const { return input_names_; }
  size_t num_arguments() const { return num_arguments_; }
  size_t num_outputs() const { return output_names_.size(); }
  const std::vector<std::string>& output_names() const { return output_names_; }
  /*! \brief How many outputs a call returns to the user (the rest are internal). */
  size_t num_visible_outputs() const { return num_visible_outputs_; }

  /*!
   * \brief A kernel call whose arrays, requests and resources are fixed: checked once, then pushed
   * any number of times (what an executor does each step). Its arrays stay alive while it does.
   */
  struct Call;

  /*!
   * \brief Pushes forward. `outputs` holds one entry per output (or is empty: all allocated);
   * none entries are allocated with the inferred shape and dtype, given ones must match them.
   * An output that aliases an input is written in place only where the op allows that pair;
   * otherwise the result goes through a temporary and is copied in.
   * \param req one per output (empty: all kWriteTo).
   * \param ctx where an op without inputs runs (zeros, sampling); default CPU.
   */
  void Invoke(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs,
              bool is_train = false, const std::vector<OpReqType>& req = {},
              const Context* ctx = nullptr) const;
  /*! \brief Invoke, taking the arrays of `inputs` (left none) instead of copying them. */
  void Invoke(std::vector<NDArray>&& inputs, std::vector<NDArray>* outputs, bool is_train = false,
              const std::vector<OpReqType>& req = {}, const Context* ctx = nullptr) const;

  /*!
   * \brief Pushes backward: gradients of the arguments from the gradients of the outputs.
   * `in_grads` has one entry per argument; none entries with req kNullOp are skipped, other none
   * entries are allocated like their argument.
   */
  void Backward(const std::vector<NDArray>& out_grads, const std::vector<NDArray>& inputs,
                const std::vector<NDArray>& outputs, std::vector<NDArray>* in_grads,
                const std::vector<OpReqType>& req = {}) const;

  /*!
   * \brief Checks a forward call as Invoke does, with every output given; an output may alias an
   * input only where the op declares that pair in place. \throws Error as Invoke.
   */
  std::shared_ptr<const Call> PrepareForward(const std::vector<NDArray>& inputs,
                                             const std::vector<NDArray>& outputs,
                                             const std::vector<OpReqType>& req, bool is_train,
                                             const Context* ctx = nullptr) const;
  /*!
   * \brief Checks a backward call as Backward does, with every needed gradient given. is_train
   * false asks for the gradient of the inference computation (BatchNorm through its moving
   * statistics).
   */
  std::shared_ptr<const Call> PrepareBackward(const std::vector<NDArray>& out_grads,
                                              const std::vector<NDArray>& inputs,
                                              const std::vector<NDArray>& outputs,
                                              const std::vector<NDArray>& in_grads,
                                              const std::vector<OpReqType>& req,
                                              bool is_train = true) const;
  /*!
   * \brief `call` reading other arrays as some of its inputs: (input index, array) pairs, each
   * array of the shape, dtype and device of the input it replaces (the caller checks). What an
   * executor pushes to read a batch where its bound argument would be read.
   */
  static std::shared_ptr<const Call> WithInputs(
      const std::shared_ptr<const Call>& call,
      const std::vector<std::pair<size_t, NDArray>>& inputs);
  /*! \brief Pushes a prepared call to the engine. */
  static void Push(const std::shared_ptr<const Call>& call);

  /*!
   * \brief Pushes prepared calls, each run of up to `max_calls` consecutive calls on one
   * accelerator as one engine function that runs them in order on its stream, so that one
   * event covers them all (MXNet's bulk execution; Note [Segments] in imperative.cc).
   * Calls on the CPU are pushed one by one, free to run in parallel. Add, then Flush.
   */
  class Segments {
   public:
    explicit Segments(size_t max_calls) : max_calls_(max_calls) {}
    void Add(std::shared_ptr<const Call> call);
    /*! \brief Pushes what was added and not yet pushed. */
    void Flush();

   private:
    size_t max_calls_;
    std::vector<std::shared_ptr<const Call>> open_;
  };

 private:
  std::shared_ptr<const Kernel> KernelFor(Context ctx) const;
  Context CommonContext(const std::vector<NDArray>& arrays, const char* what) const;
  // `taken`: null, or `inputs` itself, whose arrays are then moved into the call.
  void InvokeTaking(const std::vector<NDArray>& inputs, std::vector<NDArray>* taken,
                    std::vector<NDArray>* outputs, bool is_train, const std::vector<OpReqType>& req,
                    const Context* ctx) const;
  std::shared_ptr<Call> Prepare(const std::vector<NDArray>& inputs, std::vector<NDArray>* outputs,
                                bool is_train, const std::vector<OpReqType>& req,
                                const Context* ctx,
                                std::vector<std::pair<size_t, NDArray>>* copy_back,
                                std::vector<NDArray>* taken = nullptr) const;
  std::shared_ptr<Call> PrepareGradient(const std::vector<NDArray>& out_grads,
                                        const std::vector<NDArray>& inputs,
                                        const std::vector<NDArray>& outputs,
                                        std::vector<NDArray>* in_grads,
                                        const std::vector<OpReqType>& req, bool is_train) const;
  /*! \brief \throws Error naming the state when an auxiliary state in `inputs` is read-only. */
  void CheckAuxWritable(const std::vector<NDArray>& inputs) const;
  /*! \brief Fills the call's resources, kernel, engine read/write sets and kernel views. */
  void Finish(Call* call, uint32_t resources) const;
  /*! \brief What inference gave for one signature of a forward call (Note [Inference cache]). */
  struct Inferred {
    std::vector<TShape> in_shapes, out_shapes;  // every input's; every output's
    std::vector<int> in_types, out_types;
    std::vector<bool> given_out;  // which outputs the call was given (theirs match out_*)
    uint32_t resources = 0;
    bool Matches(const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs) const;
  };
  /*! \brief The outputs' shapes and dtypes and the resources of a forward call, checked. */
  std::shared_ptr<const Inferred> Infer(const std::vector<NDArray>& inputs,
                                        const std::vector<NDArray>& outputs) const;

  OpProperty property_;
  KwArgs kwargs_;
  std::vector<std::string> input_names_, output_names_;
  size_t num_arguments_ = 0, num_visible_outputs_ = 0;
  std::vector<MXPInplacePair> forward_inplace_;
  mutable std::mutex kernels_mu_;
  mutable std::vector<std::pair<Context, std::shared_ptr<const Kernel>>> kernels_;
  // kernels_[0], written once under kernels_mu_ before first_kernel_known_, read without it.
  mutable Context first_kernel_ctx_;
  mutable std::shared_ptr<const Kernel> first_kernel_;
  mutable std::atomic<bool> first_kernel_known_{false};
  // Under kernels_mu_, oldest first (Note [Inference cache]).
  mutable std::vector<std::shared_ptr<const Inferred>> inferred_;
};

}  // namespace mxplug

#endif  // MXPLUG_IMPERATIVE_H_
