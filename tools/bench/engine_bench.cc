// Engine throughput against StarPU, same workloads and worker count, in one run:
//   (a) independent: N empty tasks, each writing its own variable
//   (b) chain: N empty tasks all writing one variable (per-task latency)
//   (c) fanout: R rounds of one writer then 64 readers of its variable
// for mxplug with --workers CPU workers and with 1, and StarPU with as many workers under its
// `eager` and `lws` schedulers, in --rounds interleaved rounds. Each measurement starts its own
// engine and shuts it down after: StarPU's idle workers poll for tasks without sleeping, so an
// engine left running would take the cores from the next one measured. Prints each system's median
// (range) over the rounds, the ratio to the faster StarPU scheduler and 2 workers against 1, plus a
// serial floor (a loop calling the same empty function), and writes rows {metric, ours, peer,
// peer_name, ratio, better, unit, ...} as JSON (see DESIGN.md).
#include <starpu.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
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
  return "StarPU " + std::to_string(STARPU_MAJOR_VERSION) + "." +
         std::to_string(STARPU_MINOR_VERSION) + "." + std::to_string(STARPU_RELEASE_VERSION);
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

// One measurement on a StarPU started for it with `workers` CPU workers and scheduler `sched`.
double RunStarPU(const std::string& metric, int n, int rounds, int workers, const char* sched) {
  static starpu_codelet write_cl = Codelet(STARPU_W, "write");
  static starpu_codelet read_cl = Codelet(STARPU_R, "read");
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = workers;
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.sched_policy_name = sched;
  if (starpu_init(&conf) != 0) {
    std::fprintf(stderr, "engine_bench: starpu_init with scheduler '%s' failed\n", sched);
    std::exit(1);
  }
  int handles = metric == "engine.independent" ? n : 1;
  std::vector<int> data(handles, 0);
  std::vector<starpu_data_handle_t> h(handles);
  for (int i = 0; i < handles; ++i)
    starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, reinterpret_cast<uintptr_t>(&data[i]),
                                  sizeof(int));
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
  starpu_shutdown();
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

// A system measured: mxplug with `workers` workers, or StarPU with scheduler `sched`.
struct System {
  std::string name;
  int workers;
  const char* sched;  // null for mxplug
};

// One measurement. mxplug's engines live through the whole run, as in a program, and were
// warmed up (its idle workers sleep after ~20 us); StarPU is started for each measurement.
double Measure(const System& system, mxplug::Engine* engine, const std::string& metric, int tasks,
               int rounds) {
  if (system.sched) return RunStarPU(metric, tasks, rounds, system.workers, system.sched);
  return RunOurs(engine, metric, metric == "engine.fanout" ? rounds : tasks, rounds);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// "2,850,206 (2,700,000-2,900,000)": the median and range of rates, in tasks/s.
std::string Cell(const std::vector<double>& rates) {
  auto grouped = [](double x) {
    std::string digits = std::to_string(static_cast<long long>(x + 0.5)), out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  };
  auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
  return grouped(Median(rates)) + " (" + grouped(*lo) + "-" + grouped(*hi) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, mxplug_only = false;
  int workers = 2, rounds = 5;
  std::string json_out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a.rfind("--workers=", 0) == 0)
      workers = std::atoi(a.c_str() + 10);
    else if (a.rfind("--rounds=", 0) == 0)
      rounds = std::atoi(a.c_str() + 9);
    else if (a.rfind("--json=", 0) == 0)
      json_out = a.substr(7);
    else if (a == "--mxplug-only")
      mxplug_only = true;  // for work on the engine: no peer, no ratio
    else {
      std::fprintf(stderr,
                   "engine_bench: unknown argument '%s' (--quick, --workers=N, --rounds=N, "
                   "--json=PATH, --mxplug-only)\n",
                   a.c_str());
      return 2;
    }
  }
  if (workers < 1 || rounds < 1) {
    std::fprintf(stderr, "engine_bench: --workers and --rounds must be at least 1\n");
    return 2;
  }
  const int scale = quick ? 4 : 1;
  const int independent = 200000 / scale, chain = 100000 / scale, fan_rounds = 2000 / scale;
  std::vector<Workload> workloads{
      {"engine.independent", "each task writes its own variable", independent},
      {"engine.chain", "every task writes one variable", chain},
      {"engine.fanout", "1 writer then 64 readers, per round", fan_rounds * 65}};
  std::vector<System> systems{{"mxplug", workers, nullptr}};
  if (workers != 1) systems.push_back({"mxplug, 1 worker", 1, nullptr});
  if (!mxplug_only) {
    systems.push_back({"StarPU eager", workers, "eager"});
    systems.push_back({"StarPU lws", workers, "lws"});
  }
  setenv("STARPU_SILENT", "1", 0);
  setenv("STARPU_NCUDA", "0", 0);
  setenv("STARPU_NOPENCL", "0", 0);
  if (std::getenv("STARPU_SCHED"))
    std::fprintf(
        stderr,
        "engine_bench: STARPU_SCHED is set, and overrides the schedulers named in the table\n");

  std::vector<std::unique_ptr<mxplug::Engine>> engines;
  for (const System& system : systems) {
    if (system.sched) {
      engines.emplace_back();
      continue;
    }
    mxplug::EngineOptions options;
    options.cpu_workers = system.workers;
    engines.push_back(mxplug::Engine::Create(mxplug::EngineType::kThreaded, options));
    for (const Workload& w : workloads)
      Measure(system, engines.back().get(), w.metric, w.tasks, fan_rounds);
  }
  // rates[workload][system]: tasks/s of each round. Rounds interleave the systems, each round
  // starting one system later: the system measured right after a StarPU shut down ran 0.7x of
  // its rate in other places (mxplug with 2 workers, always first), so each takes that place in
  // turn.
  std::vector<std::vector<std::vector<double>>> rates(
      workloads.size(), std::vector<std::vector<double>>(systems.size()));
  std::vector<std::vector<double>> serial(workloads.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t w = 0; w < workloads.size(); ++w) {
      for (size_t k = 0; k < systems.size(); ++k) {
        const size_t s = (k + static_cast<size_t>(r)) % systems.size();
        rates[w][s].push_back(workloads[w].tasks / Measure(systems[s], engines[s].get(),
                                                           workloads[w].metric, workloads[w].tasks,
                                                           fan_rounds));
      }
      serial[w].push_back(workloads[w].tasks / RunSerial(workloads[w].tasks));
    }

  std::printf(
      "%s; %d CPU workers on each side (and mxplug with 1); empty tasks; tasks/s, median "
      "(range) of %d interleaved rounds%s\n\n",
      PeerName().c_str(), workers, rounds, quick ? ", --quick" : "");
  const bool peers = !mxplug_only;
  std::printf("| workload | tasks |");
  for (const System& s : systems) std::printf(" %s |", s.name.c_str());
  if (peers) std::printf(" ours/StarPU (best) |");
  std::printf(" %d workers / 1 | µs/task: ours |%s\n| --- | ---: |", workers,
              peers ? " StarPU (best) |" : "");
  for (size_t s = 0; s < systems.size() + (peers ? 4 : 2); ++s) std::printf(" ---: |");
  std::printf("\n");
  nlohmann::json rows = nlohmann::json::array();
  const size_t one_worker = workers != 1 ? 1 : 0;
  for (size_t w = 0; w < workloads.size(); ++w) {
    const double ours = Median(rates[w][0]), single = Median(rates[w][one_worker]);
    std::printf("| `%s`: %s | %d |", workloads[w].metric, workloads[w].what, workloads[w].tasks);
    for (size_t s = 0; s < systems.size(); ++s) std::printf(" %s |", Cell(rates[w][s]).c_str());
    if (!peers) {
      std::printf(" %.2f | %.2f |\n", ours / single, 1e6 / ours);
      continue;
    }
    const size_t eager = systems.size() - 2, lws = systems.size() - 1;
    const size_t best = Median(rates[w][eager]) >= Median(rates[w][lws]) ? eager : lws;
    const double peer = Median(rates[w][best]);
    std::printf(" %.2fx (%s) | %.2f | %.2f | %.2f |\n", ours / peer, systems[best].sched,
                ours / single, 1e6 / ours, 1e6 / peer);
    rows.push_back({{"metric", workloads[w].metric},
                    {"ours", ours},
                    {"peer", peer},
                    {"peer_name", PeerName() + " (" + systems[best].sched + ")"},
                    {"ratio", ours / peer},
                    {"better", "higher"},
                    {"unit", "tasks/s"},
                    {"workers", workers},
                    {"tasks", workloads[w].tasks},
                    {"ours_one_worker", single},
                    {"workers_over_one", ours / single},
                    {"starpu_eager", Median(rates[w][eager])},
                    {"starpu_lws", Median(rates[w][lws])},
                    {"serial_floor", Median(serial[w])},
                    {"rounds", rounds}});
  }
  std::printf(
      "\nratios are of the medians: above 1 is better. Serial floor (a loop calling the same empty "
      "std::function): %.0f million calls/s\n",
      Median(serial[0]) / 1e6);
  if (!json_out.empty() && peers) {
    std::ofstream(json_out) << rows.dump(2) << "\n";
    std::printf("wrote %s\n", json_out.c_str());
  }
  return 0;
}
