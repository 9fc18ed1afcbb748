/*!
 * \file mxplug/sdk/comm_backend.hpp
 * \brief Base class of a communication backend plugin (register with MXPLUG_REGISTER_COMM): the
 * C++ face of MXPCommDef (abi/comm.h). Handles are the backend's own types behind the ABI's
 * opaque pointers. Every function may throw; the registration turns an exception into a status
 * (CommTimeout into kMXPDeadlineExceeded).
 */
#ifndef MXPLUG_SDK_COMM_BACKEND_HPP_
#define MXPLUG_SDK_COMM_BACKEND_HPP_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/abi/comm.h"

namespace mxplug {

/*! \brief Thrown by Init or Split when the deadline passed before the peers answered. */
class CommTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CommBackend {
 public:
  virtual ~CommBackend() = default;
  /*! \brief DLDeviceTypes whose memory Allreduce and Broadcast accept. */
  virtual std::vector<int32_t> MemoryTypes() const { return {kDLCPU}; }
  /*! \brief Whether this process is part of a job to join; if not, set `reason` to say how. */
  virtual bool Available(std::string* reason) = 0;
  virtual MXPComm* Init(const MXPCommBootstrap* bootstrap, int64_t timeout_ms) = 0;
  virtual int Rank(MXPComm* comm) = 0;
  virtual int Size(MXPComm* comm) = 0;
  virtual MXPComm* Split(MXPComm* comm, int color, int key, int64_t timeout_ms) = 0;
  virtual void Free(MXPComm* comm) = 0;

  // Each starts an operation and returns its request (see abi/comm.h for what stays valid).
  virtual MXPCommRequest* Allreduce(MXPComm* comm, DLTensor* buffer, MXPCommReduceOp op,
                                    void* stream) = 0;
  virtual MXPCommRequest* Broadcast(MXPComm* comm, DLTensor* buffer, int root, void* stream) = 0;
  virtual MXPCommRequest* Barrier(MXPComm* comm) = 0;
  virtual MXPCommRequest* Send(MXPComm* comm, const void* data, uint64_t bytes, int dest,
                               int tag) = 0;
  virtual MXPCommRequest* Recv(MXPComm* comm, void* data, uint64_t bytes, int source, int tag) = 0;
  virtual bool Probe(MXPComm* comm, int source, int tag, MXPCommMessageInfo* info) = 0;
  /*! \brief True when done: then the request is freed (also when this throws). */
  virtual bool Test(MXPCommRequest* request, MXPCommMessageInfo* info) = 0;
  virtual void Cancel(MXPCommRequest* request) = 0;
  [[noreturn]] virtual void Abort(MXPComm* comm, int exit_code) = 0;
  virtual void Finalize() = 0;
};

}  // namespace mxplug

#endif  // MXPLUG_SDK_COMM_BACKEND_HPP_
