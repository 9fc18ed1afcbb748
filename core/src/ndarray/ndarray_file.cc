// MXNet's NDArray list format, as written by MXNet 1.x (NDArray::Save, dmlc serialisation):
//   uint64 0x112 (list magic), uint64 0 (reserved), uint64 count, count arrays, uint64 count
//   of names, each name as uint64 length + bytes.
// One array (V2, what MXNet 1.x writes with legacy shapes):
//   uint32 0xF993FAC9, int32 storage type (0: dense), int32 ndim, int64 dims[ndim],
//   int32 dev_type, int32 dev_id, int32 dtype flag, raw little-endian data.
//   ndim 0 is a none array (no context, no data follows).
// V3 (0xF993FACA, MXNet's NumPy-shape mode) has the same layout, but ndim -1 is a none array
//   and ndim 0 a scalar; we write it only for shapes V2 cannot express (0-d, zero-size axes).
// V1 (0xF993FAC8) has no storage type. Before V1 there was no magic: the first uint32 is the
//   ndim and the dims are uint32.
#include "mxplug/ndarray_file.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mxplug/atomic_file.h"
#include "mxplug/error.h"

namespace mxplug {
namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993FAC8, kV2Magic = 0xF993FAC9, kV3Magic = 0xF993FACA;
constexpr int32_t kDenseStorage = 0;
constexpr uint32_t kMaxNDim = 32;

class Writer {
 public:
  template <typename T>
  void Put(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void PutBytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string& str() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& source) : bytes_(bytes), source_(source) {}
  template <typename T>
  T Get(const char* what) {
    T v;
    std::memcpy(&v, Take(sizeof(T), what), sizeof(T));
    return v;
  }
  const char* Take(size_t n, const char* what) {
    if (n > bytes_.size() - pos_)
      Fail(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
           std::to_string(bytes_.size() - pos_) + " left");
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t left() const { return bytes_.size() - pos_; }
  [[noreturn]] void Fail(const std::string& why) const {
    throw Error("cannot load NDArrays from " + source_ + ": " + context_ + why + " (at byte " +
                    std::to_string(pos_) + ")",
                kMXPInvalidArgument);
  }
  void SetContext(std::string c) { context_ = std::move(c); }

 private:
  const std::string& bytes_;
  const std::string& source_;
  std::string context_;
  size_t pos_ = 0;
};

bool NeedsNumpyShape(const TShape& s) {
  if (s.ndim() == 0) return true;
  for (int64_t d : s)
    if (d == 0) return true;
  return false;
}

void SaveOne(Writer& w, const NDArray& a) {
  if (a.is_none()) {
    w.Put<uint32_t>(kV2Magic);
    w.Put<int32_t>(kDenseStorage);
    w.Put<int32_t>(0);
    return;
  }
  const TShape& s = a.shape();
  w.Put<uint32_t>(NeedsNumpyShape(s) ? kV3Magic : kV2Magic);
  w.Put<int32_t>(kDenseStorage);
  w.Put<int32_t>(s.ndim());
  for (int64_t d : s) w.Put<int64_t>(d);
  // MXNet's device type ids: 1 cpu, 2 gpu, 3 cpu_pinned (DLPack's CPU, CUDA and CUDAHost have
  // the same values; any other accelerator is MXNet's gpu, pinned memory of any is cpu_pinned).
  const Context ctx = a.ctx();
  w.Put<int32_t>(ctx.dev_type == kDLCPU ? 1 : ctx.IsHostPinned() ? 3 : 2);
  w.Put<int32_t>(ctx.dev_id);
  w.Put<int32_t>(a.dtype());
  const size_t offset = w.str().size();
  w.str().resize(offset + a.bytes());
  a.SyncCopyToCPU(w.str().data() + offset, a.bytes());
}

// One array into host memory; nothing reaches the engine until the whole file has parsed.
struct Parsed {
  bool none = false;
  TShape shape;
  int dtype = kMXPFloat32;
  const char* data = nullptr;
};

Parsed LoadOne(Reader& r) {
  Parsed p;
  const uint32_t magic = r.Get<uint32_t>("the array's magic number");
  std::vector<int64_t> dims;
  bool numpy_shape = false;
  if (magic == kV2Magic || magic == kV3Magic) {
    numpy_shape = magic == kV3Magic;
    const int32_t stype = r.Get<int32_t>("the storage type");
    if (stype != kDenseStorage)
      r.Fail("storage type " + std::to_string(stype) +
             " (sparse) is not supported; only dense arrays (0) are");
    const int32_t ndim = r.Get<int32_t>("the number of dimensions");
    if ((numpy_shape && ndim == -1) || (!numpy_shape && ndim == 0)) return p.none = true, p;
    if (ndim < 0 || static_cast<uint32_t>(ndim) > kMaxNDim)
      r.Fail("bad number of dimensions " + std::to_string(ndim));
    for (int32_t i = 0; i < ndim; ++i) dims.push_back(r.Get<int64_t>("a dimension"));
  } else if (magic == kV1Magic) {
    const int32_t ndim = r.Get<int32_t>("the number of dimensions");
    if (ndim == 0) return p.none = true, p;
    if (ndim < 0 || static_cast<uint32_t>(ndim) > kMaxNDim)
      r.Fail("bad number of dimensions " + std::to_string(ndim));
    for (int32_t i = 0; i < ndim; ++i) dims.push_back(r.Get<int64_t>("a dimension"));
  } else {
    // The oldest layout: no magic; this word was the ndim, and dims are uint32.
    if (magic == 0) return p.none = true, p;
    if (magic > kMaxNDim)
      r.Fail("not an NDArray: unknown magic number 0x" + [&] {
        char buf[16];
        std::snprintf(buf, sizeof(buf), "%08X", magic);
        return std::string(buf);
      }());
    for (uint32_t i = 0; i < magic; ++i) dims.push_back(r.Get<uint32_t>("a dimension"));
  }
  for (int64_t d : dims)
    if (d < 0) r.Fail("negative dimension " + std::to_string(d));
  p.shape = TShape(dims);
  r.Get<int32_t>("the device type");
  r.Get<int32_t>("the device id");
  p.dtype = r.Get<int32_t>("the dtype");
  const size_t elem = DTypeSize(p.dtype);
  if (elem == 0) r.Fail("unknown dtype flag " + std::to_string(p.dtype));
  // Overflow-safe: the data must fit in what is left of the file.
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d != 0 && count > r.left() / static_cast<uint64_t>(d))
      r.Fail("shape " + p.shape.ToString() + " needs more data than the file holds");
    count *= static_cast<uint64_t>(d);
  }
  if (count > r.left() / elem)
    r.Fail("shape " + p.shape.ToString() + " of " + DTypeName(p.dtype) + " needs " +
           std::to_string(count * elem) + " bytes of data, " + std::to_string(r.left()) + " left");
  p.data = r.Take(count * elem, "the data");
  return p;
}

}  // namespace

std::string SaveNDArrays(const NDArrayFile& file) {
  if (!file.names.empty() && file.names.size() != file.arrays.size())
    throw Error("SaveNDArrays: " + std::to_string(file.names.size()) + " names for " +
                    std::to_string(file.arrays.size()) + " arrays",
                kMXPInvalidArgument);
  Writer w;
  w.Put<uint64_t>(kListMagic);
  w.Put<uint64_t>(0);
  w.Put<uint64_t>(file.arrays.size());
  for (const NDArray& a : file.arrays) SaveOne(w, a);
  w.Put<uint64_t>(file.names.size());
  for (const std::string& n : file.names) {
    w.Put<uint64_t>(n.size());
    w.PutBytes(n.data(), n.size());
  }
  return std::move(w.str());
}

NDArrayFile LoadNDArrays(const std::string& bytes, const std::string& source) {
  Reader r(bytes, source);
  if (r.Get<uint64_t>("the file's magic number") != kListMagic)
    r.Fail("not an MXNet NDArray file (bad magic number)");
  r.Get<uint64_t>("the reserved word");
  const uint64_t count = r.Get<uint64_t>("the number of arrays");
  // Each array takes at least 4 bytes: a count beyond that is corruption, not a big file.
  if (count > r.left() / 4) r.Fail("claims " + std::to_string(count) + " arrays");
  std::vector<Parsed> parsed;
  parsed.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    r.SetContext("array " + std::to_string(i) + ": ");
    parsed.push_back(LoadOne(r));
  }
  r.SetContext("");
  NDArrayFile file;
  const uint64_t num_names = r.Get<uint64_t>("the number of names");
  if (num_names != 0 && num_names != count)
    r.Fail(std::to_string(num_names) + " names for " + std::to_string(count) + " arrays");
  for (uint64_t i = 0; i < num_names; ++i) {
    r.SetContext("name " + std::to_string(i) + ": ");
    const uint64_t n = r.Get<uint64_t>("the name's length");
    if (n > r.left()) r.Fail("name length " + std::to_string(n) + " exceeds the file");
    file.names.emplace_back(r.Take(n, "the name"), n);
    // Names become Python strings: one that is not UTF-8 would escape as UnicodeDecodeError.
    try {
      (void)nlohmann::json(file.names.back()).dump();  // strict: throws on invalid UTF-8
    } catch (const nlohmann::json::exception&) {
      r.Fail("the name is not valid UTF-8 text");
    }
  }
  for (const Parsed& p : parsed) {
    if (p.none) {
      file.arrays.emplace_back();
      continue;
    }
    NDArray a(p.shape, Context::CPU(), p.dtype);
    a.SyncCopyFromCPU(p.data, a.bytes());
    file.arrays.push_back(std::move(a));
  }
  return file;
}

void SaveNDArrayFile(const std::string& path, const NDArrayFile& file) {
  WriteFileAtomically(path, SaveNDArrays(file));
}

NDArrayFile LoadNDArrayFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path + ": " + std::strerror(errno), kMXPNotFound);
  std::ostringstream buf;
  buf << in.rdbuf();
  return LoadNDArrays(buf.str(), path);
}

}  // namespace mxplug
