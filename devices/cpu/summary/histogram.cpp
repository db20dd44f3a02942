// Histogram: TensorFlow's default buckets, counting, and HistogramProto encoding.
#include "troupe/devices/cpu/summary/histogram.hpp"

#include <algorithm>
#include <cfloat>

#include "troupe/graph/core/protobuf_wire.hpp"

namespace troupe::summary {
namespace {

const std::vector<double>& default_limits() {
  static const std::vector<double> limits = [] {
    std::vector<double> positive, negative;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) {
      positive.push_back(v);
      negative.push_back(-v);
    }
    positive.push_back(DBL_MAX);
    negative.push_back(-DBL_MAX);
    std::reverse(negative.begin(), negative.end());
    std::vector<double> all = std::move(negative);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    return all;
  }();
  return limits;
}

}  // namespace

Histogram::Histogram()
    : limits_(default_limits()), buckets_(limits_.size(), 0.0), min_(DBL_MAX), max_(-DBL_MAX) {}

void Histogram::add(double value) {
  size_t b = std::upper_bound(limits_.begin(), limits_.end(), value) - limits_.begin();
  if (b == limits_.size()) b = limits_.size() - 1;  // DBL_MAX itself
  buckets_[b] += 1.0;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  num_ += 1;
  sum_ += value;
  sum_squares_ += value * value;
}

std::string Histogram::encode() const {
  std::vector<double> limits, counts;
  for (size_t i = 0; i < buckets_.size();) {
    double end = limits_[i];
    double count = buckets_[i];
    ++i;
    if (count <= 0.0) {
      // A run of empty buckets becomes one, ending where the run ends.
      while (i < buckets_.size() && buckets_[i] <= 0.0) {
        end = limits_[i];
        count = buckets_[i];
        ++i;
      }
    }
    limits.push_back(end);
    counts.push_back(count);
  }
  if (limits.empty()) {
    limits.push_back(DBL_MAX);
    counts.push_back(0.0);
  }
  std::string out;
  proto::put_double(out, 1, min_);
  proto::put_double(out, 2, max_);
  proto::put_double(out, 3, num_);
  proto::put_double(out, 4, sum_);
  proto::put_double(out, 5, sum_squares_);
  proto::put_packed_doubles(out, 6, limits);
  proto::put_packed_doubles(out, 7, counts);
  return out;
}

}  // namespace troupe::summary
