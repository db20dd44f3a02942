// Tests for OpenBLAS as troupe links it (devices/cpu/blas_gemm.hpp): products computed on two
// threads at once, as two kernels or two devices compute them, are each exactly the product
// computed alone, with OpenBLAS's own threads in use; and devices reserve OpenBLAS's threads.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "troupe/devices/cpu/blas_gemm.hpp"
#include "troupe/devices/device.hpp"

namespace troupe {

BOOST_AUTO_TEST_SUITE(openblas_products)

// The serial OpenBLAS build shares unlocked buffers between callers: run this way, about one
// product in five came out wrong. Large enough a product that OpenBLAS splits it across its
// threads (over 262,144 multiply-adds).
BOOST_AUTO_TEST_CASE(products_on_two_threads_at_once_are_exact) {
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2);
  BOOST_TEST(blas_threads_in_use() >= 2);
  const GemmShape shape{150, 70, 90, false, true};
  std::vector<float> b(static_cast<size_t>(shape.inner * shape.cols));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<float>((i * 37 + 2) % 19) / 8 - 1;
  std::vector<float> a[2];
  std::vector<float> alone[2];
  for (int t = 0; t < 2; ++t) {
    a[t].resize(static_cast<size_t>(shape.rows * shape.inner));
    for (size_t i = 0; i < a[t].size(); ++i)
      a[t][i] = static_cast<float>((i * 37 + t) % 19) / 8 - 1;
    alone[t].resize(static_cast<size_t>(shape.rows * shape.cols));
    blas_gemm(shape, a[t].data(), b.data(), alone[t].data());
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> out(alone[t].size());
      for (int i = 0; i < 2000; ++i) {
        blas_gemm(shape, a[t].data(), b.data(), out.data());
        if (out != alone[t]) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads)
    thread.join();
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(a_device_reserves_its_threads_and_a_smaller_one_keeps_them) {
  const int before = blas_threads_in_use();
  Device wide("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", before + 2);
  BOOST_TEST(blas_threads_in_use() == before + 2);
  Device narrow("/job:localhost/replica:0/task:0/device:CPU:1", "CPU", 1);
  BOOST_TEST(blas_threads_in_use() == before + 2);
  const GemmShape shape{256, 256, 256, false, false};
  std::vector<float> a(256 * 256, 1.0f), b(256 * 256, 0.5f), out(256 * 256);
  blas_gemm(shape, a.data(), b.data(), out.data());
  BOOST_TEST(out[0] == 128.0f);
  BOOST_TEST(out.back() == 128.0f);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
