// mxplug._core.imdecode / imencode / imresize: encoded images to NumPy uint8 arrays (height,
// width[, channels]) and back, for mx.recordio.pack_img/unpack_img, and the core's 8-bit resize
// for tools/im2rec. Run without the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <string>

#include "bindings.h"
#include "mxplug/error.h"
#include "mxplug/image.h"

namespace py = pybind11;

namespace mxplug::python {
namespace {

using Pixels = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

ChannelOrder Order(bool bgr) { return bgr ? ChannelOrder::kBGR : ChannelOrder::kRGB; }

// A gray image as (height, width), as OpenCV gives it; color as (height, width, channels).
py::array ToArray(Image image) {
  std::vector<py::ssize_t> shape{image.height, image.width};
  if (image.channels != 1) shape.push_back(image.channels);
  py::array_t<uint8_t> out(shape, CStrides(shape, 1));
  std::memcpy(out.mutable_data(), image.pixels.data(), image.pixels.size());
  return std::move(out);
}

Image FromArray(const Pixels& array, const char* who) {
  if (array.ndim() != 2 && array.ndim() != 3)
    throw Error(std::string(who) + ": the image has " + std::to_string(array.ndim()) +
                    " dimensions, expected (height, width) or (height, width, channels)",
                kMXPInvalidArgument);
  Image image;
  image.height = static_cast<int>(array.shape(0));
  image.width = static_cast<int>(array.shape(1));
  image.channels = array.ndim() == 3 ? static_cast<int>(array.shape(2)) : 1;
  image.pixels.assign(array.data(), array.data() + array.size());
  return image;
}

}  // namespace

void DefineImage(py::module_& m) {
  m.def(
      "imdecode",
      [](const py::bytes& encoded, int channels, bool bgr) {
        const std::string_view bytes = encoded;
        Image image;
        {
          py::gil_scoped_release release;
          image = DecodeImage(bytes.data(), bytes.size(), channels, Order(bgr));
        }
        return ToArray(std::move(image));
      },
      py::arg("buf"), py::arg("channels"), py::arg("bgr"),
      "Decodes a JPEG or PNG (channels 0: as stored).");
  m.def(
      "imencode",
      [](const Pixels& array, const std::string& format, int quality, bool bgr) {
        const Image image = FromArray(array, "imencode");
        std::string bytes;
        {
          py::gil_scoped_release release;
          bytes = EncodeImage(image, format, quality, Order(bgr));
        }
        return py::bytes(bytes);
      },
      py::arg("img"), py::arg("format"), py::arg("quality"), py::arg("bgr"),
      "Encodes as '.jpg' or '.png'.");
  m.def(
      "imresize",
      [](const Pixels& array, int height, int width, int interp) {
        const Image image = FromArray(array, "imresize");
        Image out;
        {
          py::gil_scoped_release release;
          out = ResizeImage(image, height, width, static_cast<Interpolation>(interp));
        }
        py::array result = ToArray(std::move(out));
        return array.ndim() == 3 ? result.reshape({height, width, static_cast<int>(array.shape(2))})
                                 : result;
      },
      py::arg("img"), py::arg("height"), py::arg("width"), py::arg("interp") = 1,
      "Resize with OpenCV's interpolation `interp` (0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 "
      "Lanczos).");
}

}  // namespace mxplug::python
