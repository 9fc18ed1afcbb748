// The parts of mxplug._core, each defined in its own file and called from module.cc.
#ifndef MXPLUG_PYTHON_BINDINGS_H_
#define MXPLUG_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "mxplug/ndarray.h"
#include "mxplug/sdk/parameter.hpp"

namespace mxplug::python {

// Conversions shared by the bindings (ndarray_bindings.cc), as MXNet's frontend passes values.
/*! \brief A shape as a Python tuple (unknown: the empty tuple). */
pybind11::tuple ShapeTuple(const TShape& s);
/*! \brief An int or a sequence of ints as a shape. */
TShape ToShape(const pybind11::handle& obj);
/*! \brief The MXPDType flag of a NumPy dtype name. */
int DTypeFlagOf(const std::string& name);
/*! \brief str(value) as MXNet's frontend makes it: True/False, "(2, 3)", dtype names. */
std::string KwargString(const std::string& key, const pybind11::handle& value);
KwArgs ToKwArgs(const pybind11::dict& kwargs);
/*! \brief A (DLPack device type, index) pair as a Context. */
Context ToContext(const pybind11::handle& ctx);
/*!
 * \brief C-order strides in bytes, for making NumPy arrays. Always given explicitly: Debian's
 * pybind11 (2.10) would compute them from the item size it reads out of the dtype's C struct,
 * whose layout NumPy 2 changed (a wheel's virtual environment gets NumPy 2 from PyPI), and the
 * array would repeat its first element.
 */
std::vector<pybind11::ssize_t> CStrides(const std::vector<pybind11::ssize_t>& shape,
                                        size_t itemsize);

/*! \brief NDArray, invoke, empty, waitall, random_seed, save/load (ndarray_bindings.cc). */
void DefineNDArray(pybind11::module_& m);
/*! \brief DLPack export methods on NDArray and from_dlpack (dlpack_bindings.cc). */
void DefineDLPack(pybind11::module_& m, pybind11::class_<NDArray>& cls);
/*! \brief Symbol and Executor (symbol_bindings.cc). */
void DefineSymbol(pybind11::module_& m);
/*! \brief KVStore (kvstore_bindings.cc). */
void DefineKVStore(pybind11::module_& m);
/*! \brief DataIter and list_data_iters (io_bindings.cc). */
void DefineDataIter(pybind11::module_& m);
/*! \brief RecordWriter and RecordReader (recordio_bindings.cc). */
void DefineRecordIO(pybind11::module_& m);
/*! \brief imdecode, imencode, imresize (image_bindings.cc). */
void DefineImage(pybind11::module_& m);
/*! \brief AtomicFile and write_file_atomically (file_bindings.cc). */
void DefineFiles(pybind11::module_& m);

}  // namespace mxplug::python

#endif  // MXPLUG_PYTHON_BINDINGS_H_
