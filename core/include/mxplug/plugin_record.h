/*!
 * \file mxplug/plugin_record.h
 * \brief What the runtime knows about one plugin file: loaded or refused and why, the versions
 * it declared, and what it registered (or would have).
 */
#ifndef MXPLUG_PLUGIN_RECORD_H_
#define MXPLUG_PLUGIN_RECORD_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace mxplug {

enum class PluginState { kLoaded, kRefused };

struct PluginRecord {
  std::string path;    // canonical path of the file
  std::string source;  // "default folder", "MXPLUG_PLUGIN_PATH", "--plugin-path", "explicit"
  PluginState state = PluginState::kRefused;
  std::string reason;  // why it was refused; empty when loaded
  // From the handshake (empty / -1 when the file never got that far).
  std::string name, version, vendor, min_host_version, build_info;
  int32_t abi_major = -1, abi_minor_built = -1, abi_minor_min = -1;
  // What it registered; for a refused plugin, what it tried to register.
  std::vector<std::string> ops, kernels, devices, comms;
  // Said of it whether loaded or not: a file or folder that every user may write.
  std::vector<std::string> warnings;

  bool loaded() const { return state == PluginState::kLoaded; }
};

void to_json(nlohmann::json& j, const PluginRecord& r);
void from_json(const nlohmann::json& j, PluginRecord& r);

}  // namespace mxplug

#endif  // MXPLUG_PLUGIN_RECORD_H_
