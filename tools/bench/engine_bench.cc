// Engine throughput against StarPU, same workloads and worker count, in one run:
//   (a) independent: N empty tasks, each writing its own variable
//   (b) chain: N empty tasks all writing one variable (per-task latency)
//   (c) fanout: R rounds of one writer then 64 readers of its variable
// plus a serial floor (a loop calling the same empty function). Prints a table and writes
// rows {metric, ours, peer, peer_name, ratio, better, unit} as JSON (see DESIGN.md).
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mxplug/engine.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Workload {
  const char* metric;
  const char* what;
  int tasks;
};

std::string PeerName() {
  return "StarPU " + std::to_string(STARPU_MAJOR_VERSION) + "." + std::to_string(STARPU_MINOR_VERSION) +
         "." + std::to_string(STARPU_RELEASE_VERSION);
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// ---- ours ----
void EmptySync(mxplug::RunContext) {}

double RunOurs(mxplug::Engine* engine, const std::string& metric, int n, int rounds) {
  using namespace mxplug;
  const Context cpu = Context::CPU();
  std::vector<VarHandle> vars;
  double seconds = 0;
  if (metric == "engine.independent") {
    for (int i = 0; i < n; ++i) vars.push_back(engine->NewVar());
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) engine->PushSync(EmptySync, cpu, {}, {vars[i]});
    engine->WaitForAll();
    seconds = Seconds(t0, Clock::now());
  } else if (metric == "engine.chain") {
    vars.push_back(engine->NewVar());
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) engine->PushSync(EmptySync, cpu, {}, {vars[0]});
    engine->WaitForAll();
    seconds = Seconds(t0, Clock::now());
  } else {
    vars.push_back(engine->NewVar());
    auto t0 = Clock::now();
    for (int r = 0; r < rounds; ++r) {
      engine->PushSync(EmptySync, cpu, {}, {vars[0]});
      for (int k = 0; k < 64; ++k) engine->PushSync(EmptySync, cpu, {vars[0]}, {});
    }
    engine->WaitForAll();
    seconds = Seconds(t0, Clock::now());
  }
  for (auto v : vars) engine->PushDelete(nullptr, cpu, v);
  engine->WaitForAll();
  return seconds;
}

// ---- StarPU ----
void EmptyKernel(void**, void*) {}

starpu_codelet Codelet(starpu_data_access_mode mode, const char* name) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = EmptyKernel;
  cl.nbuffers = 1;
  cl.modes[0] = mode;
  cl.name = name;
  return cl;
}

double RunStarPU(const std::string& metric, int n, int rounds) {
  static starpu_codelet write_cl = Codelet(STARPU_W, "write");
  static starpu_codelet read_cl = Codelet(STARPU_R, "read");
  int handles = metric == "engine.independent" ? n : 1;
  std::vector<int> data(handles, 0);
  std::vector<starpu_data_handle_t> h(handles);
  for (int i = 0; i < handles; ++i)
    starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&data[i]), sizeof(int));
  auto t0 = Clock::now();
  if (metric == "engine.independent") {
    for (int i = 0; i < n; ++i) starpu_task_insert(&write_cl, STARPU_W, h[i], 0);
  } else if (metric == "engine.chain") {
    for (int i = 0; i < n; ++i) starpu_task_insert(&write_cl, STARPU_W, h[0], 0);
  } else {
    for (int r = 0; r < rounds; ++r) {
      starpu_task_insert(&write_cl, STARPU_W, h[0], 0);
      for (int k = 0; k < 64; ++k) starpu_task_insert(&read_cl, STARPU_R, h[0], 0);
    }
  }
  starpu_task_wait_for_all();
  double seconds = Seconds(t0, Clock::now());
  for (auto& handle : h) starpu_data_unregister(handle);
  return seconds;
}

// ---- serial floor ----
double RunSerial(int tasks) {
  std::function<void(mxplug::RunContext)> fn = EmptySync;
  mxplug::RunContext rctx;
  auto t0 = Clock::now();
  for (int i = 0; i < tasks; ++i) fn(rctx);
  return Seconds(t0, Clock::now());
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int workers = 2, repeats = 3;
  std::string json_out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a.rfind("--workers=", 0) == 0) workers = std::atoi(a.c_str() + 10);
    else if (a.rfind("--json=", 0) == 0) json_out = a.substr(7);
  }
  if (quick) repeats = 1;
  const int scale = quick ? 4 : 1;
  const int independent = 200000 / scale, chain = 100000 / scale, rounds = 2000 / scale;
  std::vector<Workload> workloads{{"engine.independent", "independent tasks, own variable each", independent},
                                  {"engine.chain", "chain of writes to one variable", chain},
                                  {"engine.fanout", "1 writer then 64 readers, per round", rounds * 65}};

  mxplug::EngineOptions options;
  options.cpu_workers = workers;
  auto engine = mxplug::Engine::Create(mxplug::EngineType::kThreaded, options);

  setenv("STARPU_SILENT", "1", 0);
  setenv("STARPU_NCUDA", "0", 0);
  setenv("STARPU_NOPENCL", "0", 0);
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = workers;
  conf.ncuda = 0;
  conf.nopencl = 0;
  if (starpu_init(&conf) != 0) {
    std::fprintf(stderr, "engine_bench: starpu_init failed\n");
    return 1;
  }

  nlohmann::json rows = nlohmann::json::array();
  std::printf("%d workers, best of %d runs\n", workers, repeats);
  std::printf("%-20s %-40s %9s %14s %14s %14s %8s\n", "metric", "workload", "tasks", "ours (task/s)",
              "StarPU", "serial floor", "ratio");
  for (const Workload& w : workloads) {
    double ours = 1e30, peer = 1e30, serial = 1e30;
    for (int r = 0; r < repeats; ++r) {
      ours = std::min(ours, RunOurs(engine.get(), w.metric, w.metric == std::string("engine.fanout") ? rounds : w.tasks, rounds));
      peer = std::min(peer, RunStarPU(w.metric, w.tasks, rounds));
      serial = std::min(serial, RunSerial(w.tasks));
    }
    double ours_rate = w.tasks / ours, peer_rate = w.tasks / peer, serial_rate = w.tasks / serial;
    std::printf("%-20s %-40s %9d %14.0f %14.0f %14.0f %7.2fx\n", w.metric, w.what, w.tasks, ours_rate,
                peer_rate, serial_rate, ours_rate / peer_rate);
    rows.push_back({{"metric", w.metric}, {"ours", ours_rate}, {"peer", peer_rate},
                    {"peer_name", PeerName()}, {"ratio", ours_rate / peer_rate},
                    {"better", "higher"}, {"unit", "tasks/s"}, {"serial_floor", serial_rate},
                    {"workers", workers}, {"tasks", w.tasks},
                    {"ours_us_per_task", 1e6 / ours_rate}, {"peer_us_per_task", 1e6 / peer_rate}});
  }
  starpu_shutdown();
  if (!json_out.empty()) {
    std::ofstream(json_out) << rows.dump(2) << "\n";
    std::printf("wrote %s\n", json_out.c_str());
  }
  return 0;
}
