// The wide-and-deep model and its planted data (wide_deep_model.hpp).
#include "troupe/apps/cli/wide_deep_model.hpp"

#include <cstring>
#include <memory>

#include "troupe/graph/ops/ops.hpp"
#include "troupe/graph/partitioned_variables.hpp"

namespace troupe::cli {
namespace {

constexpr int64_t kEvalSlice = 5000;

// Rows [begin, begin + n) of a batch tensor.
Tensor rows_of(const Tensor& t, int64_t begin, int64_t n) {
  std::vector<int64_t> dims = t.shape().dims();
  const int64_t row_bytes = static_cast<int64_t>(t.total_bytes()) / dims[0];
  dims[0] = n;
  Tensor out(t.dtype(), TensorShape(dims));
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + begin * row_bytes,
              static_cast<size_t>(n * row_bytes));
  return out;
}

// Sigmoid cross entropy of logits x for labels z, stable for any x (TensorFlow's formula):
// max(x, 0) - x z + log(1 + e^-|x|).
Output sigmoid_cross_entropy(const Scope& s, const Output& x, const Output& z) {
  return ops::Add(s, ops::Sub(s, ops::Relu(s, x), ops::Mul(s, x, z)),
                  ops::Log1p(s, ops::Exp(s, ops::Neg(s, ops::Abs(s, x)))));
}

}  // namespace

StatusOr<TrainingProblem> build_wide_deep(const Scope& scope, const PlantedCtr& data,
                                          const WideDeepOptions& options) {
  const int64_t rows = data.table_rows();
  Output ids = ops::Placeholder(scope.with_op_name("ids"), DataType::kInt64,
                                PartialShape({-1, kCtrCategorical}));
  Output dense = ops::Placeholder(scope.with_op_name("dense"), DataType::kFloat,
                                  PartialShape({-1, kCtrDense}));
  Output labels =
      ops::Placeholder(scope.with_op_name("labels"), DataType::kFloat, PartialShape({-1}));

  TROUPE_ASSIGN_OR_RETURN(
      PartitionedVariable wide_table,
      make_partitioned_variable(
          scope.sub_scope("wide"), "weights", TensorShape{rows, 1}, options.num_shards,
          [](const Scope& s, const TensorShape& shape, int) {
            return ops::Fill(s, ops::Const(s, Tensor::from_vector(shape.dims())), 0.0f);
          }));
  const int64_t seed = static_cast<int64_t>(options.seed);
  TROUPE_ASSIGN_OR_RETURN(
      PartitionedVariable deep_table,
      make_partitioned_variable(
          scope.sub_scope("deep"), "embeddings", TensorShape{rows, options.embedding_dim},
          options.num_shards, [seed](const Scope& s, const TensorShape& shape, int shard) {
            return ops::Mul(
                s,
                ops::TruncatedNormal(s, ops::Const(s, Tensor::from_vector(shape.dims())),
                                     DataType::kFloat, {.seed = seed, .seed2 = shard}),
                0.05f);
          }));

  Scope wide = scope.sub_scope("wide");
  Output wide_logits = ops::Sum(wide, embedding_lookup(wide, wide_table, ids), {1, 2});
  Scope deep = scope.sub_scope("deep");
  Output embedded = embedding_lookup(deep, deep_table, ids);
  Output x = ops::ConcatV2(
      deep,
      {ops::Reshape(deep, embedded, {int64_t{-1}, kCtrCategorical * options.embedding_dim}), dense},
      1);
  int64_t width = kCtrCategorical * options.embedding_dim + kCtrDense;
  std::vector<int64_t> units = options.deep_units;
  units.push_back(1);
  for (size_t i = 0; i < units.size(); ++i) {
    const bool last = i + 1 == units.size();
    Scope layer = deep.sub_scope(last ? "logits" : "dense_" + std::to_string(i + 1));
    Output weights =
        make_variable(layer, "kernel", glorot_uniform({width, units[i]}, options.seed + 10 + i))
            .ref;
    Output biases = make_variable(layer, "bias", zeros(DataType::kFloat, {units[i]})).ref;
    x = ops::BiasAdd(layer, ops::MatMul(layer, x, weights), biases);
    if (!last) x = ops::Relu(layer, x);
    width = units[i];
  }
  Output logits = ops::Add(scope.with_op_name("logits"), wide_logits, ops::Squeeze(deep, x, {1}));
  Output probabilities = ops::Sigmoid(scope.with_op_name("probabilities"), logits);

  TrainingProblem problem;
  problem.loss =
      ops::Mean(scope.with_op_name("loss"), sigmoid_cross_entropy(scope, logits, labels), {0});
  Output right =
      ops::Equal(scope, ops::Greater(scope, logits, 0.0f), ops::Greater(scope, labels, 0.5f));
  problem.accuracy =
      ops::Mean(scope.with_op_name("accuracy"), ops::Cast(scope, right, DataType::kFloat), {0});
  problem.training = ops::PlaceholderWithDefault(scope.with_op_name("training"), Tensor(false),
                                                 PartialShape::scalar());
  problem.global_step = get_or_create_global_step(scope);
  TROUPE_RETURN_IF_ERROR(scope.status());

  auto rng = std::make_shared<std::mt19937_64>(options.seed + 1 + options.task_index);
  auto planted = std::make_shared<PlantedCtr>(data);
  problem.next_batch = [=, batch_size = options.batch_size](FeedDict& feeds) {
    CtrBatch batch = planted->sample(batch_size, *rng);
    feeds.push_back({ids, batch.ids});
    feeds.push_back({dense, batch.dense});
    feeds.push_back({labels, batch.labels});
  };
  // One test sample for every evaluation, and the planted model's AUC on it.
  std::mt19937_64 test_rng(options.seed + 7919);
  auto test = std::make_shared<CtrBatch>(planted->sample(options.test_examples, test_rng));
  std::vector<float> test_labels(test->labels.data<float>(),
                                 test->labels.data<float>() + options.test_examples);
  TROUPE_ASSIGN_OR_RETURN(double planted_auc, area_under_roc(test_labels, test->planted));
  Output loss = problem.loss;
  problem.evaluate = [=](Session& session) -> StatusOr<EvaluationHook::Results> {
    std::vector<double> scores;
    double loss_sum = 0;
    const int64_t n = options.test_examples;
    for (int64_t begin = 0; begin < n; begin += kEvalSlice) {
      const int64_t count = std::min(kEvalSlice, n - begin);
      TROUPE_ASSIGN_OR_RETURN(std::vector<Tensor> values,
                              session.run({{ids, rows_of(test->ids, begin, count)},
                                           {dense, rows_of(test->dense, begin, count)},
                                           {labels, rows_of(test->labels, begin, count)}},
                                          {probabilities, loss}));
      const float* p = values.at(0).data<float>();
      scores.insert(scores.end(), p, p + count);
      loss_sum += values.at(1).scalar<float>() * static_cast<double>(count);
    }
    TROUPE_ASSIGN_OR_RETURN(double auc, area_under_roc(test_labels, scores));
    return EvaluationHook::Results{
        {"auc", auc}, {"loss", loss_sum / static_cast<double>(n)}, {"planted_auc", planted_auc}};
  };
  problem.describe = [n = options.test_examples](const EvaluationHook::Results& results) {
    return fmt::format(
        "test AUC {:.4f} (the planted model's {:.4f}), test loss {:.4f} ({} "
        "examples)",
        results.at(0).second, results.at(2).second, results.at(1).second, n);
  };
  return problem;
}

}  // namespace troupe::cli
