# cuDNN for the CUDA plugin, where the toolkit has it and it still declares and exports the legacy
# convolution API that devices/cuda/kernels/cudnn_convolution.cc calls (cuDNN 9 keeps it, marked
# deprecated; the graph API would replace it). Sets MXPLUG_CUDNN_CONVOLUTION, MXPLUG_CUDNN_LIBRARY
# and MXPLUG_CUDNN_INCLUDE; without it the CUDA plugin's convolutions run the project's unrolled
# kernel, and configure says so.
find_library(MXPLUG_CUDNN_LIBRARY cudnn HINTS "${CUDAToolkit_LIBRARY_DIR}")
find_path(MXPLUG_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
set(MXPLUG_CUDNN_CONVOLUTION OFF)
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
                      (void*)&cudnnSetConvolutionGroupCount, (void*)&cudnnAddTensor};
      return used[0] == nullptr;
    }]=] MXPLUG_CUDNN_HAS_LEGACY_CONVOLUTION)
  unset(CMAKE_REQUIRED_INCLUDES)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LIBRARIES)
  set(MXPLUG_CUDNN_CONVOLUTION ${MXPLUG_CUDNN_HAS_LEGACY_CONVOLUTION})
endif()
if(MXPLUG_CUDNN_CONVOLUTION)
  file(STRINGS "${MXPLUG_CUDNN_INCLUDE}/cudnn_version.h" _cudnn_version
       REGEX "#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
  string(REGEX REPLACE "[^0-9;]" "" _cudnn_version "${_cudnn_version}")
  string(REPLACE ";" "." _cudnn_version "${_cudnn_version}")
  message(STATUS "mxplug: cuDNN ${_cudnn_version} (${MXPLUG_CUDNN_LIBRARY}): Convolution and Deconvolution on its convolutions")
else()
  message(STATUS "mxplug: no cuDNN with its convolution API beside CUDA ${CUDAToolkit_VERSION}: "
                 "Convolution and Deconvolution run the project's kernels on CUDA")
endif()
