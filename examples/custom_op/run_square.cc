// Runs myorg.Square through the mxplug core: load the plugins (the default folder and
// MXPLUG_PLUGIN_PATH), then forward and backward on a small tensor. Prints the results as
// "forward: v0 v1 ..." and "backward: ..." lines.
#include <cstdio>
#include <exception>

#include "mxplug/op_runner.h"
#include "mxplug/runtime.h"

int main() {
  try {
    mxplug::Runtime::Get().EnsureDefaultPluginsLoaded();
    mxplug::OpRunner square("myorg.Square", {{"alpha", "0.5"}});
    mxplug::Tensor x = mxplug::Tensor::FromVector<float>({1, -2, 3, 0.5f}, mxplug::TShape{2, 2});
    std::vector<mxplug::Tensor> y = square.Forward({x});
    mxplug::Tensor dy = mxplug::Tensor::FromVector<float>({1, 1, 2, -1}, mxplug::TShape{2, 2});
    std::vector<mxplug::Tensor> dx = square.Backward({dy}, {x}, y);
    std::printf("forward:");
    for (float v : y[0].ToVector<float>()) std::printf(" %.6g", v);
    std::printf("\nbackward:");
    for (float v : dx[0].ToVector<float>()) std::printf(" %.6g", v);
    std::printf("\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_square: %s\n", e.what());
    return 1;
  }
  return 0;
}
