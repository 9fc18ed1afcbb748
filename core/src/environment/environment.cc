#include "environment/environment.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "mxplug/error.h"

namespace mxplug {

int64_t EnvInteger(const char* name, int64_t fallback, int64_t min, int64_t max) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max)
    throw Error(std::string(name) + "=" + text + ": expected an integer from " +
                    std::to_string(min) + " to " + std::to_string(max),
                kMXPInvalidArgument);
  return value;
}

}  // namespace mxplug
