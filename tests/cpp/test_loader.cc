// The loader against test-only plugins, each broken in one way: every refusal names the file and
// the reason, changes nothing, and never stops the good plugins from loading.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <thread>

#include "mxplug/op_runner.h"
#include "mxplug/runtime.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace mxplug {
namespace {

using test::kLateDir;
using test::kPluginDir;
using test::kZooDir;

std::map<std::string, PluginRecord> ByFile(const Runtime& rt) {
  std::map<std::string, PluginRecord> out;
  for (const PluginRecord& r : rt.Plugins()) out[fs::path(r.path).filename().string()] = r;
  return out;
}

void ExpectRefused(const std::map<std::string, PluginRecord>& records, const std::string& file,
                   const std::vector<std::string>& reason_parts) {
  auto it = records.find(file);
  ASSERT_NE(it, records.end()) << file << " was not seen";
  EXPECT_FALSE(it->second.loaded()) << file;
  for (const std::string& part : reason_parts)
    EXPECT_NE(it->second.reason.find(part), std::string::npos)
        << file << ": reason '" << it->second.reason << "' lacks '" << part << "'";
}

TEST(Loader, BrokenPluginsAreRefusedWithReasonsAndGoodOnesLoad) {
  Runtime rt;
  rt.LoadSearchPath({{kPluginDir, "default folder"}, {kZooDir, "zoo"}});
  auto records = ByFile(rt);

  for (const char* good : {"libmxplug_cpu.so", "libmxplug_nn.so", "libmxplug_tensor.so"}) {
    ASSERT_TRUE(records.count(good)) << good;
    EXPECT_TRUE(records[good].loaded()) << good << ": " << records[good].reason;
  }
  ExpectRefused(records, "libtest_bad_abi.so",
                {"built for plugin ABI 99.3",
                 "this host speaks ABI " + std::to_string(MXP_ABI_MAJOR) + "." +
                     std::to_string(MXP_ABI_MINOR),
                 "major versions must match"});
  ExpectRefused(records, "libtest_needs_newer_minor.so",
                {"needs plugin ABI 1." + std::to_string(MXP_ABI_MINOR + 7) + " or newer"});
  ExpectRefused(records, "libtest_needs_newer_host.so", {"needs mxplug 99.0.0 or newer"});
  ExpectRefused(records, "libtest_init_fails.so",
                {"registration failed", "device driver libfake.so.1 is missing"});
  ExpectRefused(records, "libtest_incomplete_op.so",
                {"op 'test.Incomplete' lacks one of create, destroy, list, infer_shape"});
  ExpectRefused(records, "libtest_init_throws.so",
                {"threw a C++ exception", "boom: configuration file not found"});
  ExpectRefused(records, "libtest_duplicate_op.so",
                {"op 'FullyConnected' is already registered by plugin 'nn'", "libmxplug_nn.so"});
  ExpectRefused(records, "libtest_no_entry.so", {"not an mxplug plugin", "mxplug_init"});
  ExpectRefused(records, "libtest_not_a_library.so", {"cannot be loaded", "invalid ELF header"});

  // All or nothing: the duplicate plugin's other op did not get in.
  EXPECT_EQ(rt.ops().Find("dup.Unique"), nullptr);
  EXPECT_EQ(rt.ops().Find("test.Incomplete"), nullptr);
  // Every good op is there with its kernel: as many as the default folder alone gives.
  Runtime good;
  good.LoadSearchPath({{kPluginDir, "default folder"}});
  EXPECT_GT(good.ops().Size(), 100u);
  EXPECT_EQ(rt.ops().Size(), good.ops().Size());
  for (const auto& op : rt.ops().List())
    EXPECT_NE(rt.FindKernel(op->name, kDLCPU), nullptr) << op->name;
  EXPECT_EQ(rt.GetOp("FullyConnected")->plugin, "nn");
}

TEST(Loader, RefusalChangesNothing) {
  Runtime rt;
  rt.LoadSearchPath({{kPluginDir, "default folder"}});
  auto ops = rt.ops().Names();
  auto kernels = rt.kernels().Names();
  auto devices = rt.devices().Names();
  rt.LoadSearchPath({{kZooDir, "zoo"}});
  EXPECT_EQ(rt.ops().Names(), ops);
  EXPECT_EQ(rt.kernels().Names(), kernels);
  EXPECT_EQ(rt.devices().Names(), devices);
}

TEST(Loader, KernelsBindToOpsInEitherLoadOrder) {
  Runtime::Get().EnsureDefaultPluginsLoaded();  // the cpu device, for the tensors below
  const std::string op_file = kLateDir + "/libtest_late_op.so";
  const std::string kernel_file = kLateDir + "/libtest_late_kernel.so";
  for (bool kernel_first : {true, false}) {
    Runtime rt;
    PluginRecord first = rt.LoadFile(kernel_first ? kernel_file : op_file);
    ASSERT_TRUE(first.loaded()) << first.reason;
    if (kernel_first) {
      ASSERT_EQ(rt.UnboundKernels().size(), 1u);
      EXPECT_EQ(rt.UnboundKernels()[0]->Key(), "test.Late@cpu");
    }
    PluginRecord second = rt.LoadFile(kernel_first ? op_file : kernel_file);
    ASSERT_TRUE(second.loaded()) << second.reason;
    EXPECT_TRUE(rt.UnboundKernels().empty());
    OpRunner runner("test.Late", {}, Context::CPU(), &rt);
    Tensor x = Tensor::FromVector<float>({1, -2, 4.5f}, TShape{3});
    EXPECT_EQ(runner.Forward({x})[0].ToVector<float>(), (std::vector<float>{3, -6, 13.5f}));
  }
}

TEST(Loader, SameFileTwiceIsOneRecord) {
  Runtime rt;
  PluginRecord a = rt.LoadFile(kPluginDir + "/libmxplug_nn.so");
  const size_t ops = rt.ops().Size();
  PluginRecord b = rt.LoadFile(kPluginDir + "/../plugins/libmxplug_nn.so");
  EXPECT_TRUE(a.loaded());
  EXPECT_TRUE(b.loaded());
  EXPECT_EQ(rt.Plugins().size(), 1u);
  EXPECT_EQ(ops, a.ops.size());
  EXPECT_EQ(rt.ops().Size(), ops);
}

// Note [Adapted libraries]: an MXNet lib_api custom-op library, which exports no mxplug_init, loads
// through the adapter plugin (plugins/mxnet_lib) under a record of its own.
TEST(Loader, AnMXNetLibraryLoadsThroughTheAdapterPlugin) {
  const std::string lib = test::kMXNetLibDir + "/libmxnet_test_ops.so";
  const std::string adapter = kPluginDir + "/libmxplug_mxnet_lib.so";
  Runtime bare;
  PluginRecord unadapted = bare.LoadFile(lib);
  EXPECT_FALSE(unadapted.loaded());
  EXPECT_EQ(unadapted.reason, "not an mxplug plugin: it does not export mxplug_init");

  Runtime rt;
  ASSERT_TRUE(rt.LoadFile(adapter).loaded());
  EXPECT_EQ(rt.AdapterPaths(), std::vector<std::string>{fs::canonical(adapter).string()});
  PluginRecord r = rt.LoadFile(lib);
  ASSERT_TRUE(r.loaded()) << r.reason;
  EXPECT_EQ(r.name, "mxnet_lib:mxnet_test_ops");
  EXPECT_EQ(r.ops, (std::vector<std::string>{"scaled_gemm", "stateful_gemm", "running_average",
                                             "refuses_to_run"}));
  EXPECT_EQ(r.kernels.size(), 4u);
  EXPECT_NE(r.build_info.find("MX_LIBRARY_VERSION 11"), std::string::npos) << r.build_info;
  EXPECT_NE(r.build_info.find("adapted by plugin 'mxnet_lib'"), std::string::npos) << r.build_info;
  EXPECT_EQ(rt.GetOp("scaled_gemm")->plugin, r.name);
  ASSERT_NE(rt.FindKernel("stateful_gemm", kDLCPU), nullptr);
  EXPECT_EQ(rt.FindKernel("stateful_gemm", kDLCPU)->plugin, r.name);

  // A file that is neither a plugin nor a library an adapter knows says which adapters it met.
  PluginRecord neither = rt.LoadFile(kZooDir + "/libtest_no_entry.so");
  EXPECT_FALSE(neither.loaded());
  EXPECT_NE(neither.reason.find("and no adapter plugin ('mxnet_lib') recognises it"),
            std::string::npos)
      << neither.reason;
}

// Libraries that MXNet refuses are refused here with MXNet's words, and register nothing.
TEST(Loader, AnMXNetLibraryThatMXNetRefusesChangesNothing) {
  Runtime rt;
  ASSERT_TRUE(rt.LoadFile(kPluginDir + "/libmxplug_mxnet_lib.so").loaded());
  const std::map<std::string, std::string> refusals = {
      {"libmxnet_test_ops_v10.so", "Library version (10) does not match MXNet version (11)"},
      {"libmxnet_test_ops_init_fails.so",
       "Library failed to initialize\nExtension Traceback:\n\t[0] this build of the library "
       "refuses to initialize"}};
  for (const auto& [file, words] : refusals) {
    PluginRecord r = rt.LoadFile(test::kMXNetLibDir + "/" + file);
    EXPECT_FALSE(r.loaded()) << file;
    EXPECT_NE(r.reason.find("adapter plugin 'mxnet_lib' refused it: " + words), std::string::npos)
        << r.reason;
    EXPECT_TRUE(r.ops.empty()) << file;
  }
  EXPECT_FALSE(rt.ops().Contains("scaled_gemm"));
}

TEST(Loader, SecondCopyOfAPluginIsRefusedNamingTheFirst) {
  fs::path dir = fs::path(test::kScratchDir) / "copy";
  fs::create_directories(dir);
  fs::copy_file(kPluginDir + "/libmxplug_nn.so", dir / "libnn_copy.so",
                fs::copy_options::overwrite_existing);
  Runtime rt;
  ASSERT_TRUE(rt.LoadFile(kPluginDir + "/libmxplug_nn.so").loaded());
  PluginRecord copy = rt.LoadFile((dir / "libnn_copy.so").string());
  EXPECT_FALSE(copy.loaded());
  EXPECT_NE(copy.reason.find("a plugin named 'nn' is already loaded from"), std::string::npos)
      << copy.reason;
  EXPECT_NE(copy.reason.find("libmxplug_nn.so"), std::string::npos) << copy.reason;
}

TEST(Loader, LoadLibraryThrowsWithFileAndReason) {
  Runtime rt;
  try {
    rt.LoadLibrary(kZooDir + "/libtest_bad_abi.so");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("libtest_bad_abi.so"), std::string::npos) << what;
    EXPECT_NE(what.find("built for plugin ABI 99.3"), std::string::npos) << what;
  }
  PluginRecord missing = rt.LoadFile("/nonexistent/libnothing.so");
  EXPECT_FALSE(missing.loaded());
  EXPECT_EQ(missing.reason, "no such file");
  EXPECT_EQ(rt.ops().Size(), 0u);
}

TEST(Loader, ConcurrentLoadsGiveTheSameCatalogueAsSerial) {
  std::vector<std::string> files;
  for (const std::string& dir : {kPluginDir, kZooDir, kLateDir})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".so") files.push_back(e.path().string());
  Runtime serial;
  for (const std::string& f : files) serial.LoadFile(f);
  // Order matters for which of two clashing plugins wins, so compare only the good plugins'
  // outcome: load every file from 8 threads at once, twice each.
  Runtime parallel;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < files.size(); ++i) parallel.LoadFile(files[(i + t) % files.size()]);
    });
  for (auto& th : threads) th.join();
  std::vector<PluginRecord> records = parallel.Plugins();
  EXPECT_EQ(records.size(), files.size());
  int owners_of_fully_connected = 0;
  bool nn_loaded = false;
  for (const PluginRecord& r : records) {
    if (r.name == "nn" || r.name == "duplicate_op") owners_of_fully_connected += r.loaded();
    if (r.name == "nn") nn_loaded = r.loaded();
    if (!r.loaded()) continue;
    for (const std::string& op : r.ops) EXPECT_EQ(parallel.GetOp(op)->plugin, r.name) << op;
    // Apart from the nn / duplicate_op race, the same plugins load as in the serial run.
    if (r.name == "nn" || r.name == "duplicate_op") continue;
    for (const PluginRecord& s : serial.Plugins()) {
      if (s.path == r.path) {
        EXPECT_TRUE(s.loaded()) << r.path;
      }
    }
  }
  EXPECT_EQ(owners_of_fully_connected, 1);
  EXPECT_NE(parallel.ops().Find("test.Late"), nullptr);
  // Kernels wait for their op: only when duplicate_op won the race, and nn was refused, are the
  // kernels other plugins have for nn's ops (CUDA's Activation...) left without one.
  for (const auto& k : parallel.UnboundKernels())
    EXPECT_TRUE(!nn_loaded && serial.GetOp(k->op_name)->plugin == "nn") << k->op_name;
}

TEST(Loader, UnknownOpSuggestsClosestNames) {
  Runtime rt;
  rt.LoadSearchPath({{kPluginDir, "default folder"}});
  try {
    rt.GetOp("FullyConected");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "operator 'FullyConected' is not registered; did you mean 'FullyConnected'?");
  }
  EXPECT_EQ(Runtime::ClosestNames("elemwise_ad", rt.ops().Names())[0], "elemwise_add");
  EXPECT_EQ(Runtime::ClosestNames("fullyconnected", rt.ops().Names())[0], "FullyConnected");
  // A name far from every op: no suggestion.
  EXPECT_TRUE(Runtime::ClosestNames("QuantumTeleporter", rt.ops().Names()).empty());
}

}  // namespace
}  // namespace mxplug
