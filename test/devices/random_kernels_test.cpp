// Tests for the random kernels: Philox against the published known-answer vectors, seeds
// (equal seeds, equal numbers; each run draws new ones; no seed, different numbers), the
// distributions' ranges and moments, the same numbers however the work is split over threads,
// and the shuffle, integer and multinomial ops.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "devices/run_graph.hpp"
#include "troupe/devices/cpu/random/philox.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/candidate_sampling_ops.hpp"

namespace troupe {
using testing::check_error;
using testing::run_graph;
using testing::run_one;

namespace {

std::vector<float> floats(const Tensor& t) {
  return t.to_vector<float>();
}

double mean_of(const std::vector<float>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double stddev_of(const std::vector<float>& v) {
  double m = mean_of(v), sum = 0;
  for (float x : v)
    sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(v.size()));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(random_kernels)

// The known-answer vectors of Random123 (kat_vectors) for Philox4x32-10.
BOOST_AUTO_TEST_CASE(philox_matches_the_known_answers) {
  random::Philox zero(0, 0);
  BOOST_TEST(
      (zero.next() == random::Philox::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  // counter all ones (key all ones): the counter is (seed2 << 64 | low) with low = ~0 after
  // skipping 2^64 - 1 blocks from 0.
  random::Philox ones(~uint64_t{0}, ~uint64_t{0});
  ones.skip(~uint64_t{0});
  BOOST_TEST(
      (ones.next() == random::Philox::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

BOOST_AUTO_TEST_CASE(equal_seeds_give_equal_numbers_and_each_run_new_ones) {
  auto draw = [](int64_t seed, int64_t seed2) {
    Scope s = Scope::new_root();
    auto r = ops::RandomUniform(s, {1000}, DataType::kFloat, {.seed = seed, .seed2 = seed2});
    Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2);
    auto first = value_or_throw(run_graph(s, {r}, {}, {}, &device)).at(0);
    return floats(first);
  };
  BOOST_TEST(draw(1, 2) == draw(1, 2));
  // On one device, each run draws new numbers, even from another graph (another run
  // signature, so another kernel) with the same node: the generator is the device's.
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 2);
  auto on_device = [&] {
    Scope s = Scope::new_root();
    auto r = ops::RandomUniform(s.with_op_name("r"), {100}, DataType::kFloat, {1, 2});
    return floats(value_or_throw(run_graph(s, {r}, {}, {}, &device)).at(0));
  };
  auto first = on_device();
  BOOST_TEST(first != on_device());
  BOOST_TEST(draw(1, 2) != draw(1, 3));
  BOOST_TEST(draw(0, 0) != draw(0, 0));  // seeded from the system
}

BOOST_AUTO_TEST_CASE(distributions_have_their_ranges_and_moments) {
  Scope s = Scope::new_root();
  auto uniform = floats(run_one(s, ops::RandomUniform(s, {100000}, DataType::kFloat, {7, 1})));
  BOOST_TEST(*std::min_element(uniform.begin(), uniform.end()) >= 0.f);
  BOOST_TEST(*std::max_element(uniform.begin(), uniform.end()) < 1.f);
  BOOST_TEST(std::abs(mean_of(uniform) - 0.5) < 0.01);
  auto normal =
      floats(run_one(s, ops::RandomStandardNormal(s, {100000}, DataType::kFloat, {7, 2})));
  BOOST_TEST(std::abs(mean_of(normal)) < 0.02);
  BOOST_TEST(std::abs(stddev_of(normal) - 1.0) < 0.02);
  auto truncated = floats(run_one(s, ops::TruncatedNormal(s, {100000}, DataType::kFloat, {7, 3})));
  BOOST_TEST(*std::max_element(truncated.begin(), truncated.end()) < 2.f);
  BOOST_TEST(*std::min_element(truncated.begin(), truncated.end()) > -2.f);
  BOOST_TEST(std::abs(stddev_of(truncated) - 0.8796) < 0.02);  // a standard normal cut at 2
  auto doubles = run_one(s, ops::RandomStandardNormal(s, {10001}, DataType::kDouble, {7, 4}));
  BOOST_TEST((doubles.dtype() == DataType::kDouble));
  BOOST_TEST(doubles.num_elements() == 10001);  // an odd count: the last group is partial
}

// Whatever the thread count, the numbers are the same: each thread skips to its groups.
BOOST_AUTO_TEST_CASE(the_numbers_do_not_depend_on_the_thread_count) {
  auto draw = [](int threads, const char* op) {
    Scope s = Scope::new_root();
    Output r = std::string(op) == "TruncatedNormal"
                   ? ops::TruncatedNormal(s, {400000}, DataType::kFloat, {11, 12})
                   : ops::RandomStandardNormal(s, {400000}, DataType::kFloat, {11, 12});
    Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", threads);
    return floats(value_or_throw(run_graph(s, {r}, {}, {}, &device)).at(0));
  };
  for (const char* op : {"RandomStandardNormal", "TruncatedNormal"}) {
    BOOST_TEST_CONTEXT(op) {
      BOOST_TEST(draw(1, op) == draw(2, op));
    }
  }
}

BOOST_AUTO_TEST_CASE(integers_shuffles_and_multinomials) {
  Scope s = Scope::new_root();
  auto ints = run_one(s, ops::RandomUniformInt(s, {10000}, int64_t{-3}, int64_t{4}, {5, 6}))
                  .to_vector<int64_t>();
  std::set<int64_t> seen(ints.begin(), ints.end());
  BOOST_TEST((seen == std::set<int64_t>{-3, -2, -1, 0, 1, 2, 3}));
  auto bad = ops::RandomUniformInt(s.with_op_name("bad"), {3}, 5, 5);
  check_error(run_graph(s, {bad}).status(), Code::kInvalidArgument, "Need minval < maxval");

  auto rows = ops::Const(s, {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}});
  auto shuffled = run_one(s, ops::RandomShuffle(s, rows, {8, 9})).to_vector<int32_t>();
  std::vector<int32_t> sorted = shuffled;
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST((sorted == std::vector<int32_t>{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  for (size_t i = 0; i < shuffled.size(); i += 2)
    BOOST_TEST(shuffled[i] == shuffled[i + 1]);  // rows move whole

  auto certain = ops::Multinomial(
      s, ops::Const(s, {{0.f, -std::numeric_limits<float>::infinity()}, {-1e9f, 0.f}}), 50);
  auto picks = run_one(s, certain);
  BOOST_TEST(picks.shape().to_string() == "[2,50]");
  auto values = picks.to_vector<int64_t>();
  BOOST_TEST(std::all_of(values.begin(), values.begin() + 50, [](int64_t v) { return v == 0; }));
  BOOST_TEST(std::all_of(values.begin() + 50, values.end(), [](int64_t v) { return v == 1; }));
  auto even = floats(run_one(
      s, ops::Cast(
             s, ops::Multinomial(s, ops::Const(s, {{0.f, 0.f}}), 20000, DataType::kInt64, {3, 4}),
             DataType::kFloat)));
  BOOST_TEST(std::abs(mean_of(even) - 0.5) < 0.02);
}

BOOST_AUTO_TEST_CASE(candidate_samplers_draw_in_range_unique_with_their_expected_counts) {
  Scope s = Scope::new_root();
  auto true_classes = ops::Const(s, {{int64_t{1}}, {int64_t{7}}});
  // Unique over the whole range: a permutation; every count then 1 - (1 - p)^tries.
  auto all = ops::UniformCandidateSampler(
      s, true_classes,
      {.num_true = 1, .num_sampled = 8, .range_max = 8, .unique = true, .random = {5, 6}});
  auto got =
      run_graph(s, {all.sampled_candidates, all.sampled_expected_count, all.true_expected_count});
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  auto sampled = (*got)[0].to_vector<int64_t>();
  std::sort(sampled.begin(), sampled.end());
  BOOST_TEST((sampled == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  auto counts = (*got)[1].to_vector<float>();
  BOOST_TEST(std::all_of(counts.begin(), counts.end(),
                         [&](float c) { return std::abs(c - counts[0]) < 1e-6; }));
  BOOST_TEST((*got)[2].shape().to_string() == "[2,1]");
  // Without unique: p * num_sampled, log-uniform.
  auto zipf = ops::LogUniformCandidateSampler(
      s, true_classes, {.num_true = 1, .num_sampled = 4, .range_max = 10, .random = {1, 2}});
  auto drawn = run_graph(
      s, {zipf.sampled_candidates, zipf.sampled_expected_count, zipf.true_expected_count});
  BOOST_REQUIRE(drawn.ok());
  auto values = (*drawn)[0].to_vector<int64_t>();
  auto expected = (*drawn)[1].to_vector<float>();
  auto p = [](double k) { return std::log((k + 2) / (k + 1)) / std::log(11.0); };
  for (size_t i = 0; i < values.size(); ++i) {
    BOOST_TEST(values[i] >= 0);
    BOOST_TEST(values[i] < 10);
    BOOST_TEST(std::abs(expected[i] - 4 * p(static_cast<double>(values[i]))) < 1e-6);
  }
  auto true_counts = (*drawn)[2].to_vector<float>();
  BOOST_TEST(std::abs(true_counts[1] - 4 * p(7)) < 1e-6);
  // Too few classes for unique draws: InvalidArgument naming the node.
  auto too_many = ops::UniformCandidateSampler(
      s.with_op_name("greedy"), true_classes,
      {.num_true = 1, .num_sampled = 9, .range_max = 8, .unique = true});
  check_error(run_graph(s, {too_many.sampled_candidates}).status(), Code::kInvalidArgument,
              "Sampler's range is too small");
  // true_classes must be [batch, num_true]: at build time.
  Scope wrong = Scope::new_root();
  ops::UniformCandidateSampler(wrong.with_op_name("wide"), ops::Const(wrong, {{int64_t{1}}}),
                               {.num_true = 2, .num_sampled = 1, .range_max = 3});
  check_error(wrong.status(), Code::kInvalidArgument, "true_classes must be a matrix");
}

BOOST_AUTO_TEST_CASE(unigram_samplers_all_candidates_and_accidental_hits) {
  Scope s = Scope::new_root();
  auto true_classes = ops::Const(s, {{int64_t{2}}});
  // Fixed weights 0 (a reserved id), 1, 3: class 0 never drawn, class 2 three times as often.
  auto fixed = ops::FixedUnigramCandidateSampler(
      s, true_classes, {.num_true = 1, .num_sampled = 4000, .range_max = 3, .random = {7, 8}},
      {.unigrams = {1.f, 9.f}, .distortion = 0.5f, .num_reserved_ids = 1});
  auto got = run_graph(s, {fixed.sampled_candidates, fixed.true_expected_count});
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  auto values = (*got)[0].to_vector<int64_t>();
  auto twos = std::count(values.begin(), values.end(), int64_t{2});
  BOOST_TEST(std::count(values.begin(), values.end(), int64_t{0}) == 0);
  BOOST_TEST(std::abs(static_cast<double>(twos) / 4000 - 0.75) < 0.03);
  BOOST_TEST(std::abs((*got)[1].to_vector<float>()[0] - 0.75f * 4000) < 1e-2);
  // A range other than the number of weights: InvalidArgument naming both.
  auto wrong = ops::FixedUnigramCandidateSampler(s.with_op_name("wrong_range"), true_classes,
                                                 {.num_true = 1, .num_sampled = 1, .range_max = 5},
                                                 {.unigrams = {1.f}});
  check_error(run_graph(s, {wrong.sampled_candidates}).status(), Code::kInvalidArgument,
              "range is 5 must be equal to weights size 1");

  // Learned: class 1 seen 998 times in the first run (after its draw) weighs 999 of 1002.
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  auto seen = ops::Placeholder(s.with_op_name("seen"), DataType::kInt64, PartialShape({-1, 1}));
  auto learned = ops::LearnedUnigramCandidateSampler(
      s, seen, {.num_true = 1, .num_sampled = 1000, .range_max = 4, .random = {3, 4}});
  Tensor many(DataType::kInt64, TensorShape{998, 1});
  std::fill_n(many.data<int64_t>(), 998, int64_t{1});
  auto first = run_graph(s, {learned.sampled_expected_count}, {{seen, many}}, {}, &device);
  BOOST_REQUIRE_MESSAGE(first.ok(), first.status().to_string());
  BOOST_TEST(std::abs((*first)[0].to_vector<float>()[0] - 250.f) < 1e-3);  // 1/4 of 1000
  auto second = run_graph(s, {learned.true_expected_count},
                          {{seen, Tensor::from_vector<int64_t>({1}, {1, 1}).value()}}, {}, &device);
  BOOST_REQUIRE_MESSAGE(second.ok(), second.status().to_string());
  BOOST_TEST(std::abs((*second)[0].to_vector<float>()[0] - 999.f / 1002 * 1000) < 1e-2);

  auto all = ops::AllCandidateSampler(s, true_classes, {.num_true = 1, .num_sampled = 3});
  auto hits = ops::ComputeAccidentalHits(s, ops::Const(s, {{int64_t{4}, int64_t{1}}}),
                                         ops::Const(s, {int64_t{1}, int64_t{4}, int64_t{1}}), 2);
  auto rest = run_graph(s, {all.sampled_candidates, all.sampled_expected_count, hits.indices,
                            hits.ids, hits.weights});
  BOOST_REQUIRE_MESSAGE(rest.ok(), rest.status().to_string());
  BOOST_TEST((*rest)[0].to_vector<int64_t>() == std::vector<int64_t>({0, 1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST((*rest)[1].to_vector<float>() == std::vector<float>({1, 1, 1}),
             boost::test_tools::per_element());
  BOOST_TEST((*rest)[2].to_vector<int32_t>() == std::vector<int32_t>({0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST((*rest)[3].to_vector<int64_t>() == std::vector<int64_t>({1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST((*rest)[4].to_vector<float>()[0] == -std::numeric_limits<float>::max());
}

BOOST_AUTO_TEST_CASE(shapes_are_known_at_build_time_and_checked) {
  Scope s = Scope::new_root();
  BOOST_TEST(ops::RandomUniform(s, {2, 3}, DataType::kFloat).shape().to_string() == "[2,3]");
  ops::RandomUniform(s.with_op_name("negative"), {2, -1}, DataType::kFloat);
  check_error(s.status(), Code::kInvalidArgument, "negative dimension");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
