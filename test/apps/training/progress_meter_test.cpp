// ProgressMeter: elapsed time, rate and ETA from step reports, and their formats.
#include "troupe/apps/training/progress_meter.hpp"

#include <boost/test/unit_test.hpp>

namespace troupe {
namespace {

using Clock = ProgressMeter::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

BOOST_AUTO_TEST_SUITE(progress_meter)

BOOST_AUTO_TEST_CASE(rate_and_eta_count_from_the_first_report) {
  Clock::time_point start{};
  ProgressMeter meter(start);
  // A job restored at step 4000: its first report is the baseline, not step 0.
  meter.update(4000, start + seconds(2));
  BOOST_TEST(!meter.steps_per_second().has_value());
  BOOST_TEST(meter.summary(10000) == "[0:02<?, ? steps/s]");
  meter.update(4500, start + seconds(12));
  BOOST_TEST(*meter.steps_per_second() == 50.0);
  // 5500 steps left at 50 steps/s: 110 s.
  BOOST_TEST(meter.summary(10000) == "[0:12<1:50, 50.0 steps/s]");
  BOOST_TEST(meter.summary(10000, 128) == "[0:12<1:50, 50.0 steps/s, 6.40k examples/s]");
  // A report below the baseline (a chief restarted from an older checkpoint) starts over.
  meter.update(3000, start + seconds(20));
  BOOST_TEST(!meter.steps_per_second().has_value());
  meter.update(3100, start + milliseconds(20500));
  BOOST_TEST(*meter.steps_per_second() == 200.0);
  BOOST_TEST(meter.summary(3100) == "[0:20<0:00, 200 steps/s]");
}

BOOST_AUTO_TEST_CASE(durations_read_as_a_clock) {
  BOOST_TEST(format_duration(seconds(0)) == "0:00");
  BOOST_TEST(format_duration(seconds(7)) == "0:07");
  BOOST_TEST(format_duration(seconds(754)) == "12:34");
  BOOST_TEST(format_duration(seconds(3723)) == "1:02:03");
  BOOST_TEST(format_duration(seconds(-5)) == "0:00");
}

BOOST_AUTO_TEST_CASE(rates_have_three_significant_digits) {
  BOOST_TEST(format_rate(0.5123) == "0.51");
  BOOST_TEST(format_rate(37.54) == "37.5");
  BOOST_TEST(format_rate(480) == "480");
  BOOST_TEST(format_rate(999.4) == "999");
  BOOST_TEST(format_rate(999.6) == "1.00k");
  BOOST_TEST(format_rate(4800) == "4.80k");
  BOOST_TEST(format_rate(12.34e6) == "12.3M");
  BOOST_TEST(format_rate(2.5e9) == "2.50G");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace troupe
