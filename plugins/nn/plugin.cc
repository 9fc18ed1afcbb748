// The nn plugin: neural-network layers and linear algebra on the CPU (OpenBLAS).
#include "mxplug/plugin.hpp"

MXPLUG_PLUGIN("nn", MXPLUG_PLUGIN_VERSION, "mxplug")
