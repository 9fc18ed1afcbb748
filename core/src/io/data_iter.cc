#include <algorithm>
#include <utility>

#include "io/iterators.h"
#include "mxplug/error.h"

namespace mxplug {
namespace {

using Maker = std::unique_ptr<DataIter> (*)(io::IterArgs&);

const std::vector<std::pair<std::string, Maker>>& Iterators() {
  static const std::vector<std::pair<std::string, Maker>> iterators = {
      {"CSVIter", io::MakeCSVIter},
      {"ImageDetRecordIter", io::MakeImageDetRecordIter},
      {"ImageRecordIter", [](io::IterArgs& a) { return io::MakeImageRecordIter(a, kMXPFloat32); }},
      // MXNet's older and single-dtype names for the same iterator.
      {"ImageRecordIter_v1",
       [](io::IterArgs& a) { return io::MakeImageRecordIter(a, kMXPFloat32); }},
      {"ImageRecordInt8Iter", [](io::IterArgs& a) { return io::MakeImageRecordIter(a, kMXPInt8); }},
      {"ImageRecordUInt8Iter",
       [](io::IterArgs& a) { return io::MakeImageRecordIter(a, kMXPUint8); }},
      {"ImageRecordUInt8Iter_v1",
       [](io::IterArgs& a) {
         a.Ignore({"mirror", "rand_mirror"});  // MXNet's older uint8 iterator never mirrors
         return io::MakeImageRecordIter(a, kMXPUint8);
       }},
      {"MNISTIter", io::MakeMNISTIter},
  };
  return iterators;
}

}  // namespace

std::unique_ptr<DataIter> DataIter::Create(const std::string& name,
                                           const std::map<std::string, std::string>& kwargs) {
  for (const auto& [known, make] : Iterators()) {
    if (known != name) continue;
    io::IterArgs args(name, kwargs);
    return make(args);
  }
  std::string names;
  for (const std::string& known : List()) names += (names.empty() ? "" : ", ") + known;
  throw Error("no data iterator named '" + name + "'; there are " + names, kMXPInvalidArgument);
}

std::vector<std::string> DataIter::List() {
  std::vector<std::string> names;
  for (const auto& entry : Iterators()) names.push_back(entry.first);
  return names;
}

}  // namespace mxplug
