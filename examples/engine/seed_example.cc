// The seeds' dependency-engine example, run on the mxplug engine:
//   A = 2; B = 2; B = A + B; C = A + 2; A.del()
// "B = A + B" and "C = A + 2" only read A, so they run at the same time; A is deleted only
// after both have read it. Each function sleeps briefly so the overlap shows in a profile:
//   MXPLUG_PROFILER=trace.json build/bin/mxplug-engine-example
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "mxplug/engine.h"

// With --exit-without-wait FILE it also pushes 100 writes that append to FILE and returns from
// main at once: the engine drains them at exit, before static objects are destroyed.
int ExitWithoutWait(const char* file) {
  using namespace mxplug;
  static std::FILE* out = std::fopen(file, "w");
  if (!out) return 2;
  Engine* engine = Engine::Get();
  VarHandle v = engine->NewVar();
  for (int i = 0; i < 100; ++i)
    engine->PushSync([i](RunContext) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::fprintf(out, "%d\n", i);
      if (i == 99) std::fclose(out);
    }, Context::CPU(), {}, {v});
  return 0;  // no WaitForAll
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--exit-without-wait") return ExitWithoutWait(argv[2]);
  using namespace mxplug;
  using namespace std::chrono_literals;
  Engine* engine = Engine::Get();
  const Context cpu = Context::CPU();
  double a = 0, b = 0, c = 0;
  VarHandle A = engine->NewVar(), B = engine->NewVar(), C = engine->NewVar();
  auto work = [] { std::this_thread::sleep_for(20ms); };
  engine->PushSync([&](RunContext) { work(); a = 2; }, cpu, {}, {A}, FnProperty::kNormal, 0, "A = 2");
  engine->PushSync([&](RunContext) { work(); b = 2; }, cpu, {}, {B}, FnProperty::kNormal, 0, "B = 2");
  engine->PushSync([&](RunContext) { work(); b = a + b; }, cpu, {A}, {B}, FnProperty::kNormal, 0, "B = A + B");
  engine->PushSync([&](RunContext) { work(); c = a + 2; }, cpu, {A}, {C}, FnProperty::kNormal, 0, "C = A + 2");
  engine->PushDelete([](RunContext) {}, cpu, A);
  engine->WaitForAll();
  std::printf("B = %g, C = %g (%s)\n", b, c, engine->Describe().c_str());
  return b == 4 && c == 4 ? 0 : 1;
}
