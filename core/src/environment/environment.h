// Settings read from environment variables (MXNet's MXNET_* ones and mxplug's own).
#ifndef MXPLUG_ENVIRONMENT_ENVIRONMENT_H_
#define MXPLUG_ENVIRONMENT_ENVIRONMENT_H_

#include <cstdint>

namespace mxplug {

/*!
 * \brief The integer in environment variable `name`, or `fallback` when it is unset or empty.
 * \throws Error (kMXPInvalidArgument) naming the variable, its value and the range expected when
 * the value is not a whole integer in [min, max]: a setting mistyped is said, not ignored.
 */
int64_t EnvInteger(const char* name, int64_t fallback, int64_t min, int64_t max);

}  // namespace mxplug

#endif  // MXPLUG_ENVIRONMENT_ENVIRONMENT_H_
