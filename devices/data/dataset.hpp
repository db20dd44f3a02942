// Datasets and their iterators: tf.data's model, on the device that runs the dataset ops.
//
// A DatasetBase is an immutable description of a sequence of elements (each a list of
// tensors of output_types()); dataset ops make one per run and pass it on as a reference.
// make_iterator() starts a walk over it: an IteratorBase is a cursor with state (a file
// position, a shuffle buffer) that yields elements in order until the end. Iterators keep the
// dataset they walk alive. One thread at a time uses an iterator (IteratorResource locks).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "troupe/devices/resource.hpp"
#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe::data {

using Element = std::vector<Tensor>;

class IteratorBase {
 public:
  virtual ~IteratorBase() = default;
  // The next element into *out; *end = true (out unspecified) after the last. Once at the end,
  // an iterator stays there. Errors name the dataset and what was wrong (file, record).
  virtual Status get_next(Element* out, bool* end) = 0;
};

class DatasetBase : public Resource, public std::enable_shared_from_this<DatasetBase> {
 public:
  // `node`: the op that made it, for errors; `types`: each element's component dtypes.
  DatasetBase(std::string node, std::vector<DataType> types)
      : node_(std::move(node)), types_(std::move(types)) {}

  const std::vector<DataType>& output_types() const { return types_; }
  const std::string& node() const { return node_; }
  std::string debug_name() const override { return "dataset '" + node_ + "'"; }

  virtual std::unique_ptr<IteratorBase> make_iterator() const = 0;

 protected:
  // This dataset, shared, as its iterators hold it.
  template <class T>
  std::shared_ptr<const T> self() const {
    return std::static_pointer_cast<const T>(shared_from_this());
  }

 private:
  std::string node_;
  std::vector<DataType> types_;
};

// "[float32, int64]": how errors show an element's dtypes.
std::string types_string(const std::vector<DataType>& types);

}  // namespace troupe::data
