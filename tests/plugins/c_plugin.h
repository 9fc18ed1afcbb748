/* The handshake shared by the test plugins written in plain C: they differ only in what they
   declare about themselves and in what register_all does. */
#ifndef MXPLUG_TESTS_PLUGINS_C_PLUGIN_H_
#define MXPLUG_TESTS_PLUGINS_C_PLUGIN_H_

#include "mxplug/plugin_abi.h"

typedef MXPStatus* (*TestRegisterFn)(const MXPHostApi*, MXPRegistrar*);

static inline MXPStatus* RegisterNothing(const MXPHostApi* host, MXPRegistrar* registrar) {
  (void)host, (void)registrar;
  return 0;
}

static inline void DescribeTestPlugin(MXPPluginApi* out, const char* name, int32_t abi_major,
                                      int32_t abi_minor_built, int32_t abi_minor_min,
                                      const char* min_host_version, TestRegisterFn register_all) {
  out->struct_size = MXP_STRUCT_SIZE(MXPPluginApi, register_all);
  out->abi_major = abi_major;
  out->abi_minor_built = abi_minor_built;
  out->abi_minor_min = abi_minor_min;
  out->name = name;
  out->version = "1.0.0";
  out->vendor = "tests";
  out->min_host_version = min_host_version;
  out->register_all = register_all;
}

#endif /* MXPLUG_TESTS_PLUGINS_C_PLUGIN_H_ */
