/*!
 * \file mxplug/sdk/xinline.hpp
 * \brief MXPLUG_XINLINE: marks a function that CPU and device kernels both call (an op's
 * elementwise math, written once in its definition header): host and device code under nvcc and
 * hipcc, a plain inline function elsewhere.
 */
#ifndef MXPLUG_SDK_XINLINE_HPP_
#define MXPLUG_SDK_XINLINE_HPP_

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MXPLUG_XINLINE __host__ __device__ inline
#else
#define MXPLUG_XINLINE inline
#endif

#endif  // MXPLUG_SDK_XINLINE_HPP_
