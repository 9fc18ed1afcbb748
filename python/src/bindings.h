// The parts of mxplug._core, each defined in its own file and called from module.cc.
#ifndef MXPLUG_PYTHON_BINDINGS_H_
#define MXPLUG_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace mxplug::python {

/*! \brief NDArray, invoke, empty, waitall, random_seed (ndarray_bindings.cc). */
void DefineNDArray(pybind11::module_& m);

}  // namespace mxplug::python

#endif  // MXPLUG_PYTHON_BINDINGS_H_
