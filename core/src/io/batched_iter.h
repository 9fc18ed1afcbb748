// The part every core iterator shares: the examples of this part (num_parts / part_index,
// contiguous slices), their order (shuffled at each epoch with `seed`), the epoch's batches
// under a last-batch rule, and the Prefetcher that makes them in the background. The data itself
// comes from an ExampleSource, which fills the arrays of a batch from example ids, or, when it
// holds its examples in batch layout, hands out views (Note [Batches as views]).
#ifndef MXPLUG_IO_BATCHED_ITER_H_
#define MXPLUG_IO_BATCHED_ITER_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "io/iter_args.h"
#include "io/prefetcher.h"
#include "mxplug/io.h"

namespace mxplug::io {

enum class LastBatch {
  kDiscard,       // only full batches (MNISTIter)
  kPadFromStart,  // the last batch is filled with the first examples; it reports the pad
  kRoundBatch,    // as kPadFromStart, and the next epoch starts after the examples used to pad
};

struct Batching {
  int batch_size = 1;
  LastBatch last_batch = LastBatch::kDiscard;
  bool shuffle = false;
  int seed = 0;
  int num_parts = 1;
  int part_index = 0;
  int prefetch_buffer = 4;
  int threads = 1;
  /*! \brief Takes prefetch_buffer, num_parts and part_index (MXNet's names). */
  void TakeCommon(IterArgs* args);
  /*! \brief The record iterators' batching: batch_size, shuffle, seed, round_batch (padding from
   * the start either way) and preprocess_threads, then TakeCommon's. */
  void TakeRecordIterArgs(IterArgs* args);
};

/*! \brief Loaded data that writes examples into batches. */
class ExampleSource {
 public:
  virtual ~ExampleSource() = default;
  /*! \brief Writes the examples `ids` (global ids, one per row) into `batch`'s arrays, allocated
   * with the batch shapes. Called from several threads at once. `serial` numbers the batch in
   * the iterator's life (the epoch in the high 32 bits, the batch in the low): a source that
   * draws random numbers seeds from it, so that a run repeats whichever thread fills a batch. */
  virtual void Fill(const std::vector<uint64_t>& ids, uint64_t serial, DataBatch* batch) const = 0;
  /*! \brief Whether View can serve batches of consecutive examples. */
  virtual bool HasViews() const { return false; }
  /*! \brief The examples first .. first + n - 1 as read-only views of the source's arrays, in
   * the batch shapes `data` and `label` (whose first axis is n). */
  virtual void View(uint64_t /*first*/, const std::vector<DataShape>& /*data*/,
                    const std::vector<DataShape>& /*label*/, DataBatch* /*batch*/) const {}
};

class BatchedIter final : public DataIter {
 public:
  /*! \brief `num_examples` in the whole data set; shapes are of one batch. Starts the first
   * epoch. \throws Error naming `name` when this part has no batch. */
  BatchedIter(const std::string& name, const Batching& batching,
              std::unique_ptr<const ExampleSource> source, uint64_t num_examples,
              std::vector<DataShape> data, std::vector<DataShape> label);
  void BeforeFirst() override;
  bool Next() override;
  const DataBatch& Value() const override { return value_; }
  const std::vector<DataShape>& DataShapes() const override { return data_shapes_; }
  const std::vector<DataShape>& LabelShapes() const override { return label_shapes_; }

 private:
  /*! \brief Batch b of the epoch: a view where the source has them, else filled. */
  void MakeBatch(size_t b, DataBatch* out) const;

  const Batching batching_;
  const std::unique_ptr<const ExampleSource> source_;
  std::vector<uint64_t> order_;  // this part's example ids in this epoch's order
  std::vector<DataShape> data_shapes_, label_shapes_;
  uint64_t start_ = 0;       // position of the epoch's first example in order_
  uint64_t next_start_ = 0;  // kRoundBatch: where the next epoch starts
  uint64_t num_batches_ = 0;
  uint64_t taken_ = 0;
  uint64_t epoch_ = 0;  // epochs begun, this one included
  std::mt19937_64 rng_;
  bool in_order_;  // batches made in Next itself, without the Prefetcher (Note [Batches as views])
  DataBatch value_;
  Prefetcher prefetcher_;  // last: its threads stop before the members they read go
};

}  // namespace mxplug::io

#endif  // MXPLUG_IO_BATCHED_ITER_H_
