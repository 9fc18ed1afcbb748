// Sliding-window geometry shared by Convolution, Deconvolution and Pooling over NC(D)(H)W data:
// kernel, stride, dilate and pad per spatial axis, the output size each gives, and im2col /
// col2im (the unrolling that turns a convolution into one GEMM, as MXNet's own CPU path does).
#ifndef MXPLUG_PLUGINS_NN_SPATIAL_H_
#define MXPLUG_PLUGINS_NN_SPATIAL_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mxplug/plugin.hpp"

namespace mxplug_nn {

// MXNet's layout names for channels-first data; only these are computed on CPU.
enum Layout { kNCW, kNCHW, kNCDHW, kNHWC, kNDHWC, kNWC };

template <class Entry>
void AddLayoutEnum(Entry& e) {
  e.add_enum("NCW", kNCW)
      .add_enum("NCHW", kNCHW)
      .add_enum("NCDHW", kNCDHW)
      .add_enum("NWC", kNWC)
      .add_enum("NHWC", kNHWC)
      .add_enum("NDHWC", kNDHWC);
}

// Rejects channels-last layouts and a layout whose rank disagrees with the kernel's.
inline void CheckLayout(const std::optional<int>& layout, int spatial_axes) {
  if (!layout) return;
  static const char* const kNames[] = {"NCW", "NCHW", "NCDHW", "NHWC", "NDHWC", "NWC"};
  const int want = spatial_axes == 1 ? kNCW : spatial_axes == 2 ? kNCHW : kNCDHW;
  if (*layout != want)
    throw std::invalid_argument(std::string("layout ") + kNames[*layout] +
                                " is not supported with a " + std::to_string(spatial_axes) +
                                "-d kernel on CPU; expected " + kNames[want]);
}

// A parameter tuple (stride, dilate, pad) of one value per spatial axis, or empty for `fill`.
inline std::vector<int64_t> PerAxis(const mxplug::TShape& given, int axes, int64_t fill,
                                    const char* name, int64_t min) {
  if (given.ndim() == 0) return std::vector<int64_t>(axes, fill);
  if (given.ndim() != axes)
    throw std::invalid_argument(std::string(name) + " " + given.ToString() + " has " +
                                std::to_string(given.ndim()) + " values; expected " +
                                std::to_string(axes) + ", one per kernel axis");
  for (int64_t v : given)
    if (v < min)
      throw std::invalid_argument(std::string(name) + " " + given.ToString() +
                                  " must be >= " + std::to_string(min) + " on every axis");
  return std::vector<int64_t>(given.begin(), given.end());
}

// One sliding window over the spatial axes of an image ("image" is the large side: the input
// of a convolution or pooling, the output of a deconvolution). Positions are the windows.
struct Window {
  std::vector<int64_t> image, positions, kernel, stride, dilate, pad;

  int axes() const { return static_cast<int>(kernel.size()); }
  int64_t ImageSize() const { return Product(image); }
  int64_t PositionCount() const { return Product(positions); }
  int64_t KernelSize() const { return Product(kernel); }
  int64_t Dilated(int a) const { return dilate[a] * (kernel[a] - 1) + 1; }

  static int64_t Product(const std::vector<int64_t>& v) {
    int64_t n = 1;
    for (int64_t d : v) n *= d;
    return n;
  }

  // Calls f(position index, kernel index, image index or -1 where the window is in padding),
  // positions outermost so each position's window is contiguous in kernel order.
  template <class F>
  void ForEachTap(F&& f) const {
    const int n = axes();
    std::vector<int64_t> pos(n, 0), k(n, 0);
    const int64_t np = PositionCount(), nk = KernelSize();
    for (int64_t p = 0; p < np; ++p) {
      std::fill(k.begin(), k.end(), 0);
      for (int64_t t = 0; t < nk; ++t) {
        int64_t idx = 0;
        for (int a = 0; a < n; ++a) {
          const int64_t i = pos[a] * stride[a] - pad[a] + k[a] * dilate[a];
          if (i < 0 || i >= image[a]) {
            idx = -1;
            break;
          }
          idx = idx * image[a] + i;
        }
        f(p, t, idx);
        for (int a = n - 1; a >= 0 && ++k[a] == kernel[a]; --a) k[a] = 0;
      }
      for (int a = n - 1; a >= 0 && ++pos[a] == positions[a]; --a) pos[a] = 0;
    }
  }
};

// A convolution call's sizes; the window's image is the data's spatial shape (the input of a
// convolution, the output of a deconvolution).
struct ConvShape {
  Window window;
  int64_t batch, in_channels, filters, groups;
  bool bias;
  // MXNet's cuDNN controls, for a device whose library takes them (oneDNN ignores them, as
  // MXNet's MKLDNN path did): the op's cudnn_off, cudnn_tune (0 off, 1 limited_workspace,
  // 2 fastest; -1 unset: MXNET_CUDNN_AUTOTUNE_DEFAULT decides) and workspace limit in MB.
  bool cudnn_off = false;
  int cudnn_tune = -1;
  int64_t workspace_mb = 1024;
};

// A window in fixed arrays, passed by value to device kernels (and run by the CPU through the same
// functors). Taps t and positions q are numbered row-major over the kernel and the positions.
constexpr int kMaxWindowAxes = 3;
struct WindowGeometry {
  int axes = 0;
  int64_t image[kMaxWindowAxes] = {}, positions[kMaxWindowAxes] = {}, kernel[kMaxWindowAxes] = {};
  int64_t stride[kMaxWindowAxes] = {}, dilate[kMaxWindowAxes] = {}, pad[kMaxWindowAxes] = {};
  int64_t nimage = 1, npos = 1, taps = 1;  // the products of image, positions and kernel

  /*! \brief The image element that tap t of position q reads, or -1 in padding. */
  MXPLUG_XINLINE int64_t Source(int64_t t, int64_t q) const {
    int64_t k[kMaxWindowAxes], pos[kMaxWindowAxes];
    for (int a = axes - 1; a >= 0; --a) {
      k[a] = t % kernel[a], t /= kernel[a];
      pos[a] = q % positions[a], q /= positions[a];
    }
    int64_t idx = 0;
    for (int a = 0; a < axes; ++a) {
      const int64_t i = pos[a] * stride[a] - pad[a] + k[a] * dilate[a];
      if (i < 0 || i >= image[a]) return -1;
      idx = idx * image[a] + i;
    }
    return idx;
  }
  /*! \brief The position whose tap t reads image element i, or -1 (Source's inverse): solves
   * position * stride - pad + tap * dilate = coordinate on every axis. */
  MXPLUG_XINLINE int64_t Reader(int64_t i, int64_t t) const {
    int64_t q = 0, scale = 1;
    for (int a = axes - 1; a >= 0; --a) {
      const int64_t num = i % image[a] + pad[a] - (t % kernel[a]) * dilate[a];
      i /= image[a], t /= kernel[a];
      const int64_t pos = num / stride[a];
      if (num < 0 || pos * stride[a] != num || pos >= positions[a]) return -1;
      q += pos * scale, scale *= positions[a];
    }
    return q;
  }
};

inline WindowGeometry MakeWindowGeometry(const Window& w) {
  if (w.axes() > kMaxWindowAxes)
    throw std::invalid_argument("windows have up to " + std::to_string(kMaxWindowAxes) +
                                " spatial axes, not " + std::to_string(w.axes()));
  WindowGeometry g;
  g.axes = w.axes();
  for (int a = 0; a < g.axes; ++a) {
    g.image[a] = w.image[a], g.positions[a] = w.positions[a], g.kernel[a] = w.kernel[a];
    g.stride[a] = w.stride[a], g.dilate[a] = w.dilate[a], g.pad[a] = w.pad[a];
  }
  g.nimage = w.ImageSize(), g.npos = w.PositionCount(), g.taps = w.KernelSize();
  return g;
}

// For every (kernel tap t, position p), the image element at t * positions + p, or -1 in
// padding: computed once per call and shared by every image and channel.
inline std::vector<int64_t> TapMap(const Window& w) {
  const int64_t np = w.PositionCount();
  std::vector<int64_t> map(static_cast<size_t>(np * w.KernelSize()));
  w.ForEachTap([&](int64_t p, int64_t t, int64_t i) { map[t * np + p] = i; });
  return map;
}

// Unrolls `channels` images of w.ImageSize() into col[channels * kernel][positions] (zeros in
// padding), so that a convolution is weight[filters][channels * kernel] x col.
template <typename T>
void Im2Col(const Window& w, const std::vector<int64_t>& map, int64_t channels, const T* image,
            T* col) {
  const int64_t n = static_cast<int64_t>(map.size()), ni = w.ImageSize();
  for (int64_t c = 0; c < channels; ++c) {
    const T* img = image + c * ni;
    T* out = col + c * n;
    for (int64_t j = 0; j < n; ++j) out[j] = map[j] < 0 ? T(0) : img[map[j]];
  }
}

// The adjoint of Im2Col: adds every column entry back onto the image element it came from.
template <typename T>
void Col2ImAdd(const Window& w, const std::vector<int64_t>& map, int64_t channels, const T* col,
               T* image) {
  const int64_t n = static_cast<int64_t>(map.size()), ni = w.ImageSize();
  for (int64_t c = 0; c < channels; ++c) {
    T* img = image + c * ni;
    const T* in = col + c * n;
    for (int64_t j = 0; j < n; ++j)
      if (map[j] >= 0) img[map[j]] += in[j];
  }
}

}  // namespace mxplug_nn

#endif  // MXPLUG_PLUGINS_NN_SPATIAL_H_
