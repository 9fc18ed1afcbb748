/*!
 * \file mxplug/abi/comm.h
 * \brief Communication backends across the boundary: collectives and messages between the
 * processes of a distributed job (MPI; NCCL or Gloo may follow). The core knows no transport,
 * as it knows no device: the distributed kvstore reaches one only through an MXPCommDef.
 * \since 1.3
 *
 * Note [Deadlines are the host's]
 * Every operation that involves another process is started here and completed by `test`:
 * allreduce, broadcast, barrier, send and recv return a request at once, and the host polls
 * `test` until it says done or the operation's deadline passes (MXPLUG_KVSTORE_TIMEOUT). So no
 * call can block on a peer that died or stalls, and the host, not each backend, decides how a
 * waiting process polls (without spinning a core, docs/distributed.md) and what a missed deadline
 * does (it names the operation and ends the job through `abort`). The two calls that must block,
 * `init` and `split`, take the deadline themselves and return kMXPDeadlineExceeded when it
 * passes.
 *
 * Threading: the host calls one backend from one thread at a time; a request is tested by the
 * thread that started it.
 */
#ifndef MXPLUG_ABI_COMM_H_
#define MXPLUG_ABI_COMM_H_

#include "mxplug/abi/base.h"
#include "mxplug/abi/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! \brief A communicator: an ordered group of processes, owned by the backend. \since 1.3 */
typedef struct MXPComm MXPComm;
/*! \brief A started operation, owned by the backend until `test` says done or `cancel`. */
typedef struct MXPCommRequest MXPCommRequest;

/*! \brief `recv` and `probe` from any process, or with any tag. */
#define MXP_COMM_ANY_SOURCE (-1)
#define MXP_COMM_ANY_TAG (-1)

/*! \brief Reductions of `allreduce`. Frozen: values are only appended. \since 1.3 */
typedef enum MXPCommReduceOp {
  kMXPCommSum = 0,
  kMXPCommMax = 1,
  kMXPCommMin = 2,
} MXPCommReduceOp;

/*! \brief What a completed `recv`, or a `probe` that found one, says of the message. */
typedef struct MXPCommMessageInfo {
  size_t struct_size;
  MXPExtension* ext;
  int32_t source; /*!< rank in the communicator */
  int32_t tag;
  uint64_t bytes;
} MXPCommMessageInfo;

/*!
 * \brief How a backend that cannot find its peers itself (NCCL's unique id, Gloo's rendezvous)
 * meets them: the host lends it a communicator of a backend that has already joined (MPI).
 * Both calls block until done or the deadline (kMXPDeadlineExceeded).
 */
typedef struct MXPCommBootstrap {
  size_t struct_size;
  MXPExtension* ext;
  int32_t rank;
  int32_t size;
  void* user;
  MXPStatus* (*broadcast)(void* user, void* data, uint64_t bytes, int32_t root, int64_t timeout_ms);
  /*! \brief `all` receives size x bytes_each: rank r's `mine` at r x bytes_each. */
  MXPStatus* (*allgather)(void* user, const void* mine, void* all, uint64_t bytes_each,
                          int64_t timeout_ms);
} MXPCommBootstrap;

/*! \brief A communication backend. Every function receives `user` first. \since 1.3 */
typedef struct MXPCommDef {
  size_t struct_size;
  MXPExtension* ext;
  const char* name; /*!< "mpi", "nccl": what `mxplug comms` lists */
  /*! \brief DLDeviceTypes whose memory allreduce and broadcast accept (MPI: kDLCPU). */
  const int32_t* memory_types;
  size_t num_memory_types;
  void* user;

  /*!
   * \brief Whether this process belongs to a job this backend can join (MPI: started by
   * mpirun). When not, `reason` says how to start one (borrowed, static).
   */
  MXPStatus* (*available)(void* user, int32_t* yes, const char** reason);
  /*!
   * \brief Joins the job, once per process; `world` holds every process of it. `bootstrap` is
   * NULL for a backend that finds its peers itself. Blocks until done or the deadline.
   */
  MXPStatus* (*init)(void* user, const MXPCommBootstrap* bootstrap, int64_t timeout_ms,
                     MXPComm** world);
  MXPStatus* (*rank)(void* user, MXPComm* comm, int32_t* rank);
  MXPStatus* (*size)(void* user, MXPComm* comm, int32_t* size);
  /*!
   * \brief Collective over `comm`: the processes that give the same color form a new
   * communicator, ranked by `key` (then by rank in `comm`). Blocks until done or the deadline.
   */
  MXPStatus* (*split)(void* user, MXPComm* comm, int32_t color, int32_t key, int64_t timeout_ms,
                      MXPComm** out);
  MXPStatus* (*comm_free)(void* user, MXPComm* comm);

  /*!
   * \brief Starts a collective: every process of `comm` calls it in the same order with a
   * buffer of the same dtype and size. `buffer` (compact, in one of memory_types) must stay
   * valid until the request is done. `stream` is the device's stream for memory on an
   * accelerator (Note [Native streams] in abi/device.h), NULL on the host.
   */
  MXPStatus* (*allreduce)(void* user, MXPComm* comm, DLTensor* buffer, int32_t op, void* stream,
                          MXPCommRequest** request);
  MXPStatus* (*broadcast)(void* user, MXPComm* comm, DLTensor* buffer, int32_t root, void* stream,
                          MXPCommRequest** request);
  MXPStatus* (*barrier)(void* user, MXPComm* comm, MXPCommRequest** request);
  /*!
   * \brief Point-to-point messages of host memory. Messages from one process to another with
   * the same tag arrive in the order sent. `data` stays valid until the request is done.
   */
  MXPStatus* (*send)(void* user, MXPComm* comm, const void* data, uint64_t bytes, int32_t dest,
                     int32_t tag, MXPCommRequest** request);
  /*! \brief `bytes` is the room in `data`; a longer message is an error of `test`. */
  MXPStatus* (*recv)(void* user, MXPComm* comm, void* data, uint64_t bytes, int32_t source,
                     int32_t tag, MXPCommRequest** request);
  /*! \brief Without waiting: whether a message is ready to be received, and what it is. */
  MXPStatus* (*probe)(void* user, MXPComm* comm, int32_t source, int32_t tag, int32_t* found,
                      MXPCommMessageInfo* info);
  /*!
   * \brief Advances a request without waiting. When it is done, `*done` is 1, the request is
   * freed, and `info` (may be NULL) describes a received message. A request that failed is
   * freed too, and its status returned.
   */
  MXPStatus* (*test)(void* user, MXPCommRequest* request, int32_t* done, MXPCommMessageInfo* info);
  /*! \brief Abandons a request and frees it (a pending recv is cancelled). */
  MXPStatus* (*cancel)(void* user, MXPCommRequest* request);
  /*! \brief Ends every process of the job with `exit_code`; does not return. */
  void (*abort)(void* user, MXPComm* comm, int32_t exit_code);
  /*! \brief Leaves the job (after the last operation; every process calls it). */
  MXPStatus* (*finalize)(void* user);
} MXPCommDef;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // MXPLUG_ABI_COMM_H_
