# NCCL for the CUDA plugin's collectives among the devices of a process (MXNet's 'nccl' kvstore;
# devices/cuda/nccl_collectives.cc), where the toolkit has it. Sets MXPLUG_NCCL, MXPLUG_NCCL_LIBRARY
# and MXPLUG_NCCL_INCLUDE; without it the CUDA plugin has no collectives, kvstore 'nccl' says so,
# and configure says so.
find_library(MXPLUG_NCCL_LIBRARY nccl HINTS "${CUDAToolkit_LIBRARY_DIR}")
find_path(MXPLUG_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
set(MXPLUG_NCCL OFF)
if(MXPLUG_NCCL_LIBRARY AND MXPLUG_NCCL_INCLUDE)
  set(MXPLUG_NCCL ON)
  file(STRINGS "${MXPLUG_NCCL_INCLUDE}/nccl.h" _nccl_version REGEX "#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE "[^0-9;]" "" _nccl_version "${_nccl_version}")
  string(REPLACE ";" "." _nccl_version "${_nccl_version}")
  message(STATUS "mxplug: NCCL ${_nccl_version} (${MXPLUG_NCCL_LIBRARY}): kvstore 'nccl' sums over the CUDA devices of a process")
else()
  message(STATUS "mxplug: no NCCL beside CUDA ${CUDAToolkit_VERSION}: the CUDA plugin has no collectives, and kvstore 'nccl' will say so")
endif()
