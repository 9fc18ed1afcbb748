# cuDNN for the CUDA plugin, where the toolkit has it and it still declares and exports the legacy
# API that devices/cuda/kernels/cudnn_convolution.cc and cudnn_layers.cc call: convolutions, batch
# normalization, activations, softmax, LRN (cuDNN 9 keeps it, marking the convolutions, batch
# normalization and activations deprecated; the graph API would replace them). Sets
# MXPLUG_CUDNN_LEGACY_API, MXPLUG_CUDNN_LIBRARY and MXPLUG_CUDNN_INCLUDE; without it the CUDA
# plugin runs the project's own kernels for those ops, and configure says so.
find_library(MXPLUG_CUDNN_LIBRARY cudnn HINTS "${CUDAToolkit_LIBRARY_DIR}")
find_path(MXPLUG_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
set(MXPLUG_CUDNN_LEGACY_API OFF)
if(MXPLUG_CUDNN_LIBRARY AND MXPLUG_CUDNN_INCLUDE)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_INCLUDES "${MXPLUG_CUDNN_INCLUDE}" ${CUDAToolkit_INCLUDE_DIRS})
  set(CMAKE_REQUIRED_FLAGS "-Wno-deprecated-declarations")
  set(CMAKE_REQUIRED_LIBRARIES "${MXPLUG_CUDNN_LIBRARY}")  # declared and exported
  check_cxx_source_compiles([=[
    #include <cudnn.h>
    int main() {
      void* used[] = {(void*)&cudnnConvolutionForward, (void*)&cudnnConvolutionBackwardData,
                      (void*)&cudnnConvolutionBackwardFilter, (void*)&cudnnConvolutionBackwardBias,
                      (void*)&cudnnFindConvolutionForwardAlgorithm,
                      (void*)&cudnnGetConvolutionForwardAlgorithm_v7,
                      (void*)&cudnnSetConvolutionGroupCount, (void*)&cudnnAddTensor,
                      (void*)&cudnnBatchNormalizationForwardTraining,
                      (void*)&cudnnBatchNormalizationForwardInference,
                      (void*)&cudnnBatchNormalizationBackward, (void*)&cudnnDeriveBNTensorDescriptor,
                      (void*)&cudnnActivationForward, (void*)&cudnnActivationBackward,
                      (void*)&cudnnSoftmaxForward, (void*)&cudnnSoftmaxBackward,
                      (void*)&cudnnLRNCrossChannelBackward};
      return used[0] == nullptr;
    }]=] MXPLUG_CUDNN_HAS_LEGACY_API)
  unset(CMAKE_REQUIRED_INCLUDES)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LIBRARIES)
  set(MXPLUG_CUDNN_LEGACY_API ${MXPLUG_CUDNN_HAS_LEGACY_API})
endif()
if(MXPLUG_CUDNN_LEGACY_API)
  file(STRINGS "${MXPLUG_CUDNN_INCLUDE}/cudnn_version.h" _cudnn_version
       REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
  string(REGEX REPLACE "[^0-9;]" "" _cudnn_version "${_cudnn_version}")
  string(REPLACE ";" "." _cudnn_version "${_cudnn_version}")
  message(STATUS "mxplug: cuDNN ${_cudnn_version} (${MXPLUG_CUDNN_LIBRARY}): Convolution, Deconvolution, BatchNorm, relu, softmax and LRN's backward on cuDNN")
else()
  message(STATUS "mxplug: no cuDNN with its legacy API beside CUDA ${CUDAToolkit_VERSION}: "
                 "Convolution, Deconvolution, BatchNorm, Activation, softmax and LRN run the "
                 "project's kernels on CUDA")
endif()
