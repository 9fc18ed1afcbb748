/* A plugin that registers an op without infer_shape: the host rejects it, and with it the plugin. */
#include <stddef.h>
#include <string.h>

#include "c_plugin.h"

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
  DescribeTestPlugin(out, "incomplete_op", MXP_ABI_MAJOR, MXP_ABI_MINOR, 0, 0, &RegisterAll);
  return 0;
}
