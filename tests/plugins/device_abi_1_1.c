/* A device backend as a plugin built against ABI 1.1 registers it: MXPDeviceDef ends at
   `synchronize`, and what lies after it in the plugin's memory is not the host's to read (filled
   here with a pattern that would crash or show if read). Host memory under kDLMetal, device name
   "legacy", one device; streams and events are tokens, since its work is done on return. */
#include <stdlib.h>
#include <string.h>

#include "c_plugin.h"

static const MXPHostApi* g_host;
static int g_token;

static MXPStatus* Count(void* u, int32_t* count, const char** reason) {
  (void)u;
  *count = 1;
  *reason = 0;
  return 0;
}
static MXPStatus* Describe(void* u, int32_t id, const char** text) {
  (void)u, (void)id;
  *text = "a device whose plugin predates ABI 1.2";
  return 0;
}
/* Its one device is 0; any other id is refused, as the backend suite requires. */
static MXPStatus* CheckId(int32_t id) {
  return id == 0 ? 0 : g_host->status_new(kMXPInvalidArgument, "legacy: there is only device 0");
}
static MXPStatus* Allocate(void* u, int32_t id, size_t bytes, size_t align, void** ptr) {
  (void)u;
  if (id != 0) return CheckId(id);
  *ptr = aligned_alloc(align, bytes ? (bytes + align - 1) / align * align : align);
  return *ptr ? 0 : g_host->status_new(kMXPResourceExhausted, "legacy: out of memory");
}
static void Free(void* u, int32_t id, void* ptr) {
  (void)u, (void)id;
  free(ptr);
}
static MXPStatus* Copy(void* u, DLDevice dd, void* dst, DLDevice sd, const void* src, size_t n,
                       void* stream) {
  (void)u, (void)dd, (void)sd, (void)stream;
  if (n) memmove(dst, src, n);
  return 0;
}
static MXPStatus* NewToken(void* u, int32_t id, void** handle) {
  (void)u;
  if (id != 0) return CheckId(id);
  *handle = &g_token;
  return 0;
}
static void DropToken(void* u, int32_t id, void* handle) { (void)u, (void)id, (void)handle; }
static MXPStatus* OnToken(void* u, int32_t id, void* handle) {
  (void)u, (void)id, (void)handle;
  return 0;
}
static MXPStatus* OnTwoTokens(void* u, int32_t id, void* a, void* b) {
  (void)u, (void)id, (void)a, (void)b;
  return 0;
}
static MXPStatus* Synchronize(void* u, int32_t id) {
  (void)u, (void)id;
  return 0;
}

/* The 1.1 table followed by bytes that a host reading past struct_size would take for pointers. */
static struct {
  MXPDeviceDef def;
  unsigned char beyond[256];
} g_table;

static MXPStatus* RegisterAll(const MXPHostApi* host, MXPRegistrar* registrar) {
  memset(&g_table, 0xAB, sizeof g_table);
  g_table.def.struct_size = MXP_STRUCT_SIZE(MXPDeviceDef, synchronize);
  g_table.def.ext = 0;
  g_table.def.name = "legacy";
  g_table.def.device_type = kDLMetal;
  g_table.def.user = 0;
  g_table.def.device_count = &Count;
  g_table.def.describe = &Describe;
  g_table.def.allocate = &Allocate;
  g_table.def.free = &Free;
  g_table.def.copy = &Copy;
  g_table.def.stream_create = &NewToken;
  g_table.def.stream_destroy = &DropToken;
  g_table.def.stream_synchronize = &OnToken;
  g_table.def.event_create = &NewToken;
  g_table.def.event_destroy = &DropToken;
  g_table.def.event_record = &OnTwoTokens;
  g_table.def.stream_wait_event = &OnTwoTokens;
  g_table.def.event_synchronize = &OnToken;
  g_table.def.synchronize = &Synchronize;
  return host->register_device(registrar, &g_table.def);
}

MXP_EXPORT MXPStatus* mxplug_init(const MXPHostApi* host, MXPPluginApi* out) {
  g_host = host;
  DescribeTestPlugin(out, "device_abi_1_1", MXP_ABI_MAJOR, 1, 0, 0, &RegisterAll);
  return 0;
}
