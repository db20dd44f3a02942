// decode_example: Example -> Features -> map entries -> Feature, with ProtoReader.
#include "troupe/devices/cpu/example_proto.hpp"

#include <bit>
#include <cstring>

#include "troupe/graph/core/protobuf_wire.hpp"

namespace troupe {
namespace {

using proto::kFixed32;
using proto::kLengthDelimited;
using proto::kVarint;
using proto::ProtoReader;

// The values of a BytesList, FloatList or Int64List message into `feature`.
Status decode_list(std::string_view data, DataType dtype, const std::string& what,
                   ExampleFeature* feature) {
  ProtoReader r(data, what);
  while (!r.done()) {
    uint32_t field, type;
    TROUPE_RETURN_IF_ERROR(r.read_key(&field, &type));
    if (field != 1) {
      TROUPE_RETURN_IF_ERROR(r.skip(type));
      continue;
    }
    if (dtype == DataType::kString) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
      std::string_view bytes;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&bytes));
      feature->bytes.emplace_back(bytes);
    } else if (type == kLengthDelimited) {  // packed
      std::string_view packed;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&packed));
      // At most one value per byte (a varint) or per four (a float): room made once.
      if (dtype == DataType::kFloat) {
        feature->floats.reserve(feature->floats.size() + packed.size() / 4);
      } else {
        feature->ints.reserve(feature->ints.size() + packed.size());
      }
      ProtoReader p(packed, what);
      while (!p.done()) {
        uint64_t v = 0;
        if (dtype == DataType::kFloat) {
          TROUPE_RETURN_IF_ERROR(p.read_fixed(4, &v));
          feature->floats.push_back(std::bit_cast<float>(static_cast<uint32_t>(v)));
        } else {
          TROUPE_RETURN_IF_ERROR(p.read_varint(&v));
          feature->ints.push_back(static_cast<int64_t>(v));
        }
      }
    } else {
      uint64_t v = 0;
      if (dtype == DataType::kFloat) {
        TROUPE_RETURN_IF_ERROR(r.expect(field, type, kFixed32));
        TROUPE_RETURN_IF_ERROR(r.read_fixed(4, &v));
        feature->floats.push_back(std::bit_cast<float>(static_cast<uint32_t>(v)));
      } else {
        TROUPE_RETURN_IF_ERROR(r.expect(field, type, kVarint));
        TROUPE_RETURN_IF_ERROR(r.read_varint(&v));
        feature->ints.push_back(static_cast<int64_t>(v));
      }
    }
  }
  return Status::OK();
}

StatusOr<ExampleFeature> decode_feature(std::string_view data, const std::string& what) {
  ExampleFeature feature;
  ProtoReader r(data, what);
  while (!r.done()) {
    uint32_t field, type;
    TROUPE_RETURN_IF_ERROR(r.read_key(&field, &type));
    if (field < 1 || field > 3) {
      TROUPE_RETURN_IF_ERROR(r.skip(type));
      continue;
    }
    TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
    std::string_view list;
    TROUPE_RETURN_IF_ERROR(r.read_bytes(&list));
    DataType dtype = field == 1   ? DataType::kString
                     : field == 2 ? DataType::kFloat
                                  : DataType::kInt64;
    feature = ExampleFeature{};  // a oneof: the last member set wins
    feature.dtype = dtype;
    TROUPE_RETURN_IF_ERROR(decode_list(list, dtype, what, &feature));
  }
  return feature;
}

// One map entry of Features.feature.
Status decode_entry(std::string_view data, const std::string& what,
                    std::map<std::string, ExampleFeature, std::less<>>* features) {
  ProtoReader r(data, what);
  std::string key;
  ExampleFeature value;
  while (!r.done()) {
    uint32_t field, type;
    TROUPE_RETURN_IF_ERROR(r.read_key(&field, &type));
    if (field == 1 || field == 2) {
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
      std::string_view bytes;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&bytes));
      if (field == 1) {
        key = std::string(bytes);
      } else {
        TROUPE_ASSIGN_OR_RETURN(value, decode_feature(bytes, what));
      }
    } else {
      TROUPE_RETURN_IF_ERROR(r.skip(type));
    }
  }
  (*features)[key] = std::move(value);
  return Status::OK();
}

}  // namespace

StatusOr<std::map<std::string, ExampleFeature, std::less<>>> decode_example(
    std::string_view serialized, const std::string& what) {
  std::map<std::string, ExampleFeature, std::less<>> features;
  ProtoReader example(serialized, what);
  while (!example.done()) {
    uint32_t field, type;
    TROUPE_RETURN_IF_ERROR(example.read_key(&field, &type));
    if (field != 1) {
      TROUPE_RETURN_IF_ERROR(example.skip(type));
      continue;
    }
    TROUPE_RETURN_IF_ERROR(example.expect(field, type, kLengthDelimited));
    std::string_view features_bytes;
    TROUPE_RETURN_IF_ERROR(example.read_bytes(&features_bytes));
    ProtoReader r(features_bytes, what);
    while (!r.done()) {
      uint32_t f, t;
      TROUPE_RETURN_IF_ERROR(r.read_key(&f, &t));
      if (f != 1) {
        TROUPE_RETURN_IF_ERROR(r.skip(t));
        continue;
      }
      TROUPE_RETURN_IF_ERROR(r.expect(f, t, kLengthDelimited));
      std::string_view entry;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&entry));
      TROUPE_RETURN_IF_ERROR(decode_entry(entry, what, &features));
    }
  }
  return features;
}

StatusOr<std::optional<std::vector<std::string_view>>> decode_feature_list(
    std::string_view serialized, std::string_view key, const std::string& what) {
  std::optional<std::vector<std::string_view>> found;
  // Each length-delimited field `number` of `message`, in order.
  auto each = [&what](std::string_view message, uint32_t number, auto&& visit) -> Status {
    ProtoReader r(message, what);
    while (!r.done()) {
      uint32_t field, type;
      TROUPE_RETURN_IF_ERROR(r.read_key(&field, &type));
      if (field != number) {
        TROUPE_RETURN_IF_ERROR(r.skip(type));
        continue;
      }
      TROUPE_RETURN_IF_ERROR(r.expect(field, type, kLengthDelimited));
      std::string_view bytes;
      TROUPE_RETURN_IF_ERROR(r.read_bytes(&bytes));
      TROUPE_RETURN_IF_ERROR(visit(bytes));
    }
    return Status::OK();
  };
  TROUPE_RETURN_IF_ERROR(each(serialized, 2, [&](std::string_view lists) {
    return each(lists, 1, [&](std::string_view entry) -> Status {
      std::string_view entry_key;
      std::vector<std::string_view> steps;
      bool has_value = false;
      TROUPE_RETURN_IF_ERROR(each(entry, 1, [&](std::string_view k) {
        entry_key = k;
        return Status::OK();
      }));
      TROUPE_RETURN_IF_ERROR(each(entry, 2, [&](std::string_view list) {
        has_value = true;
        steps.clear();  // the last value of the entry wins
        return each(list, 1, [&](std::string_view feature) {
          steps.push_back(feature);
          return Status::OK();
        });
      }));
      if (entry_key == key) {
        found = has_value ? std::move(steps) : std::vector<std::string_view>{};
      }
      return Status::OK();
    });
  }));
  return found;
}

}  // namespace troupe
