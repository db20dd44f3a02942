// Histogram: TensorFlow's summary histogram, the buckets TensorBoard draws.
//
// Bucket limits are TensorFlow's defaults: from 1e-12, each 1.1 times the one before, up to
// 1e20, mirrored for negative values, with 0 and +-DBL_MAX; a value counts in the first bucket
// whose limit is above it. encode() writes a tensorflow.HistogramProto as TensorFlow does:
//   { double min = 1; double max = 2; double num = 3; double sum = 4; double sum_squares = 5;
//     repeated double bucket_limit = 6 [packed]; repeated double bucket = 7 [packed]; }
// runs of empty buckets collapsed into one (the last limit of the run), and at least one
// bucket. Not thread-safe.
#pragma once

#include <string>
#include <vector>

namespace troupe::summary {

class Histogram {
 public:
  Histogram();
  void add(double value);
  std::string encode() const;

  double count() const { return num_; }

 private:
  const std::vector<double>& limits_;
  std::vector<double> buckets_;
  double min_, max_, num_ = 0, sum_ = 0, sum_squares_ = 0;
};

}  // namespace troupe::summary
