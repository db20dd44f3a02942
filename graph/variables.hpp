// Model variables, as TensorFlow's tf.Variable: a Variable node with its initializer,
// recorded in the graph so optimizers, initialisation and checkpoints find them.
//
//   auto w = make_variable(root, "layer1/weights", glorot_uniform({784, 256}, /*seed=*/1));
//   auto init = global_variables_initializer(root);
//   auto step = get_or_create_global_step(root);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "troupe/graph/node_builder.hpp"

namespace troupe {

struct ModelVariable {
  Output ref;             // the Variable node's output: a reference to the variable
  Operation initializer;  // assigns the initial value
  bool valid() const { return ref.valid() && initializer.valid(); }
};

// Which collection a variable belongs to: the model's (saved in checkpoints, initialised once
// by the chief) or each task's own (TensorFlow's local variables: counters, metrics).
enum class VariableCollection { kGlobal, kLocal };

// A variable named `name` (in `scope`'s name scope), of the dtype and shape of
// `initial_value`, whose shape must be fully known; its initializer runs with the variable.
// Without `validate_shape` (TensorFlow's Variable(validate_shape=False)) the variable's shape
// is unknown to the graph, its initial value may be of any shape, and an assignment may change
// it. Errors go to the scope, as for every builder call.
ModelVariable make_variable(const Scope& scope, const std::string& name, const Input& initial_value,
                            bool trainable = true,
                            VariableCollection collection = VariableCollection::kGlobal,
                            bool validate_shape = true);

// Builds the initial value of a variable in the scope it is given.
using InitialValueFn = std::function<Output(const Scope& scope)>;

// A variable named `name` of `shape` and `dtype`, whose initial value `initial_value` builds
// in `scope` on the variable's device (Scope::on_device_of: whatever device functions the
// scope has; the function names its ops, e.g. with a sub_scope), as TensorFlow's get_variable
// builds an initializer's ops beside the variable: a ps task draws a table's random initial
// value itself, where a value built beside the caller would be computed on the worker and
// sent whole. InvalidArgument in the scope, naming the variable, when the function builds no
// output or one not of `dtype` and `shape`.
ModelVariable make_variable(const Scope& scope, const std::string& name, const TensorShape& shape,
                            DataType dtype, const InitialValueFn& initial_value,
                            bool trainable = true,
                            VariableCollection collection = VariableCollection::kGlobal);

// The recorded variables (the global ones, the local ones, or the trainable ones of either),
// in creation order.
std::vector<VariableRecord> global_variables(const Graph& graph);
std::vector<VariableRecord> local_variables(const Graph& graph);
std::vector<VariableRecord> trainable_variables(const Graph& graph);
// The variable (and initializer) recorded for Variable node `name`.
StatusOr<ModelVariable> find_variable(const Graph& graph, const std::string& name);

// tf.train.init_from_checkpoint for one variable: its initializer becomes an Assign of the
// tensor `tensor_name` of the checkpoint `checkpoint` (a prefix Saver::save returned, or its
// .npz), or of the slice `slice_spec` of it (graph/formats/tensor_slice.hpp: a shard of a
// partitioned variable), read by a RestoreV2 node (graph/ops/io_ops.hpp) when the initializer
// runs. The read runs on the CPU of the variable's task, which must be able to read the file
// (one machine, or a file system the tasks share, as TensorFlow's). The nodes are built in
// scope's name scope ("checkpoint_initializer/..."); global_variables_initializer() built
// afterwards runs the new initializer. Returns the variable with it. NotFound if `variable`
// is not a recorded variable; errors of the builder calls otherwise (also in scope.status()).
// A missing file or tensor, or one of another dtype or shape, fails the initializer's run.
StatusOr<ModelVariable> initialize_from_checkpoint(const Scope& scope, const std::string& variable,
                                                   const std::string& checkpoint,
                                                   const std::string& tensor_name,
                                                   const std::string& slice_spec = "");

// A NoOp that runs every global (local) variable's initializer.
Operation global_variables_initializer(const Scope& scope);
Operation local_variables_initializer(const Scope& scope);

// The int64 scalar variable "global_step" (0 at first), created on first call, not trainable;
// later calls return it, whatever name scope they use. It is placed like any variable built in
// `scope` (a ps task under replica_device_setter).
ModelVariable get_or_create_global_step(const Scope& scope);

// Initial values, computed here with a seeded generator so every replica builds the same ones.
// float32, for [fan_in, fan_out], or a convolution's filter [height, width, in, out].
Tensor glorot_uniform(const TensorShape& shape, uint64_t seed);
Tensor zeros(DataType dtype, const TensorShape& shape);

}  // namespace troupe
