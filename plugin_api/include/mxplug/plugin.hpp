/*!
 * \file mxplug/plugin.hpp
 * \brief The C++ SDK for plugin authors (header-only, C++17): everything a plugin includes.
 * It wraps the C ABI in mxplug/plugin_abi.h; authors never fill the C structs by hand.
 */
#ifndef MXPLUG_PLUGIN_HPP_
#define MXPLUG_PLUGIN_HPP_

#include "mxplug/plugin_abi.h"
#include "mxplug/sdk/comm_backend.hpp"
#include "mxplug/sdk/context.hpp"
#include "mxplug/sdk/device_backend.hpp"
#include "mxplug/sdk/dtype.hpp"
#include "mxplug/sdk/operator.hpp"
#include "mxplug/sdk/operator_property.hpp"
#include "mxplug/sdk/parameter.hpp"
#include "mxplug/sdk/random.hpp"
#include "mxplug/sdk/registration.hpp"
#include "mxplug/sdk/tshape.hpp"

#endif  // MXPLUG_PLUGIN_HPP_
