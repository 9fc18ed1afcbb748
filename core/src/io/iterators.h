// The core's iterators, each made from its keyword arguments (DataIter::Create's table).
#ifndef MXPLUG_IO_ITERATORS_H_
#define MXPLUG_IO_ITERATORS_H_

#include <memory>

#include "io/iter_args.h"
#include "mxplug/io.h"

namespace mxplug::io {

std::unique_ptr<DataIter> MakeMNISTIter(IterArgs& args);
std::unique_ptr<DataIter> MakeCSVIter(IterArgs& args);
std::unique_ptr<DataIter> MakeImageRecordIter(IterArgs& args);

}  // namespace mxplug::io

#endif  // MXPLUG_IO_ITERATORS_H_
