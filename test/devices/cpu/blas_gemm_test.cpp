// Tests for OpenBLAS as troupe links it (devices/cpu/blas_gemm.hpp): products computed on two
// threads at once, as two devices' threads compute them, are each exactly the product computed
// alone, and OpenBLAS starts no thread of its own.
#include <boost/test/unit_test.hpp>

#include <dirent.h>

#include <atomic>
#include <thread>
#include <vector>

#include "troupe/devices/cpu/blas_gemm.hpp"
#include "troupe/devices/device.hpp"

namespace troupe {
namespace {

int threads_of_this_process() {
  int count = 0;
  DIR* tasks = opendir("/proc/self/task");
  BOOST_REQUIRE(tasks != nullptr);
  while (dirent* entry = readdir(tasks))
    count += entry->d_name[0] != '.';
  closedir(tasks);
  return count;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(openblas_products)

// The serial OpenBLAS build shares unlocked buffers between callers: run this way, about one
// product in five came out wrong.
BOOST_AUTO_TEST_CASE(products_on_two_threads_at_once_are_exact) {
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);  // one panel a call
  const GemmShape shape{75, 70, 45, false, true};
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
    blas_gemm(device, shape, a[t].data(), b.data(), alone[t].data());
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> out(alone[t].size());
      for (int i = 0; i < 3000; ++i) {
        blas_gemm(device, shape, a[t].data(), b.data(), out.data());
        if (out != alone[t]) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads)
    thread.join();
  BOOST_TEST(wrong == 0);
}

BOOST_AUTO_TEST_CASE(openblas_runs_on_the_calling_thread_only) {
  int before = threads_of_this_process();
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  int with_device = threads_of_this_process();
  const GemmShape shape{512, 512, 512, false, false};
  std::vector<float> a(512 * 512, 1.0f), b(512 * 512, 0.5f), out(512 * 512);
  blas_gemm(device, shape, a.data(), b.data(), out.data());
  BOOST_TEST(out[0] == 256.0f);
  BOOST_TEST(threads_of_this_process() == with_device);
  BOOST_TEST(with_device >= before);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
