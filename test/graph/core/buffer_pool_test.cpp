// Tests for BufferPool: large tensor buffers are reused, within the byte limit.
#include <boost/test/unit_test.hpp>

#include "troupe/graph/core/buffer_pool.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {
namespace {

constexpr size_t MiB = size_t{1} << 20;

// Sets the pool's limit for one test and puts the old one back after it.
struct PoolLimit {
  explicit PoolLimit(size_t bytes) : old(BufferPool::instance().limit()) {
    BufferPool::instance().set_limit(0);  // start empty
    BufferPool::instance().set_limit(bytes);
  }
  ~PoolLimit() { BufferPool::instance().set_limit(old); }
  size_t old;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(buffer_pool)

BOOST_AUTO_TEST_CASE(a_freed_large_tensor_buffer_serves_the_next_of_its_size) {
  PoolLimit limit(64 * MiB);
  auto& pool = BufferPool::instance();
  const void* first;
  {
    Tensor a(DataType::kFloat, TensorShape{int64_t(4 * MiB / 4)});
    first = a.raw_data();
    BOOST_TEST(reinterpret_cast<uintptr_t>(first) % TensorBuffer::kAlignment == 0);
  }
  BOOST_TEST(pool.stats().cached_bytes == 4 * MiB);
  auto reused = pool.stats().reused;
  Tensor b(DataType::kInt32, TensorShape{2, int64_t(2 * MiB / 4)});  // same bytes, other shape
  BOOST_TEST(b.raw_data() == first);
  BOOST_TEST(pool.stats().reused == reused + 1);
  BOOST_TEST(pool.stats().cached_bytes == 0);
  Tensor c(DataType::kFloat, TensorShape{int64_t(8 * MiB / 4)});  // another size: fresh memory
  BOOST_TEST(c.raw_data() != first);
}

BOOST_AUTO_TEST_CASE(small_tensors_do_not_use_the_pool) {
  PoolLimit limit(64 * MiB);
  { Tensor small(DataType::kFloat, TensorShape{int64_t(MiB / 4 - 1)}); }
  BOOST_TEST(BufferPool::instance().stats().cached_bytes == 0);
}

BOOST_AUTO_TEST_CASE(the_limit_drops_the_oldest_buffers) {
  PoolLimit limit(10 * MiB);
  auto& pool = BufferPool::instance();
  void* a = pool.acquire(4 * MiB);
  void* b = pool.acquire(4 * MiB);
  void* c = pool.acquire(4 * MiB);
  pool.release(a, 4 * MiB);
  pool.release(b, 4 * MiB);
  pool.release(c, 4 * MiB);  // 12 MiB > 10: `a` goes back to the kernel
  BOOST_TEST(pool.stats().cached_bytes == 8 * MiB);
  BOOST_TEST(pool.acquire(4 * MiB) == c);  // newest first
  BOOST_TEST(pool.acquire(4 * MiB) == b);
  pool.release(b, 4 * MiB);
  pool.release(c, 4 * MiB);
  pool.set_limit(0);  // pooling off: everything cached is unmapped, nothing kept
  BOOST_TEST(pool.stats().cached_bytes == 0);
  void* d = pool.acquire(2 * MiB);
  pool.release(d, 2 * MiB);
  BOOST_TEST(pool.stats().cached_bytes == 0);
}

BOOST_AUTO_TEST_CASE(capacities_round_up_coarsely) {
  BOOST_TEST(BufferPool::capacity_for(MiB) == MiB);
  BOOST_TEST(BufferPool::capacity_for(MiB + 1) == MiB + 64 * 1024);
  BOOST_TEST(BufferPool::capacity_for(33 * MiB) == 34 * MiB);  // whole huge pages from 32 MiB
  BOOST_TEST(BufferPool::capacity_for(64 * MiB) == 64 * MiB);
}

// Memory the kernel will not map is nullptr from the pool, not an exception; a tensor that big
// then comes from the heap, where operator new reports exhaustion as std::bad_alloc.
BOOST_AUTO_TEST_CASE(memory_the_kernel_will_not_map_is_null) {
  BufferPool& pool = BufferPool::instance();
  BOOST_TEST(pool.acquire(size_t{1} << 60) == nullptr);
  BOOST_CHECK_THROW(TensorBuffer::allocate(size_t{1} << 60), std::bad_alloc);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
