// The linalg plugin: MXNet's linear-algebra operators (mx.nd.linalg, mx.sym.linalg) on the CPU
// (OpenBLAS's BLAS and LAPACK).
#include "mxplug/plugin.hpp"

MXPLUG_PLUGIN("linalg", MXPLUG_PLUGIN_VERSION, "mxplug")
