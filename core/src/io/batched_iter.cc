#include "io/batched_iter.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "mxplug/error.h"

namespace mxplug::io {

void Batching::TakeCommon(IterArgs* args) {
  prefetch_buffer = args->TakeInt("prefetch_buffer", prefetch_buffer, 1);
  num_parts = args->TakeInt("num_parts", num_parts, 1);
  part_index = args->TakeInt("part_index", part_index, 0);
  if (part_index >= num_parts)
    throw Error(args->iter() + ": part_index " + std::to_string(part_index) + " is not below num_parts " +
                std::to_string(num_parts), kMXPInvalidArgument);
}

BatchedIter::BatchedIter(const std::string& name, const Batching& batching,
                         std::unique_ptr<const ExampleSource> source, uint64_t num_examples,
                         std::vector<DataShape> data, std::vector<DataShape> label)
    : batching_(batching), source_(std::move(source)), data_shapes_(std::move(data)),
      label_shapes_(std::move(label)), prefetcher_(batching.threads, batching.prefetch_buffer) {
  const uint64_t parts = static_cast<uint64_t>(batching_.num_parts);
  const uint64_t begin = num_examples * static_cast<uint64_t>(batching_.part_index) / parts;
  const uint64_t end = num_examples * static_cast<uint64_t>(batching_.part_index + 1) / parts;
  const uint64_t batch = static_cast<uint64_t>(batching_.batch_size);
  if (end == begin || (batching_.last_batch == LastBatch::kDiscard && end - begin < batch))
    throw Error(name + ": batch_size " + std::to_string(batch) + " is larger than the " +
                std::to_string(end - begin) + " examples of part " + std::to_string(batching_.part_index) +
                " of " + std::to_string(parts) + " (" + std::to_string(num_examples) + " in all)",
                kMXPInvalidArgument);
  order_.resize(end - begin);
  std::iota(order_.begin(), order_.end(), begin);
  rng_.seed(static_cast<uint64_t>(batching_.seed));
  BeforeFirst();
}

void BatchedIter::BeforeFirst() {
  const uint64_t n = order_.size();
  const uint64_t batch = static_cast<uint64_t>(batching_.batch_size);
  prefetcher_.Start(0, nullptr);  // the running epoch's threads read order_
  if (batching_.shuffle) std::shuffle(order_.begin(), order_.end(), rng_);
  start_ = batching_.last_batch == LastBatch::kRoundBatch ? next_start_ : 0;
  next_start_ = 0;
  num_batches_ = batching_.last_batch == LastBatch::kDiscard ? n / batch : (n - start_ + batch - 1) / batch;
  taken_ = 0;
  // Batch b holds the examples at positions start_ + b * batch ... of order_, wrapping around.
  prefetcher_.Start(num_batches_, [this, n, batch](size_t b, DataBatch* out) {
    const uint64_t first = start_ + b * batch;
    out->pad = static_cast<int>(first + batch > n ? first + batch - n : 0);
    out->index.resize(batch);
    for (uint64_t i = 0; i < batch; ++i) out->index[i] = order_[(first + i) % n];
    for (const DataShape& s : data_shapes_) out->data.emplace_back(s.shape, Context::CPU(), s.dtype);
    for (const DataShape& s : label_shapes_) out->label.emplace_back(s.shape, Context::CPU(), s.dtype);
    source_->Fill(out->index, out);
  });
}

bool BatchedIter::Next() {
  if (!prefetcher_.Next(&value_)) return false;
  if (++taken_ == num_batches_ && batching_.last_batch == LastBatch::kRoundBatch)
    next_start_ = static_cast<uint64_t>(value_.pad);
  return true;
}

}  // namespace mxplug::io
