// The CUDA plugin's collectives among the devices of one process, on NCCL (MXNet's 'nccl'
// kvstore; Note [NCCL collectives] in nccl_collectives.cc). CUDA only: Debian 12 has no RCCL.
#ifndef MXPLUG_DEVICES_CUDA_NCCL_COLLECTIVES_H_
#define MXPLUG_DEVICES_CUDA_NCCL_COLLECTIVES_H_

#include <dlpack/dlpack.h>

namespace mxplug_cuda {

/*! \brief output (on inputs[root]'s device) = the sum of inputs; complete on return. */
void NcclReduce(int count, const DLTensor* const* inputs, DLTensor* output, int root);
/*! \brief buffers[root] copied into the other buffers; complete on return. */
void NcclBroadcast(int count, DLTensor* const* buffers, int root);

}  // namespace mxplug_cuda

#endif  // MXPLUG_DEVICES_CUDA_NCCL_COLLECTIVES_H_
