/* A plugin built for a future ABI major: the host must refuse it before registering anything. */
#include "c_plugin.h"

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  DescribeTestPlugin(out, "bad_abi", 99, 3, 0, 0, &RegisterNothing);
  return 0;
}
