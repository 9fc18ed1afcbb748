/*!
 * \file mxplug/abi/base.h
 * \brief Versions, struct-size rules, extensions and frozen enums of the mxplug plugin ABI.
 *
 * The ABI is C99. Every struct that crosses the boundary starts with `size_t struct_size`
 * followed by `MXPExtension* ext`, and grows only by appending members. A reader checks
 * `MXP_HAS_FIELD(ptr, Type, field)` before reading a member added after 1.0.
 * See plugin_api/CHANGELOG.md for what each minor version added.
 */
#ifndef MXPLUG_ABI_BASE_H_
#define MXPLUG_ABI_BASE_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief ABI version. A host accepts a plugin when the majors are equal and the host's minor
 * is at least the plugin's `abi_minor_min`. A minor bump only appends (struct members, table
 * functions, enum values); anything else is a major bump.
 * \since 1.0
 */
#define MXP_ABI_MAJOR 1
#define MXP_ABI_MINOR 5

/*! \brief Size of a struct up to and including `last_field`: what a writer stores in struct_size.
 */
#define MXP_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type*)0)->last_field))

/*! \brief True when a struct written by the other side is large enough to contain `field`. */
#define MXP_HAS_FIELD(ptr, type, field) ((ptr)->struct_size >= MXP_STRUCT_SIZE(type, field))

/*! \brief Symbol visibility for the one function a plugin exports. */
#if defined(_WIN32)
#define MXP_EXPORT __declspec(dllexport)
#else
#define MXP_EXPORT __attribute__((visibility("default")))
#endif

/*!
 * \brief Optional features travel as a chain of typed extensions; a reader skips types it
 * does not know. Values of `type` are listed in MXPExtensionType.
 * \since 1.0
 */
typedef struct MXPExtension {
  size_t struct_size;
  int32_t type;
  struct MXPExtension* next;
} MXPExtension;

/*! \brief Extension types. Frozen: values are only appended. \since 1.0 */
typedef enum MXPExtensionType {
  kMXPExtensionNone = 0,
} MXPExtensionType;

/*!
 * \brief Element types, numbered as MXNet's `mshadow` type flags so that `.params` files and
 * Python dtype codes map one to one. Frozen: values are only appended; an unknown value is an
 * error, never undefined behaviour.
 * \since 1.0
 */
typedef enum MXPDType {
  kMXPUnknownDType = -1,
  kMXPFloat32 = 0,
  kMXPFloat64 = 1,
  kMXPFloat16 = 2,
  kMXPUint8 = 3,
  kMXPInt32 = 4,
  kMXPInt8 = 5,
  kMXPInt64 = 6,
  kMXPBool = 7,
  kMXPInt16 = 8,
  kMXPUint16 = 9,
  kMXPUint32 = 10,
  kMXPUint64 = 11,
  kMXPBfloat16 = 12,
} MXPDType;

/*! \brief Log levels for MXPHostApi::log. Frozen. \since 1.0 */
typedef enum MXPLogLevel {
  kMXPLogDebug = 0,
  kMXPLogInfo = 1,
  kMXPLogWarning = 2,
  kMXPLogError = 3,
} MXPLogLevel;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_BASE_H_
