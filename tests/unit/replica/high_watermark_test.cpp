#include <catch2/catch.hpp>

#include "actors/replica/high_watermark.hpp"

using namespace capstan;

TEST_CASE("a leader alone in the ISR has its log end as high watermark", "[replica][hw]") {
  high_watermark_tracker hw(node_id{1}, offset{5}, offset{3});
  CHECK(hw.high_watermark() == offset{5});
  CHECK(hw.isr_size() == 1);
  CHECK(hw.on_leader_append(offset{9}));
  CHECK(hw.high_watermark() == offset{9});
  CHECK_FALSE(hw.on_leader_append(offset{9}));
}

TEST_CASE("the high watermark is the smallest log end over the ISR", "[replica][hw]") {
  high_watermark_tracker hw(node_id{1}, offset{10}, offset{4}, {node_id{2}, node_id{3}});
  CHECK(hw.isr_size() == 3);
  CHECK(hw.high_watermark() == offset{4});
  CHECK_FALSE(hw.on_follower_leo(node_id{2}, offset{8}));
  CHECK(hw.on_follower_leo(node_id{3}, offset{6}));
  CHECK(hw.high_watermark() == offset{6});
  CHECK(hw.on_follower_leo(node_id{3}, offset{10}));
  CHECK(hw.high_watermark() == offset{8});
}

TEST_CASE("the high watermark never moves backwards", "[replica][hw]") {
  high_watermark_tracker hw(node_id{1}, offset{10}, offset{10});
  hw.set_isr({node_id{1}, node_id{2}});
  CHECK(hw.high_watermark() == offset{10});
  CHECK_FALSE(hw.on_follower_leo(node_id{2}, offset{3}));
  CHECK(hw.high_watermark() == offset{10});
}

TEST_CASE("shrinking the ISR lets the high watermark advance, outsiders do not count",
          "[replica][hw]") {
  high_watermark_tracker hw(node_id{1}, offset{0}, offset{0});
  hw.set_isr({node_id{1}, node_id{2}});
  hw.on_leader_append(offset{7});
  CHECK(hw.high_watermark() == offset{0});
  CHECK_FALSE(hw.on_follower_leo(node_id{9}, offset{7}));
  hw.set_isr({node_id{1}});
  CHECK(hw.high_watermark() == offset{7});
  CHECK_FALSE(hw.in_isr(node_id{2}));
}
