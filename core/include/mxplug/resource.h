/*!
 * \file mxplug/resource.h
 * \brief Per-device resources that ops request (the seeds' ResourceRequest): temp space and the
 * random stream. Each is guarded by an engine variable, so ops that use one are ordered by the
 * engine like any other writer, and seeding is ordered with the sampling already pushed.
 */
#ifndef MXPLUG_RESOURCE_H_
#define MXPLUG_RESOURCE_H_

#include <cstdint>

#include "mxplug/abi/op.h"
#include "mxplug/engine.h"
#include "mxplug/sdk/context.hpp"

namespace mxplug {

/*! \brief A resource as a kernel receives it, and the variable that orders its users. */
struct ResourceHandle {
  const MXPResource* resource = nullptr;
  VarHandle var = nullptr;
};

class Resources {
 public:
  /*! \brief The seed the random streams start from until Seed is called (MXNet's default too). */
  static constexpr uint64_t kDefaultSeed = 0;

  /*! \brief One of the device's temp-space blocks (a few per device, handed out in turn). */
  static ResourceHandle TempSpace(Context ctx);
  /*! \brief The device's random stream. */
  static ResourceHandle Random(Context ctx);
  /*! \brief Reseeds every device's stream, ordered after the sampling already pushed. */
  static void Seed(uint64_t seed);
  /*! \brief Reseeds one device's stream. */
  static void Seed(uint64_t seed, Context ctx);
};

}  // namespace mxplug

#endif  // MXPLUG_RESOURCE_H_
