// CPU kernels for reordering (graph/ops/array_manipulation_ops.hpp): Transpose,
// InvertPermutation, ReverseV2, ReverseSequence, Tile. Each is one strided copy: the input read
// through a permuted, reversed or repeating view.
#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

class TransposeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> perm = int_values(ctx.input(1));
    const int64_t rank = x.rank();
    if (ctx.input(1).rank() != 1 || static_cast<int64_t>(perm.size()) != rank) {
      ctx.fail_invalid("transpose expects a vector of size {} (the input's rank), got shape {}",
                       rank, ctx.input(1).shape().to_string());
      return;
    }
    const StridedView in = dense_view(x.shape().dims());
    std::vector<bool> seen(rank, false);
    std::vector<int64_t> dims(rank);
    StridedView from{0, std::vector<int64_t>(rank)};
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t p = perm[i];
      if (p < 0 || p >= rank || seen[p]) {
        ctx.fail_invalid("[{}] is not a permutation of 0..{}", fmt::join(perm, ","), rank - 1);
        return;
      }
      seen[p] = true;
      dims[i] = x.dim(static_cast<int>(p));
      from.steps[i] = in.steps[p];
    }
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    strided_copy(x, from, out, dense_view(dims), dims);
  }
};

template <class T>
class InvertPermutationKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 1) {
      ctx.fail_invalid("x must be a vector, got shape {}", x.shape().to_string());
      return;
    }
    const int64_t n = x.num_elements();
    Tensor& y = ctx.allocate_output(0, x.shape());
    std::vector<bool> seen(n, false);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = x.data<T>()[i];
      if (p < 0 || p >= n || seen[p]) {
        ctx.fail_invalid("{} is not a permutation of 0..{}: {} is out of range or repeated",
                         fmt::join(x.flat<T>(), ","), n - 1, p);
        return;
      }
      seen[p] = true;
      y.data<T>()[p] = static_cast<T>(i);
    }
  }
};

class ReverseKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    const std::vector<int64_t>& dims = x.shape().dims();
    StridedView from = dense_view(dims);
    std::vector<bool> reversed(rank, false);
    for (int64_t a : int_values(ctx.input(1))) {
      const int64_t d = a < 0 ? a + rank : a;
      if (d < 0 || d >= rank || reversed[d]) {
        ctx.fail_invalid("axis {} is out of range [{}, {}) or named twice", a, -rank, rank);
        return;
      }
      reversed[d] = true;
      if (dims[d] > 0) from.offset += (dims[d] - 1) * from.steps[d];
      from.steps[d] = -from.steps[d];
    }
    Tensor& out = ctx.allocate_output(0, x.shape());
    strided_copy(x, from, out, dense_view(dims), dims);
  }
};

class TileKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const std::vector<int64_t> multiples = int_values(ctx.input(1));
    const int64_t rank = input.rank();
    if (ctx.input(1).rank() != 1 || static_cast<int64_t>(multiples.size()) != rank) {
      ctx.fail_invalid("multiples must be a vector of {} entries (the input's rank), got shape {}",
                       rank, ctx.input(1).shape().to_string());
      return;
    }
    std::vector<int64_t> dims(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (multiples[d] < 0) {
        ctx.fail_invalid("multiples[{}] = {} must be >= 0", d, multiples[d]);
        return;
      }
      dims[d] = input.dim(static_cast<int>(d)) * multiples[d];
    }
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    // Index space (k_0, i_0, k_1, i_1, ...): copy k of dimension d, element i of it. The input
    // ignores k; the output puts it at k * dim + i.
    const StridedView in = dense_view(input.shape().dims());
    const StridedView whole = dense_view(dims);
    std::vector<int64_t> space;
    StridedView from, to;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = input.dim(static_cast<int>(d));
      space.insert(space.end(), {multiples[d], dim});
      from.steps.insert(from.steps.end(), {0, in.steps[d]});
      to.steps.insert(to.steps.end(), {dim * whole.steps[d], whole.steps[d]});
    }
    strided_copy(input, from, out, to, space);
  }
};

// Each batch entry's first seq_lengths[b] elements along seq_dim reversed: every slice of the
// input copied to its place, as the elements of one row of the other dimensions.
class ReverseSequenceKernel : public OpKernel {
 public:
  explicit ReverseSequenceKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        seq_dim_(c.attr<int64_t>("seq_dim")),
        batch_dim_(c.attr<int64_t>("batch_dim")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& lengths_tensor = ctx.input(1);
    const int64_t rank = input.rank();
    if (seq_dim_ == batch_dim_ || seq_dim_ < 0 || seq_dim_ >= rank || batch_dim_ < 0 ||
        batch_dim_ >= rank) {
      return ctx.fail_invalid(
          "seq_dim ({}) and batch_dim ({}) must be distinct dimensions of "
          "the input (rank {})",
          seq_dim_, batch_dim_, rank);
    }
    if (lengths_tensor.rank() != 1) {
      return ctx.fail_invalid("seq_lengths must be 1-dim, not {}-dim", lengths_tensor.rank());
    }
    const std::vector<int64_t> lengths = int_values(lengths_tensor);
    const int64_t batch = input.dim(static_cast<int>(batch_dim_));
    const int64_t steps = input.dim(static_cast<int>(seq_dim_));
    if (static_cast<int64_t>(lengths.size()) != batch) {
      return ctx.fail_invalid("len(seq_lens) != input.dims({}), ({} vs. {})", batch_dim_,
                              lengths.size(), batch);
    }
    for (size_t b = 0; b < lengths.size(); ++b) {
      if (lengths[b] < 0) return ctx.fail_invalid("seq_lens({}) < 0 (it is {})", b, lengths[b]);
      if (lengths[b] > steps) {
        return ctx.fail_invalid("seq_lens({}) > input.dims({}) ({} > {})", b, seq_dim_, lengths[b],
                                steps);
      }
    }
    Tensor& out = ctx.allocate_output(0, input.shape());
    // A copy, then each reversed sequence written over it one (seq, batch) slice at a time:
    // a slice fixes those two indices and spans the other dimensions.
    const std::vector<int64_t>& dims = input.shape().dims();
    const std::vector<int64_t> strides = row_major_strides(dims);
    strided_copy(input, dense_view(dims), out, dense_view(dims), dims);
    std::vector<int64_t> slice_dims = dims;
    slice_dims[seq_dim_] = 1;
    slice_dims[batch_dim_] = 1;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < lengths[b]; ++t) {
        const int64_t from = b * strides[batch_dim_] + t * strides[seq_dim_];
        const int64_t to = b * strides[batch_dim_] + (lengths[b] - 1 - t) * strides[seq_dim_];
        strided_copy(input, {from, strides}, out, {to, strides}, slice_dims);
      }
    }
  }

 private:
  int64_t seq_dim_;
  int64_t batch_dim_;
};

}  // namespace

void register_reorder_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Transpose", kCpu, simple_kernel<TransposeKernel>());
  must_add_kernel(r, "InvertPermutation", kCpu, numeric_kernel<InvertPermutationKernel>());
  must_add_kernel(r, "ReverseV2", kCpu, simple_kernel<ReverseKernel>());
  must_add_kernel(r, "ReverseSequence", kCpu, simple_kernel<ReverseSequenceKernel>());
  must_add_kernel(r, "Tile", kCpu, simple_kernel<TileKernel>());
}

}  // namespace troupe
