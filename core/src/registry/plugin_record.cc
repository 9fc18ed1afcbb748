#include "mxplug/plugin_record.h"

#include <nlohmann/json.hpp>

namespace mxplug {

void to_json(nlohmann::json& j, const PluginRecord& r) {
  j = nlohmann::json{{"path", r.path},
                     {"source", r.source},
                     {"state", r.loaded() ? "loaded" : "refused"},
                     {"reason", r.reason},
                     {"name", r.name},
                     {"version", r.version},
                     {"vendor", r.vendor},
                     {"min_host_version", r.min_host_version},
                     {"build_info", r.build_info},
                     {"abi",
                      {{"major", r.abi_major},
                       {"minor_built", r.abi_minor_built},
                       {"minor_min", r.abi_minor_min}}},
                     {"ops", r.ops},
                     {"kernels", r.kernels},
                     {"devices", r.devices},
                     {"comms", r.comms},
                     {"warnings", r.warnings}};
}

void from_json(const nlohmann::json& j, PluginRecord& r) {
  r.path = j.value("path", "");
  r.source = j.value("source", "");
  r.state = j.value("state", "refused") == "loaded" ? PluginState::kLoaded : PluginState::kRefused;
  r.reason = j.value("reason", "");
  r.name = j.value("name", "");
  r.version = j.value("version", "");
  r.vendor = j.value("vendor", "");
  r.min_host_version = j.value("min_host_version", "");
  r.build_info = j.value("build_info", "");
  if (j.contains("abi")) {
    const auto& a = j.at("abi");
    r.abi_major = a.value("major", -1);
    r.abi_minor_built = a.value("minor_built", -1);
    r.abi_minor_min = a.value("minor_min", -1);
  }
  r.ops = j.value("ops", std::vector<std::string>{});
  r.kernels = j.value("kernels", std::vector<std::string>{});
  r.devices = j.value("devices", std::vector<std::string>{});
  r.comms = j.value("comms", std::vector<std::string>{});
  r.warnings = j.value("warnings", std::vector<std::string>{});
}

}  // namespace mxplug
