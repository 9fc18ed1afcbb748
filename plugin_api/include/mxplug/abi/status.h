/*!
 * \file mxplug/abi/status.h
 * \brief Errors across the boundary: every fallible call returns `MXPStatus*`, NULL meaning OK.
 *
 * Ownership rule: a status is always created by the host (MXPHostApi::status_new), so it lives
 * on the host's heap, and whoever receives a non-NULL status owns it and frees it with
 * MXPHostApi::status_free. A plugin returning a status to the host hands ownership over.
 * No C++ exception ever crosses the boundary.
 */
#ifndef MXPLUG_ABI_STATUS_H_
#define MXPLUG_ABI_STATUS_H_

#include "mxplug/abi/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief Opaque error object owned by the host's heap. \since 1.0 */
typedef struct MXPStatus MXPStatus;

/*! \brief Status codes, after absl/PJRT. Frozen: values are only appended. \since 1.0 */
typedef enum MXPStatusCode {
  kMXPOk = 0,
  kMXPCancelled = 1,
  kMXPUnknown = 2,
  kMXPInvalidArgument = 3,
  kMXPDeadlineExceeded = 4, /*!< \since 1.3: a peer did not answer in time (abi/comm.h) */
  kMXPNotFound = 5,
  kMXPAlreadyExists = 6,
  kMXPResourceExhausted = 8,
  kMXPFailedPrecondition = 9,
  kMXPOutOfRange = 11,
  kMXPUnimplemented = 12,
  kMXPInternal = 13,
  kMXPUnavailable = 14,
} MXPStatusCode;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_STATUS_H_
