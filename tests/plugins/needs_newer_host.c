/* A plugin that needs a newer host release than this one. */
#include "mxplug/plugin_abi.h"

static MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  (void)host, (void)registrar;
  return 0;
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  out->struct_size = MXP_STRUCT_SIZE(MXPPluginApi, register_all);
  out->abi_major = MXP_ABI_MAJOR;
  out->abi_minor_built = MXP_ABI_MINOR;
  out->abi_minor_min = 0;
  out->name = "needs_newer_host";
  out->version = "1.0.0";
  out->vendor = "tests";
  out->min_host_version = "99.0.0";
  out->register_all = &RegisterAll;
  return 0;
}
