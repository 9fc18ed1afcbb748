// The core's iterators, each made from its keyword arguments (DataIter::Create's table).
#ifndef MXPLUG_IO_ITERATORS_H_
#define MXPLUG_IO_ITERATORS_H_

#include <memory>

#include "io/iter_args.h"
#include "mxplug/io.h"

namespace mxplug::io {

std::unique_ptr<DataIter> MakeMNISTIter(IterArgs& args);
std::unique_ptr<DataIter> MakeCSVIter(IterArgs& args);
// dtype (float32, uint8 or int8) defaults to default_dtype: MXNet's ImageRecordUInt8Iter is
// ImageRecordIter with uint8.
std::unique_ptr<DataIter> MakeImageRecordIter(IterArgs& args, int default_dtype);
std::unique_ptr<DataIter> MakeImageDetRecordIter(IterArgs& args);

}  // namespace mxplug::io

#endif  // MXPLUG_IO_ITERATORS_H_
