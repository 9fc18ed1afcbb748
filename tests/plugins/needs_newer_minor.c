/* A plugin that needs a host ABI minor this host does not have. */
#include "c_plugin.h"

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  DescribeTestPlugin(out, "needs_newer_minor", MXP_ABI_MAJOR, MXP_ABI_MINOR + 7, MXP_ABI_MINOR + 7, 0,
                     &RegisterNothing);
  return 0;
}
