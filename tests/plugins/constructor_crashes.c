/* A plugin that crashes in a static constructor, before the host can call anything: only a probe
 * in a child process survives loading it. */
#include <signal.h>

#include "c_plugin.h"

__attribute__((constructor)) static void CrashOnLoad(void) { raise(SIGSEGV); }

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  DescribeTestPlugin(out, "constructor_crashes", MXP_ABI_MAJOR, MXP_ABI_MINOR, 0, 0,
                     &RegisterNothing);
  return 0;
}
