// Note [NCCL collectives]
// The collectives of abi/device.h (collective_reduce, collective_broadcast) for the CUDA devices
// of this process, as MXNet's KVStoreNCCL runs them: one NCCL communicator per device of a set,
// made together by ncclCommInitAll the first time that set meets (and kept: a store uses one set
// for its life), ranks in the order of the sorted device ids; one stream of our own per device;
// the calls for every device inside one ncclGroupStart/ncclGroupEnd, since one thread drives them
// all; then each stream synchronised, so the call is complete on return, as the ABI asks (the
// host calls from a host function after the inputs' writers completed, so nothing else needs to
// wait). One collective runs at a time: NCCL's single-process use is one thread per clique.
#include "nccl_collectives.h"

#include <nccl.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "mxplug/plugin.hpp"

namespace mxplug_cuda {

namespace {

// A set of devices with a communicator and a stream on each, by rank.
struct Clique {
  std::vector<int> devices;  // sorted: rank r is devices[r]
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  int RankOf(int device) const {
    return static_cast<int>(std::find(devices.begin(), devices.end(), device) - devices.begin());
  }
};

std::string Names(const std::vector<int>& devices) {
  std::string text;
  for (int d : devices)
    text += (text.empty() ? "" : ", ") + std::string("cuda(") + std::to_string(d) + ")";
  return text;
}

void CheckNccl(ncclResult_t result, const std::string& call, const std::vector<int>& devices,
               ncclComm_t comm = nullptr) {
  if (result == ncclSuccess) return;
  std::string text = call + " over " + Names(devices) + ": " + ncclGetErrorString(result);
  if (comm) {
    const char* last = ncclGetLastError(comm);
    if (last && *last) text += std::string(" (") + last + ")";
  }
  throw std::runtime_error(text);
}

ncclDataType_t NcclType(const mxplug::TBlob& t) {
  switch (t.type_flag_) {
    case kMXPFloat16:
      return ncclFloat16;
    case kMXPFloat32:
      return ncclFloat32;
    case kMXPFloat64:
      return ncclFloat64;
    case kMXPBfloat16:
      return ncclBfloat16;
    case kMXPInt8:
      return ncclInt8;
    case kMXPUint8:
      return ncclUint8;
    case kMXPInt32:
      return ncclInt32;
    case kMXPInt64:
      return ncclInt64;
    default:
      throw std::invalid_argument("NCCL has no type for " + mxplug::DTypeName(t.type_flag_));
  }
}

std::mutex mu;                               // one collective at a time
std::map<std::vector<int>, Clique> cliques;  // by device set, never destroyed (Note [No dlclose])

// The clique of the tensors' devices, made on first use (the host has checked that they are
// distinct devices and the tensors of one dtype and size).
template <typename Tensor>
Clique& CliqueOf(int count, Tensor* const* tensors) {
  std::vector<int> devices;
  for (int i = 0; i < count; ++i) devices.push_back(tensors[i]->device.device_id);
  std::sort(devices.begin(), devices.end());
  auto it = cliques.find(devices);
  if (it != cliques.end()) return it->second;
  Clique clique;
  clique.devices = devices;
  clique.comms.resize(devices.size());
  CheckNccl(ncclCommInitAll(clique.comms.data(), static_cast<int>(devices.size()), devices.data()),
            "ncclCommInitAll", devices);
  for (int d : devices) {
    Check(cudaSetDevice(d), "cudaSetDevice", d);
    cudaStream_t stream = nullptr;
    Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate", d);
    clique.streams.push_back(stream);
  }
  return cliques.emplace(devices, std::move(clique)).first->second;
}

// Runs `enqueue(i, rank)` for each buffer inside one NCCL group, then waits for every stream.
template <typename Enqueue>
void RunGroup(const char* call, Clique& clique, const std::vector<int>& order, Enqueue&& enqueue) {
  CheckNccl(ncclGroupStart(), "ncclGroupStart", clique.devices);
  ncclResult_t queued = ncclSuccess;
  ncclComm_t failed = nullptr;
  for (size_t i = 0; i < order.size() && queued == ncclSuccess; ++i) {
    const int rank = clique.RankOf(order[i]);
    Check(cudaSetDevice(order[i]), "cudaSetDevice", order[i]);
    queued = enqueue(i, rank);
    if (queued != ncclSuccess) failed = clique.comms[rank];
  }
  const ncclResult_t ended = ncclGroupEnd();  // always closes the group
  CheckNccl(queued, call, clique.devices, failed);
  CheckNccl(ended, call, clique.devices);
  for (size_t r = 0; r < clique.devices.size(); ++r)
    Check(cudaStreamSynchronize(clique.streams[r]), "cudaStreamSynchronize", clique.devices[r]);
}

}  // namespace

void NcclReduce(int count, const DLTensor* const* inputs, DLTensor* output, int root) {
  std::lock_guard<std::mutex> lock(mu);
  Clique& clique = CliqueOf(count, inputs);
  const mxplug::TBlob out(*output), first(*inputs[0]);
  std::vector<int> order;
  for (int i = 0; i < count; ++i) order.push_back(inputs[i]->device.device_id);
  const int root_rank = clique.RankOf(order[root]);
  const ncclDataType_t type = NcclType(first);
  const size_t n = static_cast<size_t>(first.Size());
  RunGroup("ncclReduce", clique, order, [&](size_t i, int rank) {
    return ncclReduce(mxplug::TBlob(*inputs[i]).dptr_,
                      static_cast<int>(i) == root ? out.dptr_ : nullptr, n, type, ncclSum,
                      root_rank, clique.comms[rank], clique.streams[rank]);
  });
}

void NcclBroadcast(int count, DLTensor* const* buffers, int root) {
  std::lock_guard<std::mutex> lock(mu);
  Clique& clique = CliqueOf(count, buffers);
  std::vector<int> order;
  for (int i = 0; i < count; ++i) order.push_back(buffers[i]->device.device_id);
  const int root_rank = clique.RankOf(order[root]);
  const mxplug::TBlob first(*buffers[0]);
  const ncclDataType_t type = NcclType(first);
  const size_t n = static_cast<size_t>(first.Size());
  RunGroup("ncclBroadcast", clique, order, [&](size_t i, int rank) {
    // NCCL reads the send buffer on the root only, where it is also the receive buffer.
    void* data = mxplug::TBlob(*buffers[i]).dptr_;
    return ncclBroadcast(data, data, n, type, root_rank, clique.comms[rank], clique.streams[rank]);
  });
}

}  // namespace mxplug_cuda
