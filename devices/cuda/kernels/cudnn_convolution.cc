// cuDNN's convolutions (cudnn_convolution.h). Host code only: compiled by the C++ compiler, with
// cuDNN's legacy convolution API, which cuDNN 9 keeps but marks deprecated (CMake checks at
// configure time that the installed cuDNN still declares it; without it MXPLUG_CUDNN is 0 and the
// unrolled kernel runs).
//
// Note [cuDNN convolutions]: a call is one convolution problem in cuDNN's terms: X, the image side
// (a Convolution's data, a Deconvolution's output), Y, the positions side, and the filter W of
// shape (Y's channels, X's channels / groups, kernel...), which is each op's weight as MXNet lays
// it out. So a Convolution's forward is cuDNN's forward (X to Y) and a Deconvolution's is its
// backward-data (Y to X); their backwards swap the same way. 1-d windows get a height of 1, as
// cuDNN wants 4-d tensors at least. float32 runs in FMA math (no TF32, as in MXNet 1.x and as the
// conformance suite's tolerances assume) unless MXPLUG_CUDNN_ALLOW_TF32=1; float16 computes in
// float32 on tensor cores, as MXNet's does by default.
//
// Algorithms are chosen as MXNet chooses them, per problem, and cached under a key of everything
// that makes the choice (the three shapes, pad, stride, dilate, groups, dtype, device, direction,
// add-to or not, the tuning mode and the workspace limit): the op's cudnn_tune, or
// MXNET_CUDNN_AUTOTUNE_DEFAULT where the op leaves it unset (default 1). 0 (off) takes cuDNN's
// heuristics' first algorithm that fits the workspace; 1 (limited_workspace) runs cuDNN's
// algorithm search and takes the fastest that fits; 2 (fastest) the fastest of all. The op's
// `workspace` (MB) is the limit; the workspace itself is the op's temp space. Each new key prints
// one line to stderr with the choice, as MXNet logs its autotuning.
#include "cudnn_convolution.h"

#if MXPLUG_CUDNN

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudnn_common.h"

namespace mxplug_cuda {
namespace {

using mxplug::OpContext;
using mxplug::OpReqType;
using mxplug::TBlob;

using cudnn::CheckRun;
using cudnn::CurrentDevice;
using cudnn::HandleFor;
using cudnn::Int;
using cudnn::NotSupported;
using cudnn::Scale;
using cudnn::SetTensor;
using cudnn::StreamOf;
using cudnn::TensorDesc;

// Descriptors beside TensorDesc (cudnn_common.h), destroyed with their owner.
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() { cudnn::Check(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor"); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() {
    cudnn::Check(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

/*! \brief One problem (Note [cuDNN convolutions]): descriptors of X, Y, W, the bias and the
 * convolution, and the key the algorithm cache files it under. */
struct Problem {
  TensorDesc x, y, bias;
  FilterDesc w;
  ConvDesc conv;
  cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
  std::string key;

  Problem(const mxplug_nn::ConvShape& s, bool deconv, int type_flag) {
    dtype = cudnn::DataType(type_flag);
    const mxplug_nn::Window& win = s.window;
    // X's channels and Y's: a Convolution's data and filters, a Deconvolution's filters and data.
    // The bias has num_filter channels either way: on Y for a Convolution, on X for a
    // Deconvolution.
    const int64_t xc = deconv ? s.filters : s.in_channels, yc = deconv ? s.in_channels : s.filters;
    std::vector<int> xd{Int(s.batch), Int(xc)}, yd{Int(s.batch), Int(yc)},
        wd{Int(yc), Int(xc / s.groups)}, bd{1, Int(s.filters)}, pad, stride, dilate;
    if (win.axes() == 1) {  // a height of 1
      xd.push_back(1), yd.push_back(1), wd.push_back(1);
      pad.push_back(0), stride.push_back(1), dilate.push_back(1);
    }
    for (int a = 0; a < win.axes(); ++a) {
      xd.push_back(Int(win.image[a])), yd.push_back(Int(win.positions[a]));
      wd.push_back(Int(win.kernel[a]));
      pad.push_back(Int(win.pad[a])), stride.push_back(Int(win.stride[a]));
      dilate.push_back(Int(win.dilate[a]));
    }
    bd.resize(xd.size(), 1);
    SetTensor(x, dtype, xd);
    SetTensor(y, dtype, yd);
    cudnn::Check(cudnnSetFilterNdDescriptor(w.d, dtype, CUDNN_TENSOR_NCHW,
                                            static_cast<int>(wd.size()), wd.data()),
                 "cudnnSetFilterNdDescriptor");
    // float16 computes in float32 (MXNet's pseudo-float16 default) on tensor cores, which MXNet
    // allows by default (MXNET_CUDA_ALLOW_TENSOR_CORE=1).
    const bool half = dtype == CUDNN_DATA_HALF;
    cudnn::Check(cudnnSetConvolutionNdDescriptor(
                     conv.d, static_cast<int>(pad.size()), pad.data(), stride.data(), dilate.data(),
                     CUDNN_CROSS_CORRELATION, half ? CUDNN_DATA_FLOAT : dtype),
                 "cudnnSetConvolutionNdDescriptor");
    cudnn::Check(cudnnSetConvolutionGroupCount(conv.d, Int(s.groups)),
                 "cudnnSetConvolutionGroupCount");
    const bool tf32 = dtype == CUDNN_DATA_FLOAT && EnvIs("MXPLUG_CUDNN_ALLOW_TF32", "1");
    cudnn::Check(cudnnSetConvolutionMathType(conv.d, half   ? CUDNN_TENSOR_OP_MATH
                                                     : tf32 ? CUDNN_DEFAULT_MATH
                                                            : CUDNN_FMA_MATH),
                 "cudnnSetConvolutionMathType");
    std::ostringstream k;
    k << "x" << Dims(xd) << " w" << Dims(wd) << " y" << Dims(yd) << " pad" << Dims(pad) << " stride"
      << Dims(stride) << " dilate" << Dims(dilate) << " groups " << s.groups << " "
      << (half                        ? "float16 (float32 compute)"
          : dtype == CUDNN_DATA_FLOAT ? (tf32 ? "float32 (TF32)" : "float32")
                                      : "float64")
      << " on cuda(" << CurrentDevice() << ")";
    key = k.str();
    SetTensor(bias, dtype, bd);
  }

  static bool EnvIs(const char* name, const char* value) {
    const char* v = std::getenv(name);
    return v && std::string(v) == value;
  }
  static std::string Dims(const std::vector<int>& v) {
    std::string out = "(";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    return out + ")";
  }
};

// The three directions, each with its own algorithm enum and cuDNN calls.
enum class Direction { kForward, kBackwardData, kBackwardFilter };
const char* Name(Direction d) {
  return d == Direction::kForward        ? "forward"
         : d == Direction::kBackwardData ? "backward data"
                                         : "backward filter";
}

struct Choice {
  int algo = 0;
  size_t workspace = 0;
};

/*! \brief The tuning mode: the op's cudnn_tune, else MXNET_CUDNN_AUTOTUNE_DEFAULT (default 1). */
int TuneMode(const mxplug_nn::ConvShape& s) {
  if (s.cudnn_tune >= 0) return s.cudnn_tune;
  const char* v = std::getenv("MXNET_CUDNN_AUTOTUNE_DEFAULT");
  if (!v || !*v) return 1;
  const std::string text = v;
  if (text == "0" || text == "1" || text == "2") return text[0] - '0';
  throw std::invalid_argument("MXNET_CUDNN_AUTOTUNE_DEFAULT=" + text +
                              ": expected 0 (off), 1 (limited workspace) or 2 (fastest)");
}

// Perf results of any direction, reduced to what the choice needs.
struct Candidate {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
};

template <class Perf>
std::vector<Candidate> Candidates(const Perf* perf, int n) {
  std::vector<Candidate> out;
  for (int i = 0; i < n; ++i)
    out.push_back({static_cast<int>(perf[i].algo), perf[i].status, perf[i].time, perf[i].memory});
  return out;
}

std::vector<Candidate> Search(cudnnHandle_t h, const Problem& p, Direction d, bool measure) {
  constexpr int kMax = 16;
  int n = 0;
  switch (d) {
    case Direction::kForward: {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      cudnn::Check(measure ? cudnnFindConvolutionForwardAlgorithm(h, p.x.d, p.w.d, p.conv.d, p.y.d,
                                                                  kMax, &n, perf)
                           : cudnnGetConvolutionForwardAlgorithm_v7(h, p.x.d, p.w.d, p.conv.d,
                                                                    p.y.d, kMax, &n, perf),
                   "choosing a cuDNN forward convolution algorithm");
      return Candidates(perf, n);
    }
    case Direction::kBackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      cudnn::Check(measure ? cudnnFindConvolutionBackwardDataAlgorithm(h, p.w.d, p.y.d, p.conv.d,
                                                                       p.x.d, kMax, &n, perf)
                           : cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.w.d, p.y.d, p.conv.d,
                                                                         p.x.d, kMax, &n, perf),
                   "choosing a cuDNN backward-data convolution algorithm");
      return Candidates(perf, n);
    }
    case Direction::kBackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
      cudnn::Check(measure ? cudnnFindConvolutionBackwardFilterAlgorithm(h, p.x.d, p.y.d, p.conv.d,
                                                                         p.w.d, kMax, &n, perf)
                           : cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                                 h, p.x.d, p.y.d, p.conv.d, p.w.d, kMax, &n, perf),
                   "choosing a cuDNN backward-filter convolution algorithm");
      return Candidates(perf, n);
    }
  }
  return {};
}

/*! \brief The cached or newly chosen algorithm of `p` in direction `d` (Note [cuDNN
 * convolutions]). \throws NotSupported when no algorithm qualifies. */
Choice Choose(cudnnHandle_t h, const Problem& p, Direction d, const mxplug_nn::ConvShape& s,
              bool add_to) {
  const int mode = TuneMode(s);
  const size_t limit = static_cast<size_t>(s.workspace_mb) << 20;
  const std::string key = std::string(Name(d)) + " " + p.key + (add_to ? " add-to" : "") +
                          " tune " + std::to_string(mode) +
                          (mode == 2 ? "" : " workspace " + std::to_string(s.workspace_mb) + " MB");
  static std::mutex mutex;
  static std::map<std::string, Choice> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  // Chosen outside the lock: a search takes long, and two threads that race only choose twice.
  // cuDNN's search allocates its own buffers beside the memory pool's blocks: where they do not
  // fit, the heuristics choose, as with MXNET_CUDNN_AUTOTUNE_DEFAULT=0.
  bool measured = mode != 0;
  std::vector<Candidate> found;
  try {
    found = Search(h, p, d, measured);
  } catch (const std::bad_alloc&) {
    if (!measured) throw;
    measured = false;
    found = Search(h, p, d, false);
  }
  const Candidate* best = nullptr;
  for (const Candidate& c : found)
    if (c.status == CUDNN_STATUS_SUCCESS && (mode == 2 || c.memory <= limit)) {
      best = &c;
      break;
    }
  if (!best) throw NotSupported{};
  const Choice choice{best->algo, best->memory};
  std::fprintf(stderr, "[mxplug] cuDNN convolution %s: algorithm %d, %.1f MB workspace%s\n",
               key.c_str(), choice.algo, static_cast<double>(choice.workspace) / (1 << 20),
               !measured ? (mode == 0 ? " (heuristics)" : " (heuristics: no memory to measure in)")
                         : (" (" + std::to_string(best->time) + " ms measured)").c_str());
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, choice);
  return choice;
}

void* Workspace(const OpContext& ctx, size_t bytes) {
  return bytes ? ctx.requested[0].get_space(bytes) : nullptr;
}

// X to Y (a Convolution's forward, a Deconvolution's data gradient).
void Forward(cudnnHandle_t h, const Problem& p, const Choice& c, void* ws, const void* x,
             const void* w, void* y, OpReqType req) {
  const Scale scale(p.dtype);
  CheckRun(cudnnConvolutionForward(h, scale.one(), p.x.d, x, p.w.d, w, p.conv.d,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), ws, c.workspace,
                                   scale.beta(req), p.y.d, y),
           "cudnnConvolutionForward");
}
// Y to X (a Convolution's data gradient, a Deconvolution's forward).
void BackwardData(cudnnHandle_t h, const Problem& p, const Choice& c, void* ws, const void* w,
                  const void* y, void* x, OpReqType req) {
  const Scale scale(p.dtype);
  CheckRun(cudnnConvolutionBackwardData(h, scale.one(), p.w.d, w, p.y.d, y, p.conv.d,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), ws,
                                        c.workspace, scale.beta(req), p.x.d, x),
           "cudnnConvolutionBackwardData");
}
// X and Y to W's gradient.
void BackwardFilter(cudnnHandle_t h, const Problem& p, const Choice& c, void* ws, const void* x,
                    const void* y, void* dw, OpReqType req) {
  const Scale scale(p.dtype);
  CheckRun(cudnnConvolutionBackwardFilter(h, scale.one(), p.x.d, x, p.y.d, y, p.conv.d,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), ws,
                                          c.workspace, scale.beta(req), p.w.d, dw),
           "cudnnConvolutionBackwardFilter");
}

bool Enabled(const mxplug_nn::ConvShape& s) {
  return !s.cudnn_off && s.window.axes() >= 1 && s.window.axes() <= 3;
}

}  // namespace

bool CudnnConvolutionForward(bool deconv, const OpContext& ctx, const mxplug_nn::ConvShape& s,
                             const TBlob& data, const TBlob& weight, const TBlob* bias,
                             const TBlob& out, OpReqType req) {
  if (!Enabled(s)) return false;
  try {
    const Problem p(s, deconv, data.type_flag_);
    cudnnHandle_t h = HandleFor(StreamOf(ctx));
    const bool add_to = req == mxplug::kAddTo;
    // A Convolution's forward is cuDNN's; a Deconvolution's is its backward data.
    const Choice c =
        Choose(h, p, deconv ? Direction::kBackwardData : Direction::kForward, s, add_to);
    void* ws = Workspace(ctx, c.workspace);
    if (!deconv)
      Forward(h, p, c, ws, data.dptr_, weight.dptr_, out.dptr_, req);
    else
      BackwardData(h, p, c, ws, weight.dptr_, data.dptr_, out.dptr_, req);
    if (bias) {  // out (a Convolution's Y, a Deconvolution's X) += bias per channel
      const Scale scale(p.dtype);
      CheckRun(cudnnAddTensor(h, scale.one(), p.bias.d, bias->dptr_, scale.one(),
                              deconv ? p.x.d : p.y.d, out.dptr_),
               "cudnnAddTensor");
    }
    return true;
  } catch (const NotSupported&) {
    return false;  // thrown before any work was queued
  }
}

bool CudnnConvolutionBackward(bool deconv, const OpContext& ctx, const mxplug_nn::ConvShape& s,
                              const TBlob& out_grad, const TBlob& data, const TBlob& weight,
                              const mxplug_nn::LayerGrads& grads) {
  if (!Enabled(s)) return false;
  try {
    const Problem p(s, deconv, data.type_flag_);
    cudnnHandle_t h = HandleFor(StreamOf(ctx));
    const bool want_data = grads.data_req != mxplug::kNullOp;
    const bool want_weight = grads.weight_req != mxplug::kNullOp;
    // Every algorithm is chosen before any work is queued (Note [cuDNN convolutions]).
    const Direction data_dir = deconv ? Direction::kForward : Direction::kBackwardData;
    const Choice data_choice =
        want_data ? Choose(h, p, data_dir, s, grads.data_req == mxplug::kAddTo) : Choice{};
    const Choice weight_choice = want_weight ? Choose(h, p, Direction::kBackwardFilter, s,
                                                      grads.weight_req == mxplug::kAddTo)
                                             : Choice{};
    // A Convolution's out_grad is dY and its data X; a Deconvolution's the other way round.
    const void* x = deconv ? out_grad.dptr_ : data.dptr_;
    const void* y = deconv ? data.dptr_ : out_grad.dptr_;
    // One workspace for both: asking the temp space twice could move it between the calls.
    void* ws = Workspace(ctx, std::max(data_choice.workspace, weight_choice.workspace));
    if (want_data) {
      if (!deconv)
        BackwardData(h, p, data_choice, ws, weight.dptr_, y, grads.data->dptr_, grads.data_req);
      else
        Forward(h, p, data_choice, ws, x, weight.dptr_, grads.data->dptr_, grads.data_req);
    }
    if (want_weight)
      BackwardFilter(h, p, weight_choice, ws, x, y, grads.weight->dptr_, grads.weight_req);
    if (grads.bias && grads.bias_req != mxplug::kNullOp) {
      const Scale scale(p.dtype);
      // cuDNN sums "dy" per channel: here the output's gradient, X for a Deconvolution.
      CheckRun(
          cudnnConvolutionBackwardBias(h, scale.one(), deconv ? p.x.d : p.y.d, out_grad.dptr_,
                                       scale.beta(grads.bias_req), p.bias.d, grads.bias->dptr_),
          "cudnnConvolutionBackwardBias");
    }
    return true;
  } catch (const NotSupported&) {
    return false;  // thrown before any work was queued
  }
}

}  // namespace mxplug_cuda

#else  // no cuDNN convolution API in this build: the unrolled kernel runs

namespace mxplug_cuda {
bool CudnnConvolutionForward(bool, const mxplug::OpContext&, const mxplug_nn::ConvShape&,
                             const mxplug::TBlob&, const mxplug::TBlob&, const mxplug::TBlob*,
                             const mxplug::TBlob&, mxplug::OpReqType) {
  return false;
}
bool CudnnConvolutionBackward(bool, const mxplug::OpContext&, const mxplug_nn::ConvShape&,
                              const mxplug::TBlob&, const mxplug::TBlob&, const mxplug::TBlob&,
                              const mxplug_nn::LayerGrads&) {
  return false;
}
}  // namespace mxplug_cuda

#endif
