// mxplug-probe: loads one plugin file into a fresh runtime and reports what happened as JSON.
// Run by the core in a child process (plugin_probe.h), so a plugin that crashes in init takes
// down only this process. The report goes to --report-fd (default stdout).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mxplug/runtime.h"

int main(int argc, char** argv) {
  int report_fd = 1;
  std::string file;
  std::vector<std::string> adapters;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--report-fd=", 0) == 0)
      report_fd = std::atoi(arg.c_str() + 12);
    else if (arg.rfind("--adapter=", 0) == 0)
      adapters.push_back(arg.substr(10));
    else
      file = arg;
  }
  if (file.empty()) {
    std::cerr << "usage: mxplug-probe [--report-fd=N] [--adapter=ADAPTER_PLUGIN]... PLUGIN_FILE\n";
    return 2;
  }
  mxplug::Runtime runtime;
  // The adapter plugins the caller has, so that a library they adapt loads here as it would there.
  for (const std::string& adapter : adapters) runtime.LoadFile(adapter, "probe");
  mxplug::PluginRecord record = runtime.LoadFile(file, "probe");
  std::string report = nlohmann::json(record).dump();
  for (size_t done = 0; done < report.size();) {
    ssize_t n = write(report_fd, report.data() + done, report.size() - done);
    if (n <= 0) return 3;
    done += static_cast<size_t>(n);
  }
  return record.loaded() ? 0 : 1;
}
