/*
 * Shared pieces of the nbox module's GoogleTest tests.
 */
#ifndef NBOX_TEST_UTIL_H
#define NBOX_TEST_UTIL_H

#include "ns3/config.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <gtest/gtest.h>

namespace ns3
{
namespace test
{

/** Runs the simulation until it has no events left or `limit` of simulated time. */
inline void
RunFor(Time limit)
{
    Simulator::Stop(limit);
    Simulator::Run();
}

/**
 * Base fixture: every test starts and ends with a fresh simulator and attribute defaults,
 * so tests sharing one binary cannot leak state (NboxNetworkHelper sets TCP defaults).
 * Reset() also serves tests that build several networks in turn.
 */
class NboxNs3Test : public ::testing::Test
{
  protected:
    void
    SetUp() override
    {
        Reset();
    }

    void
    TearDown() override
    {
        Reset();
    }

    static void
    Reset()
    {
        Simulator::Destroy();
        Config::Reset();
    }
};

/** Bytes a TCP segment adds to its payload on a point-to-point wire: IP 20, TCP 20, the
 * timestamp option 12 (10 padded to 12), PPP 2. Written out here, not taken from the code
 * under test. */
constexpr uint32_t kWireOverheadBytes = 20 + 20 + 12 + 2;

/** TCP payload per segment at IP MTU `mtu`: the MTU minus IP, TCP and timestamp headers. */
constexpr uint32_t
PayloadPerSegment(uint32_t mtu)
{
    return mtu - 20 - 20 - 12;
}

} // namespace test
} // namespace ns3

#endif /* NBOX_TEST_UTIL_H */
