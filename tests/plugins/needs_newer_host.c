/* A plugin that needs a newer host release than this one. */
#include "c_plugin.h"

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  DescribeTestPlugin(out, "needs_newer_host", MXP_ABI_MAJOR, MXP_ABI_MINOR, 0, "99.0.0",
                     &RegisterNothing);
  return 0;
}
