# The sources of the GPU plugins: the CUDA plugin builds them with nvcc, the HIP plugin
# (devices/hip) with hipcc through gpu_vendor.h. Paths are relative to this folder.
set(MXPLUG_GPU_SOURCES
  cuda_device.cc
  kernels/elementwise.cu kernels/reduce.cu kernels/init.cu kernels/shape.cu kernels/matmul.cu
  kernels/update.cu kernels/activation.cu kernels/softmax.cu kernels/loss.cu kernels/dropout.cu
  kernels/sample.cu kernels/pdf.cu kernels/index.cu kernels/convolution.cu kernels/pooling.cu
  kernels/batch_norm.cu kernels/lrn.cu kernels/upsampling.cu kernels/sort.cu kernels/normalization.cu kernels/sequence.cu kernels/pad.cu
  kernels/im2col.cu kernels/khatri_rao.cu kernels/crop.cu kernels/kl_sparse_reg.cu kernels/ctc_loss.cu
  kernels/roi_pooling.cu kernels/grid_sampling.cu kernels/rnn.cu kernels/correlation.cu kernels/image.cu)
# The CUDA plugin's alone: NVIDIA's libraries that HIP has no counterpart of on Debian 12.
set(MXPLUG_CUDA_ONLY_SOURCES kernels/cudnn_convolution.cc kernels/cudnn_layers.cc)
