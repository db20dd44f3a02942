// tf.train.Example's wire format, decoded for ParseExample: the features of one record.
//
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }   (entries: key = 1, value = 2)
//   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
//                           Int64List int64_list = 3; } }
//   BytesList { repeated bytes value = 1; }  FloatList { repeated float value = 1; }
//   Int64List { repeated int64 value = 1; }  (numbers packed or not, as protobuf allows)
//   SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
//   FeatureLists { map<string, FeatureList> feature_list = 1; }   FeatureList { repeated Feature
//   feature = 1; }  (a SequenceExample read as an Example gives its context)
// The field numbers are those of tensorflow/core/example/{example,feature}.proto.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/types.hpp"

namespace troupe {

struct ExampleFeature {
  DataType dtype = DataType::kInvalid;  // kString, kFloat or kInt64; kInvalid: no kind set
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  size_t size() const { return bytes.size() + floats.size() + ints.size(); }
};

// The features of a serialized Example, by key (a key given twice: the last wins, as
// protobuf's maps). DataLoss naming `what` and the offset for bytes that are not an Example.
StatusOr<std::map<std::string, ExampleFeature, std::less<>>> decode_example(
    std::string_view serialized, const std::string& what);

// The steps of feature_lists[key] of a serialized SequenceExample, each the bytes of one
// Feature message; nullopt when it has no list of that key (a key given twice: the last wins).
// DataLoss naming `what` and the offset for bytes that are not a SequenceExample.
StatusOr<std::optional<std::vector<std::string_view>>> decode_feature_list(
    std::string_view serialized, std::string_view key, const std::string& what);

}  // namespace troupe
