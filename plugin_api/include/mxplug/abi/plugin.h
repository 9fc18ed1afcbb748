/*!
 * \file mxplug/abi/plugin.h
 * \brief The handshake: the one symbol a plugin exports.
 *
 * The host calls `mxplug_init(host, out)`. The plugin fills `out` (its metadata, the ABI it was
 * built against, and register_all) and registers nothing yet. The host then checks the versions
 * and, only if they are compatible, calls `out->register_all`, which registers through the host
 * table. The host validates everything registered and commits it all or nothing.
 *
 * `out->struct_size` comes from the host as the capacity it allocated; the plugin writes only the
 * members that fit and stores the size it wrote. The members up to and including `vendor` are
 * frozen across major versions.
 */
#ifndef MXPLUG_ABI_PLUGIN_H_
#define MXPLUG_ABI_PLUGIN_H_

#include "mxplug/abi/base.h"
#include "mxplug/abi/host.h"
#include "mxplug/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief What a plugin tells the host about itself. \since 1.0 */
typedef struct MXPPluginApi {
  size_t struct_size;
  MXPExtension* ext;
  int32_t abi_major;       /*!< MXP_ABI_MAJOR the plugin was built with */
  int32_t abi_minor_built; /*!< MXP_ABI_MINOR the plugin was built with */
  int32_t abi_minor_min;   /*!< the oldest host minor the plugin works with */
  const char* name;        /*!< short id, "nn" */
  const char* version;     /*!< the plugin's own release, "1.2.0" */
  const char* vendor;
  const char* min_host_version; /*!< the oldest host release it needs ("0.1.0"), or NULL */
  const char* build_info;       /*!< compiler, toolkits; free text */
  /*! \brief Registers the plugin's ops, kernels and devices. Called once, after the handshake. */
  MXPStatus* (*register_all)(const MXPHostApi* host, MXPRegistrar* registrar);
} MXPPluginApi;

/*! \brief The exported entry point's type and name. \since 1.0 */
typedef MXPStatus* (*MXPInitFn)(const MXPHostApi* host, MXPPluginApi* out);
#define MXP_INIT_SYMBOL "mxplug_init"

/*!
 * \brief The second, optional export of an adapter plugin: one that lets the host load, as if
 * they were plugins, libraries written against another framework's extension interface (MXNet
 * 1.x's lib_api.h custom-op libraries, plugins/mxnet_lib).
 *
 * For a file that exports no mxplug_init, the host calls `mxplug_adapt` of each loaded adapter,
 * in load order, until one sets `*recognized` to 1. An adapter that does not recognise the file
 * leaves it 0, registers nothing and returns NULL. One that does describes the library in `out`
 * as mxplug_init describes a plugin (name, version, vendor, build_info; register_all unused),
 * registers what the library holds through `registrar` as register_all would, and returns NULL,
 * or a status that refuses the library; then the host commits nothing. It runs on the loader
 * thread under the registry lock, like register_all, and must keep what it registered valid for
 * the life of the process (the adapted library is never unloaded either).
 * \since 1.5
 */
typedef MXPStatus* (*MXPAdaptFn)(const MXPHostApi* host, const char* path, MXPRegistrar* registrar,
                                 MXPPluginApi* out, int32_t* recognized);
#define MXP_ADAPT_SYMBOL "mxplug_adapt"

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_PLUGIN_H_
