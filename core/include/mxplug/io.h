/*!
 * \file mxplug/io.h
 * \brief The core's data iterators (MXNet's MNISTIter, CSVIter, ImageRecordIter): batches of
 * NDArrays on the CPU, made ahead of the caller by background threads into a bounded queue.
 */
#ifndef MXPLUG_IO_H_
#define MXPLUG_IO_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mxplug/ndarray.h"

namespace mxplug {

/*! \brief One batch: arrays whose first axis is the batch; the last `pad` examples repeat
 * earlier ones to fill the batch; `index` holds each example's position in the data set. */
struct DataBatch {
  std::vector<NDArray> data;
  std::vector<NDArray> label;
  int pad = 0;
  std::vector<uint64_t> index;
};

/*! \brief Name, shape and dtype of one array of every batch. */
struct DataShape {
  std::string name;
  TShape shape;
  int dtype = kMXPFloat32;
};

class DataIter {
 public:
  virtual ~DataIter() = default;
  /*!
   * \brief Makes the iterator `name` from MXNet's keyword arguments given as text ("True",
   * "(3, 28, 28)", "128"). \throws Error naming the iterator and the argument for an unknown
   * iterator or argument, a bad value, or a file that cannot be read.
   */
  static std::unique_ptr<DataIter> Create(const std::string& name,
                                          const std::map<std::string, std::string>& kwargs);
  /*! \brief The iterators Create knows, sorted. */
  static std::vector<std::string> List();

  /*! \brief Goes back to the start of an epoch. */
  virtual void BeforeFirst() = 0;
  /*!
   * \brief Moves to the next batch; false at the end of the epoch. Blocks until a background
   * thread has made it. \throws Error that a background thread raised making this batch (which
   * ends the epoch; BeforeFirst starts a new one).
   */
  virtual bool Next() = 0;
  /*! \brief The batch Next moved to. */
  virtual const DataBatch& Value() const = 0;
  virtual const std::vector<DataShape>& DataShapes() const = 0;
  virtual const std::vector<DataShape>& LabelShapes() const = 0;
};

}  // namespace mxplug

#endif  // MXPLUG_IO_H_
