// softmax and log_softmax forward on oneDNN.
#include "call.h"
#include "onednn.h"

namespace mxplug_nn::onednn {

bool SoftmaxForward(const mxplug::OpContext& ctx, const mxplug::TBlob& data, int axis, bool log,
                    const mxplug::TBlob& out, mxplug::OpReqType req) {
  if (!Enabled(data.type_flag_) || req == mxplug::kNullOp) return false;
  const memory::dims dims = Dims(data.shape_);
  using Softmax = Primitive<dnnl::softmax_v2_forward>;
  auto p = Cached<Softmax>(Key("softmax", dims, memory::dims{axis, log}), [&] {
    return Softmax({{dnnl::prop_kind::forward_inference,
                     log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate, Plain(dims), Plain(dims),
                     axis},
                    Attr(), Engine()});
  });
  if (!p) return false;
  RunSrcToDst(ctx, *p, dims, data.dptr<float>(), dims, out.dptr<float>(), req);
  return true;
}

}  // namespace mxplug_nn::onednn
