// The probability densities (pdf.h): their definitions and CPU kernels.
#include "pdf.h"

#include <string>

namespace {

using mxplug_random::PdfParam;
MXPLUG_REGISTER_PARAMETER(PdfParam);

struct PdfDefinitions {
  template <class Pdf>
  void Scalar(const std::string& name, const char* doc) const {
    Define<mxplug_random::PdfProp<Pdf>>(name, doc, Pdf::Inputs());
  }
  void Dirichlet(const std::string& name, const char* doc) const {
    Define<mxplug_random::PdfProp<mxplug_random::DirichletInputs, true>>(name, doc, {"alpha"});
  }
  template <class Prop>
  static void Define(const std::string& name, const char* doc,
                     const std::vector<std::string>& params) {
    auto& op = mxplug::RegisterOpProperty<Prop>(name.c_str())
                   .describe(std::string(doc) +
                             " The parameters' shape is the samples' leading one; the gradient "
                             "flows to the samples and the parameters.")
                   .add_argument("sample", "NDArray-or-Symbol", "Samples from the distributions.");
    for (const std::string& p : params)
      op.add_argument(p, "NDArray-or-Symbol", "The distributions' " + p + ".");
    op.add_arguments(PdfParam::Fields());
  }
};

[[maybe_unused]] const bool registered = [] {
  mxplug_random::ForEachPdf(PdfDefinitions{});
  mxplug_random::ForEachPdf(mxplug_random::PdfKernels<mxplug::CpuLoop>{kDLCPU});
  return true;
}();

}  // namespace
