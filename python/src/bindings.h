// The parts of mxplug._core, each defined in its own file and called from module.cc.
#ifndef MXPLUG_PYTHON_BINDINGS_H_
#define MXPLUG_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

#include "mxplug/ndarray.h"

namespace mxplug::python {

/*! \brief NDArray, invoke, empty, waitall, random_seed, save/load (ndarray_bindings.cc). */
void DefineNDArray(pybind11::module_& m);
/*! \brief DLPack export methods on NDArray and from_dlpack (dlpack_bindings.cc). */
void DefineDLPack(pybind11::module_& m, pybind11::class_<NDArray>& cls);

}  // namespace mxplug::python

#endif  // MXPLUG_PYTHON_BINDINGS_H_
