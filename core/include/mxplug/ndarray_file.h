/*!
 * \file mxplug/ndarray_file.h
 * \brief MXNet's binary NDArray file format (`mx.nd.save` / `mx.nd.load`, ".params" files),
 * byte-compatible both ways: we write what MXNet 1.x writes, and read that plus the older
 * layouts MXNet still reads. Reading checks every length against the bytes left, so a
 * truncated or corrupted file raises Error naming the file, the array and the byte offset.
 */
#ifndef MXPLUG_NDARRAY_FILE_H_
#define MXPLUG_NDARRAY_FILE_H_

#include <string>
#include <vector>

#include "mxplug/ndarray.h"

namespace mxplug {

/*! \brief The arrays of a file, with their names when it was saved from a dict. */
struct NDArrayFile {
  std::vector<NDArray> arrays;
  std::vector<std::string> names;  // empty, or one per array
};

/*! \brief The file's bytes (waits for pending writes to the arrays). */
std::string SaveNDArrays(const NDArrayFile& file);
/*!
 * \brief Arrays from bytes, on the CPU. \param source names the bytes in errors (a file name).
 * \throws Error for anything that is not a whole, well-formed file; nothing is allocated then.
 */
NDArrayFile LoadNDArrays(const std::string& bytes, const std::string& source = "buffer");

/*! \brief SaveNDArrays into a file (written whole to a temporary, then renamed). */
void SaveNDArrayFile(const std::string& path, const NDArrayFile& file);
NDArrayFile LoadNDArrayFile(const std::string& path);

}  // namespace mxplug

#endif  // MXPLUG_NDARRAY_FILE_H_
