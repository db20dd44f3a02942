// Tests for TupleQueue (devices/tuple_queue.hpp) on its own: enqueues and dequeues of many,
// waiting and closing, RandomShuffleQueue's order and min_after_dequeue.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <optional>

#include "troupe/devices/tuple_queue.hpp"

namespace troupe {
namespace {

TupleQueue::Tuple one(int32_t v) {
  return {Tensor(v)};
}

std::vector<TupleQueue::Tuple> many(int32_t from, int32_t to) {
  std::vector<TupleQueue::Tuple> out;
  for (int32_t v = from; v < to; ++v)
    out.push_back(one(v));
  return out;
}

// A dequeue's outcome, once it has one.
struct Taken {
  std::optional<Status> status;
  std::vector<int32_t> values;
  auto callback() {
    return [this](const Status& s, std::vector<TupleQueue::Tuple> tuples) {
      status = s;
      for (const auto& t : tuples)
        values.push_back(t[0].scalar<int32_t>());
    };
  }
};

TupleQueue fifo(int64_t capacity = -1) {
  return TupleQueue("q", {DataType::kInt32}, {PartialShape::scalar()}, capacity);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tuple_queue)

BOOST_AUTO_TEST_CASE(a_dequeue_of_many_waits_for_all_of_them_in_order) {
  TupleQueue q = fifo();
  Taken taken;
  BOOST_TEST(q.dequeue(3, false, taken.callback()) != TupleQueue::kServed);
  bool enqueued = false;
  q.enqueue(many(0, 2), [&](const Status& s) { enqueued = s.ok(); });
  BOOST_TEST(enqueued);
  BOOST_TEST(!taken.status.has_value());  // two of three
  q.enqueue(many(2, 4), [](const Status&) {});
  BOOST_REQUIRE(taken.status.has_value());
  BOOST_TEST(taken.status->ok());
  BOOST_TEST((taken.values == std::vector<int32_t>{0, 1, 2}));
  BOOST_TEST(q.size() == 1u);
}

BOOST_AUTO_TEST_CASE(an_enqueue_of_many_fills_a_bounded_queue_as_room_appears) {
  TupleQueue q = fifo(2);
  std::optional<Status> enqueued;
  BOOST_TEST(q.enqueue(many(0, 5), [&](const Status& s) { enqueued = s; }) != TupleQueue::kServed);
  BOOST_TEST(q.size() == 2u);
  Taken first;
  q.dequeue(2, false, first.callback());
  BOOST_TEST((first.values == std::vector<int32_t>{0, 1}));
  BOOST_TEST(!enqueued.has_value());  // 4 is still waiting
  Taken second;
  q.dequeue(3, false, second.callback());
  BOOST_REQUIRE(enqueued.has_value());
  BOOST_TEST(enqueued->ok());
  BOOST_TEST((second.values == std::vector<int32_t>{2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(a_closed_queue_gives_what_is_left_up_to_n_or_out_of_range) {
  TupleQueue q = fifo();
  q.enqueue(many(0, 3), [](const Status&) {});
  Taken many_waiting;
  q.dequeue(5, false, many_waiting.callback());
  BOOST_TEST(!many_waiting.status.has_value());
  q.close(false);
  BOOST_REQUIRE(many_waiting.status.has_value());
  BOOST_TEST((many_waiting.status->code() == Code::kOutOfRange));
  BOOST_TEST(many_waiting.status->message().find("requested 5, current size 3") !=
             std::string::npos);
  Taken up_to;
  q.dequeue(5, true, up_to.callback());
  BOOST_TEST((up_to.values == std::vector<int32_t>{0, 1, 2}));
  Taken none_left;
  q.dequeue(1, true, none_left.callback());
  BOOST_TEST((none_left.status->code() == Code::kOutOfRange));
  std::optional<Status> late;
  q.enqueue(many(0, 1), [&](const Status& s) { late = s; });
  BOOST_TEST((late->code() == Code::kCancelled));
}

BOOST_AUTO_TEST_CASE(a_random_shuffle_queue_keeps_min_after_dequeue_until_closed) {
  TupleQueue q("q", {DataType::kInt32}, {PartialShape::scalar()}, -1,
               TupleQueue::Shuffle{.min_after_dequeue = 3, .seed = 42});
  q.enqueue(many(0, 4), [](const Status&) {});
  Taken first;
  q.dequeue(1, false, first.callback());
  BOOST_TEST(first.values.size() == 1u);  // 4 > 3 kept
  Taken second;
  q.dequeue(1, false, second.callback());
  BOOST_TEST(!second.status.has_value());  // only 3 left: waits
  q.close(false);
  BOOST_TEST(second.values.size() == 1u);
  Taken rest;
  q.dequeue(2, false, rest.callback());
  std::vector<int32_t> all = first.values;
  all.insert(all.end(), second.values.begin(), second.values.end());
  all.insert(all.end(), rest.values.begin(), rest.values.end());
  std::sort(all.begin(), all.end());
  BOOST_TEST((all == std::vector<int32_t>{0, 1, 2, 3}));
}

BOOST_AUTO_TEST_CASE(a_seeded_random_shuffle_queue_repeats_its_order_and_shuffles) {
  auto order = [](uint64_t seed) {
    TupleQueue q("q", {DataType::kInt32}, {PartialShape::scalar()}, -1,
                 TupleQueue::Shuffle{.min_after_dequeue = 0, .seed = seed});
    q.enqueue(many(0, 50), [](const Status&) {});
    Taken taken;
    q.dequeue(50, false, taken.callback());
    return taken.values;
  };
  const std::vector<int32_t> a = order(7);
  BOOST_TEST((a == order(7)));
  BOOST_TEST((a != order(8)));
  std::vector<int32_t> in_order(50);
  for (int32_t i = 0; i < 50; ++i)
    in_order[i] = i;
  BOOST_TEST((a != in_order));
  std::vector<int32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST((sorted == in_order));
}

BOOST_AUTO_TEST_CASE(a_dequeue_of_none_is_served_at_once_even_behind_others) {
  TupleQueue q = fifo();
  Taken waiting, none;
  q.dequeue(1, false, waiting.callback());
  BOOST_TEST(q.dequeue(0, false, none.callback()) == TupleQueue::kServed);
  BOOST_TEST(none.status.has_value());
  BOOST_TEST(none.values.empty());
  BOOST_TEST(!waiting.status.has_value());
}

BOOST_AUTO_TEST_CASE(cancelling_a_waiting_dequeue_of_many_serves_the_next) {
  TupleQueue q = fifo();
  Taken big, small;
  TupleQueue::Waiter waiter = q.dequeue(10, false, big.callback());
  q.dequeue(1, false, small.callback());
  q.enqueue(many(0, 2), [](const Status&) {});
  BOOST_TEST(!small.status.has_value());  // behind the dequeue of ten
  BOOST_TEST(q.cancel(waiter, errors::Cancelled("step cancelled")));
  BOOST_TEST((big.status->code() == Code::kCancelled));
  BOOST_TEST((small.values == std::vector<int32_t>{0}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
