// Bytes are conserved end to end: what the collective schedules send is what the transport
// carries and delivers, and it equals the closed form 2(W-1)/W * S per rank per all-reduce.
#include <gtest/gtest.h>

#include "tests/cosim/job_fixture.h"

namespace nbox::testing {
namespace {

TEST(Conservation, AllReducePayloadMatchesClosedFormAndIsDelivered) {
  StarJob setup;
  setup.world = 4;
  setup.channels = 2;
  setup.chunk_bytes = 256 << 10;
  setup.network.mtu = 9000;
  const uint64_t bytes = 8 << 20;  // divisible by W * channels * element size
  const int iterations = 3;
  const auto outcome = RunOnStar(setup, AllReduceProgram(bytes, iterations));
  ASSERT_TRUE(outcome.finished);

  const uint64_t closed_form =
      static_cast<uint64_t>(iterations) * setup.world * 2 * (setup.world - 1) * bytes / setup.world;
  EXPECT_EQ(outcome.schedule_bytes, closed_form);
  EXPECT_EQ(outcome.transport.bytesSent, closed_form);
  EXPECT_EQ(outcome.transport.bytesDelivered, closed_form);
  EXPECT_EQ(outcome.transport.messagesDelivered, outcome.transport.messagesSent);
  // Every payload byte crossed two links (host -> switch -> host) with headers on top.
  EXPECT_GE(outcome.network.wireBytes, 2 * closed_form);
  EXPECT_LT(outcome.network.wireBytes, 2 * closed_form * 1.02 + 2'000'000);
}

}  // namespace
}  // namespace nbox::testing
