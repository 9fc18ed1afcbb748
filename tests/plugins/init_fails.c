/* A plugin whose registration reports an error status. */
#include "mxplug/plugin_abi.h"

static MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  (void)registrar;
  return host->status_new(kMXPUnavailable, "device driver libfake.so.1 is missing");
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  out->struct_size = MXP_STRUCT_SIZE(MXPPluginApi, register_all);
  out->abi_major = MXP_ABI_MAJOR;
  out->abi_minor_built = MXP_ABI_MINOR;
  out->abi_minor_min = 0;
  out->name = "init_fails";
  out->version = "1.0.0";
  out->vendor = "tests";
  out->register_all = &RegisterAll;
  return 0;
}
