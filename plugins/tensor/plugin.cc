// The tensor plugin: elementwise and scalar arithmetic on the CPU.
#include "mxplug/plugin.hpp"

MXPLUG_PLUGIN("tensor", MXPLUG_PLUGIN_VERSION, "mxplug")
