/* A plugin built for a future ABI major: the host must refuse it before registering anything. */
#include "mxplug/plugin_abi.h"

static MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  (void)host, (void)registrar;
  return 0;
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  out->struct_size = MXP_STRUCT_SIZE(MXPPluginApi, register_all);
  out->abi_major = 99;
  out->abi_minor_built = 3;
  out->abi_minor_min = 0;
  out->name = "bad_abi";
  out->version = "1.0.0";
  out->vendor = "tests";
  out->register_all = &RegisterAll;
  return 0;
}
