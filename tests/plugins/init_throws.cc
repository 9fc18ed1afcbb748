// A plugin written without the SDK whose mxplug_init lets a C++ exception escape: the host must
// catch it and refuse the plugin instead of terminating.
#include <stdexcept>

#include "mxplug/plugin_abi.h"

extern "C" MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi*, MXPPluginApi*) {
  throw std::runtime_error("boom: configuration file not found");
}
