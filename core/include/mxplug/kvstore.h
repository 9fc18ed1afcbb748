/*!
 * \file mxplug/kvstore.h
 * \brief KVStore: a store of named arrays shared by devices (the seeds' KVStore). `Push` sums
 * the values pushed to a key, wherever they live, and hands the sum to the updater (or, without
 * one, stores it); `Pull` copies the stored value to any number of arrays on any devices.
 *
 * Like NDArray operations, every call only pushes work to the engine and returns: reading a
 * pulled array waits for it. Calls are checked before anything is pushed, so a bad key or shape
 * raises at the call and changes nothing. The updater is called in the calling thread, once per
 * key per push, and is expected to push its work too (NDArray operations, a fused optimizer op).
 * `priority` is MXNet's argument, accepted; the pushes it makes run in dependency order only.
 * One thread at a time may call a store (as in MXNet).
 */
#ifndef MXPLUG_KVSTORE_H_
#define MXPLUG_KVSTORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mxplug/ndarray.h"

namespace mxplug {

class KVStore {
 public:
  /*! \brief Called as updater(key, summed pushed value, stored value), once per key and push. */
  using Updater = std::function<void(const std::string& key, const NDArray& recv, NDArray* stored)>;

  virtual ~KVStore() = default;

  /*!
   * \brief "local": values are summed and stored on the CPU. "device": values are summed on
   * the device of the first value pushed, and the stored value moves there for the updater.
   * "nccl": several values are summed by one collective of their devices' backend (NCCL on
   * CUDA) onto the root device, and pulls to several devices broadcast from there.
   * Any name with "dist" is distributed: "dist_sync" (also "dist"), "dist_device_sync" (also
   * "dist_sync_device"), "dist_async"; joining the job on the first one (docs/distributed.md).
   * \throws Error naming the type and the types there are, or why there is no job, or, for
   * "nccl", that no loaded backend has collectives.
   */
  static std::unique_ptr<KVStore> Create(const std::string& type);

  virtual const std::string& type() const = 0;
  /*! \brief This worker's index in [0, num_workers); 0 for a single-process store. */
  virtual int rank() const { return 0; }
  virtual int num_workers() const { return 1; }

  /*!
   * \brief Stores a copy of values[i] under keys[i]. \throws Error for a key given twice or
   * already initialised (naming it), or a none array.
   */
  virtual void Init(const std::vector<std::string>& keys, const std::vector<NDArray>& values) = 0;
  /*!
   * \brief Pushes values[i] to keys[i]; a key may appear several times (its values are summed).
   * \throws Error for a key never initialised, or a value whose shape or dtype differs from the
   * stored one (naming the key and both).
   */
  virtual void Push(const std::vector<std::string>& keys, const std::vector<NDArray>& values,
                    int priority = 0) = 0;
  /*! \brief Copies the value of keys[i] into outs[i]; keys may repeat. \throws Error as Push. */
  virtual void Pull(const std::vector<std::string>& keys, const std::vector<NDArray>& outs,
                    int priority = 0) = 0;
  /*! \brief Installs the updater (empty: a push replaces the stored value). */
  virtual void SetUpdater(Updater updater) = 0;

  // Distributed stores (docs/distributed.md); a single-process store has nothing to do.
  /*! \brief Returns when every worker has called it (after the pushes before it). */
  virtual void Barrier() {}
  /*! \brief Gives (head, body) to every server's controller (MXNet's _send_command_to_servers). */
  virtual void SendCommandToServers(int head, const std::string& body) { (void)head, (void)body; }

  /*! \brief Called by a server (its index among the servers) with each command workers send. */
  using Controller = std::function<void(int server_rank, int head, const std::string& body)>;
  /*!
   * \brief A server process's life (DMLC_ROLE=server): joins the job, serves the workers and
   * returns once every worker has finished (FinishDistributed), having left the job. Its parts of
   * 'dist_async' keys are updated by `updater` on each push (empty: a push replaces the value).
   * \throws Error when this process is not part of a job.
   */
  static void RunServer(Controller controller, Updater updater);
  /*!
   * \brief A worker's last act, at exit: waits for its work, tells the servers it has finished
   * and leaves the job. Nothing when the process never joined one (and no server waits for it).
   */
  static void FinishDistributed();
  /*!
   * \brief Ends every process of the job, saying `message` and naming this process (a worker
   * whose script failed: its peers would otherwise wait for it). Nothing outside a job.
   */
  static void AbandonDistributed(const std::string& message);
};

}  // namespace mxplug

#endif  // MXPLUG_KVSTORE_H_
