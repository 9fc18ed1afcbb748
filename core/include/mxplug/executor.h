/*!
 * \file mxplug/executor.h
 * \brief Executor: a Symbol bound to arrays (MXNet's bind), on one device or, with group2ctx, on
 * several. At bind it infers every
 * shape and dtype, builds the gradient steps from each op's DeclareBackwardDependency, plans the
 * memory of everything the graph makes (in-place reuse and co-sharing along dependency paths),
 * and prepares one engine push per step; Forward and Backward then only push. See
 * docs/architecture.md, "Executor".
 */
#ifndef MXPLUG_EXECUTOR_H_
#define MXPLUG_EXECUTOR_H_

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mxplug/ndarray.h"
#include "mxplug/sdk/context.hpp"
#include "mxplug/symbol.h"

namespace mxplug {

/*! \brief What backward does with an argument's gradient array (MXNet's grad_req). */
enum class GradReq { kNull, kWrite, kAdd };

struct ExecutorOptions {
  /*! \brief Share buffers between entries whose lifetimes do not overlap; false: one buffer each.
   */
  bool plan_memory = true;
  /*!
   * \brief Model parallelism (MXNet's group2ctx): the context of each ctx_group; an op node whose
   * "__ctx_group__" attribute names one runs there, copies crossing between contexts (Note
   * [Model parallelism] in executor.cc).
   */
  std::map<std::string, Context> group2ctx;
};

/*! \brief Bytes of the arrays the graph makes itself (outputs of ops and internal gradients). */
struct MemoryReport {
  size_t planned = 0;  // what the executor allocated
  size_t naive = 0;    // one buffer per entry
  size_t inplace = 0;  // entries written over one of their inputs
  size_t shared = 0;   // entries placed in a buffer another entry used before
};

class Executor {
 public:
  /*!
   * \param args one array per ListArguments() entry; aux one per ListAuxiliaryStates() entry.
   * \param arg_grads one per argument (none where grad_req is kNull); grad_req one per argument.
   * \throws Error naming the argument, shapes or op when something does not fit; nothing is pushed.
   */
  Executor(const Symbol& symbol, Context ctx, std::vector<NDArray> args,
           std::vector<NDArray> arg_grads, std::vector<GradReq> grad_req, std::vector<NDArray> aux,
           ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /*!
   * \brief Pushes every forward step; is_train as the ops see it (Dropout, BatchNorm).
   * \param reading empty, or one entry per argument: a given array is read in this pass where
   * the bound argument would be, which keeps its contents (Note [Reading in place] in
   * executor.cc); it must have the argument's shape, dtype and context.
   * \throws Error naming the argument when a given array does not fit; nothing is pushed.
   */
  void Forward(bool is_train, const std::vector<NDArray>& reading = {});
  /*!
   * \brief Pushes the gradient steps. `out_grads` has one array per output, or is empty when every
   * output comes from a loss op (an op whose backward does not read its output gradient).
   * is_train false gives the gradient of the inference computation (what forward(is_train=false)
   * computed: BatchNorm through its moving statistics).
   * \throws Error when an output gradient that backward needs is missing or does not fit.
   */
  void Backward(const std::vector<NDArray>& out_grads, bool is_train = true);

  const Symbol& symbol() const { return symbol_; }
  Context ctx() const { return ctx_; }
  const std::vector<NDArray>& outputs() const { return outputs_; }
  const std::vector<NDArray>& arg_arrays() const { return args_; }
  const std::vector<NDArray>& grad_arrays() const { return arg_grads_; }
  const std::vector<NDArray>& aux_arrays() const { return aux_; }
  const std::vector<GradReq>& grad_req() const { return grad_req_; }
  const MemoryReport& memory() const { return memory_; }
  /*! \brief The steps as they are pushed, each entry's buffer, and the memory report. */
  std::string DebugStr() const;

  /*!
   * \brief MXNet's monitor (Executor.set_monitor_callback): while on, what each op's step
   * computes is copied as the step is pushed (so a later step that reuses the memory cannot
   * change it), named as MXNet names it: "<node>_<output>" for a forward step,
   * "<node>_backward_output" (or "..._output<i>", one per input, when the op has several) for
   * a gradient step; with monitor_all the step's inputs first ("<node>_<input>",
   * "<node>_backward_input<i>"). Steps are then pushed one by one, never in segments.
   */
  void SetMonitor(bool on, bool monitor_all);
  /*! \brief What was monitored since the last call, in the order the steps were pushed. */
  std::vector<std::pair<std::string, NDArray>> TakeMonitored();

 private:
  struct Plan;
  // A step's monitored arrays (SetMonitor); `backward` names them as a gradient step's.
  void Monitor(uint32_t step, bool backward);
  bool monitor_ = false, monitor_all_ = false;
  std::vector<std::pair<std::string, NDArray>> monitored_;
  Symbol symbol_;
  Context ctx_;
  std::vector<NDArray> args_, arg_grads_, aux_, outputs_;
  std::vector<GradReq> grad_req_;
  MemoryReport memory_;
  std::unique_ptr<Plan> plan_;
};

}  // namespace mxplug

#endif  // MXPLUG_EXECUTOR_H_
