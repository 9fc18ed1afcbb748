// ABI guards: the layout of every boundary struct and the values of every frozen enum are pinned
// here (LP64). A change that breaks one of these is an ABI break: it needs a major version, or it
// must be redone as an appended member. See plugin_api/CHANGELOG.md.
#include <gtest/gtest.h>

#include <cstddef>

#include "mxplug/plugin_abi.h"

extern "C" size_t mxplug_c99_check_plugin_api_size(void);

static_assert(sizeof(void*) == 8, "layouts below are pinned for LP64");

static_assert(offsetof(MXPExtension, struct_size) == 0);
static_assert(offsetof(MXPExtension, type) == 8);
static_assert(offsetof(MXPExtension, next) == 16);
static_assert(sizeof(MXPExtension) == 24);

// Frozen prefix of the handshake structs: readable across major versions.
static_assert(offsetof(MXPHostApi, struct_size) == 0);
static_assert(offsetof(MXPHostApi, ext) == 8);
static_assert(offsetof(MXPHostApi, abi_major) == 16);
static_assert(offsetof(MXPHostApi, abi_minor) == 20);
static_assert(offsetof(MXPHostApi, host_version) == 24);
static_assert(offsetof(MXPHostApi, status_new) == 32);
static_assert(offsetof(MXPHostApi, temp_space) == 120);
static_assert(offsetof(MXPHostApi, random_philox) == 128);  // 1.1
static_assert(offsetof(MXPHostApi, visit_kernels) == 136);  // 1.2
static_assert(offsetof(MXPHostApi, register_comm) == 144);  // 1.3
static_assert(sizeof(MXPHostApi) == 152);

// Communication backends (1.3).
static_assert(offsetof(MXPCommDef, name) == 16);
static_assert(offsetof(MXPCommDef, memory_types) == 24);
static_assert(offsetof(MXPCommDef, num_memory_types) == 32);
static_assert(offsetof(MXPCommDef, user) == 40);
static_assert(offsetof(MXPCommDef, available) == 48);
static_assert(offsetof(MXPCommDef, init) == 56);
static_assert(offsetof(MXPCommDef, split) == 80);
static_assert(offsetof(MXPCommDef, allreduce) == 96);
static_assert(offsetof(MXPCommDef, send) == 120);
static_assert(offsetof(MXPCommDef, test) == 144);
static_assert(offsetof(MXPCommDef, abort) == 160);
static_assert(offsetof(MXPCommDef, finalize) == 168);
static_assert(sizeof(MXPCommDef) == 176);
static_assert(offsetof(MXPCommMessageInfo, source) == 16);
static_assert(offsetof(MXPCommMessageInfo, tag) == 20);
static_assert(offsetof(MXPCommMessageInfo, bytes) == 24);
static_assert(sizeof(MXPCommMessageInfo) == 32);
static_assert(offsetof(MXPCommBootstrap, rank) == 16);
static_assert(offsetof(MXPCommBootstrap, size) == 20);
static_assert(offsetof(MXPCommBootstrap, user) == 24);
static_assert(offsetof(MXPCommBootstrap, broadcast) == 32);
static_assert(offsetof(MXPCommBootstrap, allgather) == 40);
static_assert(sizeof(MXPCommBootstrap) == 48);
static_assert(kMXPCommSum == 0 && kMXPCommMax == 1 && kMXPCommMin == 2);
static_assert(MXP_COMM_ANY_SOURCE == -1 && MXP_COMM_ANY_TAG == -1);

static_assert(offsetof(MXPPluginApi, abi_major) == 16);
static_assert(offsetof(MXPPluginApi, abi_minor_built) == 20);
static_assert(offsetof(MXPPluginApi, abi_minor_min) == 24);
static_assert(offsetof(MXPPluginApi, name) == 32);
static_assert(offsetof(MXPPluginApi, version) == 40);
static_assert(offsetof(MXPPluginApi, vendor) == 48);
static_assert(offsetof(MXPPluginApi, min_host_version) == 56);
static_assert(offsetof(MXPPluginApi, build_info) == 64);
static_assert(offsetof(MXPPluginApi, register_all) == 72);
static_assert(sizeof(MXPPluginApi) == 80);

static_assert(offsetof(MXPParamDef, name) == 16);
static_assert(offsetof(MXPParamDef, type) == 24);
static_assert(offsetof(MXPParamDef, lower_bound) == 56);
static_assert(offsetof(MXPParamDef, doc) == 88);
static_assert(sizeof(MXPParamDef) == 96);

static_assert(offsetof(MXPOpDef, name) == 16);
static_assert(offsetof(MXPOpDef, user) == 64);
static_assert(offsetof(MXPOpDef, create) == 72);
static_assert(offsetof(MXPOpDef, resources) == 128);
static_assert(offsetof(MXPOpDef, num_visible_outputs) == 136);  // 1.1
static_assert(sizeof(MXPOpDef) == 144);

static_assert(offsetof(MXPKernelArgs, is_train) == 16);
static_assert(offsetof(MXPKernelArgs, device) == 20);
static_assert(offsetof(MXPKernelArgs, stream) == 32);
static_assert(offsetof(MXPKernelArgs, in_data) == 56);
static_assert(offsetof(MXPKernelArgs, req) == 136);
static_assert(offsetof(MXPKernelArgs, on_complete) == 152);  // 1.5
static_assert(offsetof(MXPKernelArgs, on_complete_token) == 160);
static_assert(sizeof(MXPKernelArgs) == 168);

static_assert(offsetof(MXPKernelDef, op_name) == 16);
static_assert(offsetof(MXPKernelDef, device_type) == 24);
static_assert(offsetof(MXPKernelDef, backward) == 64);
static_assert(offsetof(MXPKernelDef, asynchronous) == 72);  // 1.5
static_assert(sizeof(MXPKernelDef) == 80);

static_assert(offsetof(MXPDeviceDef, device_type) == 24);
static_assert(offsetof(MXPDeviceDef, device_count) == 40);
static_assert(offsetof(MXPDeviceDef, synchronize) == 144);
static_assert(offsetof(MXPDeviceDef, memset) == 152);  // 1.2
static_assert(offsetof(MXPDeviceDef, memory_info) == 160);
static_assert(offsetof(MXPDeviceDef, host_allocate) == 168);
static_assert(offsetof(MXPDeviceDef, host_free) == 176);
static_assert(offsetof(MXPDeviceDef, event_query) == 184);
static_assert(offsetof(MXPDeviceDef, attributes) == 192);
static_assert(offsetof(MXPDeviceDef, thread_start) == 200);
static_assert(offsetof(MXPDeviceDef, collective_reduce) == 208);  // 1.4
static_assert(offsetof(MXPDeviceDef, collective_broadcast) == 216);
static_assert(sizeof(MXPDeviceDef) == 224);

static_assert(offsetof(MXPDeviceAttributes, compute_capability_major) == 16);  // 1.2
static_assert(offsetof(MXPDeviceAttributes, max_threads_per_block) == 32);
static_assert(offsetof(MXPDeviceAttributes, total_memory) == 40);
static_assert(offsetof(MXPDeviceAttributes, shared_memory_per_block) == 48);
static_assert(sizeof(MXPDeviceAttributes) == 56);

static_assert(sizeof(MXPInplacePair) == 16);
static_assert(sizeof(MXPResource) == 32);

// Frozen enums: MXNet's dtype flags, status codes, request types.
static_assert(kMXPFloat32 == 0 && kMXPFloat64 == 1 && kMXPFloat16 == 2 && kMXPUint8 == 3 &&
              kMXPInt32 == 4 && kMXPInt8 == 5 && kMXPInt64 == 6 && kMXPBool == 7 &&
              kMXPBfloat16 == 12);
static_assert(kMXPOk == 0 && kMXPInvalidArgument == 3 && kMXPNotFound == 5 &&
              kMXPAlreadyExists == 6 && kMXPUnimplemented == 12 && kMXPInternal == 13 &&
              kMXPDeadlineExceeded == 4);
static_assert(kMXPNullOp == 0 && kMXPWriteTo == 1 && kMXPWriteInplace == 2 && kMXPAddTo == 3);
static_assert(kMXPResourceTempSpace == 1 && kMXPResourceRandom == 2);
static_assert(kMXPParamInt == 0 && kMXPParamShape == 5);
static_assert(MXP_ABI_MAJOR == 1);

TEST(AbiLayout, StructSizeMacroMatchesCompiledC) {
  // The C99 translation unit and this C++ one agree on the handshake struct.
  EXPECT_EQ(mxplug_c99_check_plugin_api_size(), sizeof(MXPPluginApi));
  EXPECT_EQ(MXP_STRUCT_SIZE(MXPOpDef, num_visible_outputs), sizeof(MXPOpDef));
  EXPECT_EQ(MXP_STRUCT_SIZE(MXPDeviceDef, collective_broadcast), sizeof(MXPDeviceDef));
  EXPECT_EQ(MXP_STRUCT_SIZE(MXPDeviceAttributes, shared_memory_per_block),
            sizeof(MXPDeviceAttributes));
  EXPECT_EQ(MXP_STRUCT_SIZE(MXPHostApi, register_comm), sizeof(MXPHostApi));
  EXPECT_EQ(MXP_STRUCT_SIZE(MXPCommDef, finalize), sizeof(MXPCommDef));
}

TEST(AbiLayout, HasFieldReadsOnlyWhatTheWriterWrote) {
  MXPPluginApi info{};
  info.struct_size = MXP_STRUCT_SIZE(MXPPluginApi, vendor);  // a writer that stopped at vendor
  EXPECT_TRUE(MXP_HAS_FIELD(&info, MXPPluginApi, vendor));
  EXPECT_FALSE(MXP_HAS_FIELD(&info, MXPPluginApi, min_host_version));
  EXPECT_FALSE(MXP_HAS_FIELD(&info, MXPPluginApi, register_all));
}
