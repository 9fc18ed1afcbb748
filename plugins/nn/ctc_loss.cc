// Registers CTCLoss and its alias ctc_loss (ctc_loss.h) with the CPU kernel.
#include "ctc_loss.h"

namespace {

using mxplug_nn::CTCLossParam;

MXPLUG_REGISTER_PARAMETER(CTCLossParam);

[[maybe_unused]] const bool registered = [] {
  for (const char* name : {"CTCLoss", "ctc_loss"})
    mxplug::RegisterOpProperty<mxplug_nn::CTCLossProp>(name)
        .describe(
            "Connectionist Temporal Classification loss: -log p(label | data) per sequence, over "
            "every alignment of the label to the data's time steps.")
        .add_argument("data", "NDArray-or-Symbol", "Input ndarray")
        .add_argument("label", "NDArray-or-Symbol", "Ground-truth labels for the loss.")
        .add_argument("data_lengths", "NDArray-or-Symbol",
                      "Lengths of data for each of the samples. Only required when "
                      "use_data_lengths is true.")
        .add_argument("label_lengths", "NDArray-or-Symbol",
                      "Lengths of labels for each of the samples. Only required when "
                      "use_label_lengths is true.")
        .add_arguments(CTCLossParam::Fields());
  mxplug_nn::RegisterCTCLossKernels<mxplug::CpuLoop>(kDLCPU);
  return true;
}();

}  // namespace
