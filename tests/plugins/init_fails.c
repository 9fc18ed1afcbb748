/* A plugin whose registration reports an error status. */
#include "c_plugin.h"

static MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  (void)registrar;
  return host->status_new(kMXPUnavailable, "device driver libfake.so.1 is missing");
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  DescribeTestPlugin(out, "init_fails", MXP_ABI_MAJOR, MXP_ABI_MINOR, 0, 0, &RegisterAll);
  return 0;
}
