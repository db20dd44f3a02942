// InferenceContext and the shared shape functions.
#include "troupe/graph/shape_inference.hpp"

namespace troupe {

InferenceContext::InferenceContext(const NodeDef& node, std::vector<DataType> input_dtypes,
                                   std::vector<PartialShape> input_shapes,
                                   std::vector<const Tensor*> input_values, int num_outputs)
    : node_(node),
      input_dtypes_(std::move(input_dtypes)),
      input_shapes_(std::move(input_shapes)),
      input_values_(std::move(input_values)),
      output_shapes_(num_outputs) {}

std::optional<std::vector<int64_t>> InferenceContext::input_as_ints(int i) const {
  const Tensor* t = input_values_[i];
  if (t == nullptr || t->rank() > 1) return std::nullopt;
  if (t->dtype() == DataType::kInt32) {
    auto v = t->flat<int32_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  if (t->dtype() == DataType::kInt64) return t->to_vector<int64_t>();
  return std::nullopt;
}

namespace shapes {

Status unchanged(InferenceContext& c) {
  c.set_output(0, c.input(0));
  return Status::OK();
}

Status unknown(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i)
    c.set_output(i, PartialShape::unknown());
  return Status::OK();
}

Status no_outputs(InferenceContext&) {
  return Status::OK();
}

Status scalar(InferenceContext& c) {
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

StatusOr<PartialShape> broadcast(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known()) return PartialShape::unknown();
  int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    int64_t da = ia >= 0 ? a.dim(ia) : 1;
    int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) {
      dims[i] = db;
    } else if (db == 1) {
      dims[i] = da;
    } else if (da < 0) {
      dims[i] = db;  // unknown vs n > 1: n if it broadcasts at all
    } else if (db < 0 || da == db) {
      dims[i] = da;
    } else {
      return errors::InvalidArgument("shapes {} and {} cannot be broadcast together", a.to_string(),
                                     b.to_string());
    }
  }
  return PartialShape(std::move(dims));
}

Status broadcast_binary(InferenceContext& c) {
  auto shape = broadcast(c.input(0), c.input(1));
  if (!shape.ok()) return c.invalid("{}", shape.status().message());
  c.set_output(0, std::move(shape).value());
  return Status::OK();
}

Status merge_binary(InferenceContext& c) {
  auto shape = c.input(0).merge(c.input(1));
  if (!shape.ok()) return c.invalid("{}", shape.status().message());
  c.set_output(0, std::move(shape).value());
  return Status::OK();
}

}  // namespace shapes
}  // namespace troupe
