// The C++ builder API for every built-in op: include this to build graphs.
//
//   Scope root = Scope::new_root();
//   auto a = ops::Const(root, {{2.f, 1.f}});
//   auto b = ops::Const(root, {{1.f}, {2.f}});
//   auto product = ops::MatMul(root, a, b);   // [[4]] once run
#pragma once

#include "troupe/graph/ops/array_manipulation_ops.hpp"
#include "troupe/graph/ops/array_ops.hpp"
#include "troupe/graph/ops/beam_search_ops.hpp"
#include "troupe/graph/ops/control_flow_ops.hpp"
#include "troupe/graph/ops/conv_ops.hpp"
#include "troupe/graph/ops/data_flow_ops.hpp"
#include "troupe/graph/ops/dataset_ops.hpp"
#include "troupe/graph/ops/grad_ops.hpp"
#include "troupe/graph/ops/io_ops.hpp"
#include "troupe/graph/ops/math_ops.hpp"
#include "troupe/graph/ops/nn_ops.hpp"
#include "troupe/graph/ops/parsing_ops.hpp"
#include "troupe/graph/ops/random_ops.hpp"
#include "troupe/graph/ops/scatter_nd_ops.hpp"
#include "troupe/graph/ops/segment_ops.hpp"
#include "troupe/graph/ops/selection_ops.hpp"
#include "troupe/graph/ops/sparse_ops.hpp"
#include "troupe/graph/ops/state_ops.hpp"
#include "troupe/graph/ops/summary_ops.hpp"
#include "troupe/graph/ops/training_ops.hpp"
