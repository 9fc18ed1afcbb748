/* A plugin that crashes inside mxplug_init: only a probe in a child process survives it. */
#include <signal.h>

#include "mxplug/plugin_abi.h"

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host, (void)out;
  raise(SIGSEGV);
  return 0;
}
