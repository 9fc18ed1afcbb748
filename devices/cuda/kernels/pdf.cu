// GPU kernels of the probability densities (_random_pdf_<dist>): the definition header's element
// functions (plugins/random/pdf.h), one thread per sample or per parameter element.
#include "launch.cuh"
#include "random/pdf.h"

namespace mxplug_cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
  mxplug_random::ForEachPdf(mxplug_random::PdfKernels<CudaLoop>{kGpuDevice});
  return true;
}();

}  // namespace
}  // namespace mxplug_cuda
