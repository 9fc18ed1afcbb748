/* A plugin that registers a good-looking device and then an op without infer_shape: the host
   rejects the op, and the device must not be registered either (all or nothing). */
#include <stddef.h>
#include <string.h>

#include "mxplug/plugin_abi.h"

static MXPStatus* Create(void* user, const char* const* k, const char* const* v, size_t n, void** p) {
  (void)user, (void)k, (void)v, (void)n;
  *p = 0;
  return 0;
}
static void Destroy(void* user, void* p) { (void)user, (void)p; }
static MXPStatus* List(void* p, int32_t kind, size_t* count, const char* const** names) {
  (void)p, (void)kind, (void)names;
  *count = 0;
  return 0;
}

static MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  MXPOpDef op;
  memset(&op, 0, sizeof(op));
  op.struct_size = MXP_STRUCT_SIZE(MXPOpDef, resources);
  op.name = "test.Incomplete";
  op.create = &Create;
  op.destroy = &Destroy;
  op.list = &List;
  /* infer_shape left NULL on purpose */
  return host->register_op(registrar, &op);
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  (void)host;
  out->struct_size = MXP_STRUCT_SIZE(MXPPluginApi, register_all);
  out->abi_major = MXP_ABI_MAJOR;
  out->abi_minor_built = MXP_ABI_MINOR;
  out->abi_minor_min = 0;
  out->name = "incomplete_op";
  out->version = "1.0.0";
  out->vendor = "tests";
  out->register_all = &RegisterAll;
  return 0;
}
