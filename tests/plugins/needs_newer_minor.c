/* A plugin that needs a host ABI minor this host does not have. */
#include "mxplug/plugin_abi.h"

static MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  (void)host, (void)registrar;
  return 0;
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  out->struct_size = MXP_STRUCT_SIZE(MXPPluginApi, register_all);
  out->abi_major = MXP_ABI_MAJOR;
  out->abi_minor_built = MXP_ABI_MINOR + 7;
  out->abi_minor_min = MXP_ABI_MINOR + 7;
  out->name = "needs_newer_minor";
  out->version = "1.0.0";
  out->vendor = "tests";
  out->register_all = &RegisterAll;
  return 0;
}
