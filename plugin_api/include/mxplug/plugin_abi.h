/*!
 * \file mxplug/plugin_abi.h
 * \brief The mxplug plugin ABI (C99), all areas. A plugin needs only this header (or the C++ SDK,
 * mxplug/plugin.hpp, built on it) and dlpack.
 */
#ifndef MXPLUG_PLUGIN_ABI_H_
#define MXPLUG_PLUGIN_ABI_H_

#include "mxplug/abi/base.h"
#include "mxplug/abi/comm.h"
#include "mxplug/abi/device.h"
#include "mxplug/abi/host.h"
#include "mxplug/abi/op.h"
#include "mxplug/abi/plugin.h"
#include "mxplug/abi/status.h"

#endif  // MXPLUG_PLUGIN_ABI_H_
