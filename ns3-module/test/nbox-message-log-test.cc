/*
 * NboxMessageLog: without a sink it holds every message; with one it hands each message on in
 * posting order once it and every earlier one are delivered, so it holds only the messages
 * from the oldest one in flight on; Flush hands on the rest, delivered or not.
 */
#include "ns3/nbox-message-log.h"
#include "ns3/nstime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

NboxMessageRecord
Message(uint32_t src, uint32_t dst, uint64_t bytes)
{
    NboxMessageRecord m;
    m.src = src;
    m.dst = dst;
    m.bytes = bytes;
    return m;
}

/** What a sink received: ids, and whether each was delivered when handed on. */
struct Received
{
    std::vector<uint64_t> ids;
    std::vector<bool> delivered;
    std::vector<uint64_t> bytes;

    NboxMessageLog::Sink
    Sink()
    {
        return [this](uint64_t id, const NboxMessageRecord& m)
        {
            ids.push_back(id);
            delivered.push_back(m.isDelivered);
            bytes.push_back(m.bytes);
        };
    }
};

TEST(NboxMessageLog, WithoutASinkEveryMessageIsHeld)
{
    NboxMessageLog log;
    log.Enable(2);
    EXPECT_EQ(log.Post(Message(0, 1, 10), "a"), 0u);
    EXPECT_EQ(log.Post(Message(1, 0, 20), "b"), 1u);
    EXPECT_EQ(log.Post(Message(0, 1, 30), "a"), 2u);
    log.Deliver(1, MicroSeconds(5));
    log.Deliver(0, MicroSeconds(6));
    ASSERT_EQ(log.GetHeld().size(), 3u);
    EXPECT_EQ(log.GetFirstHeld(), 0u);
    EXPECT_EQ(log.GetHeld()[1].delivered, MicroSeconds(5));
    EXPECT_FALSE(log.GetHeld()[2].isDelivered);
    EXPECT_EQ(log.GetLabels(), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(log.GetHeld()[2].label, 0u);
}

/** A log of a 3-rank job whose sink records what it gets. */
class NboxMessageLogWithSink : public ::testing::Test
{
  protected:
    NboxMessageLogWithSink()
    {
        log.Enable(3);
        log.SetSink(got.Sink());
    }

    NboxMessageLog log;
    Received got;
};

TEST_F(NboxMessageLogWithSink, MessagesGoInPostingOrderOnceEveryEarlierOneIsDelivered)
{
    log.Post(Message(0, 1, 10), "x");
    log.Post(Message(1, 2, 20), "x");
    log.Post(Message(2, 0, 30), "x");
    log.Deliver(1, MicroSeconds(1)); // message 0 is still in flight: nothing handed on
    EXPECT_TRUE(got.ids.empty());
    EXPECT_EQ(log.GetHeld().size(), 3u);
    log.Deliver(0, MicroSeconds(2)); // 0 and then 1
    EXPECT_EQ(got.ids, (std::vector<uint64_t>{0, 1}));
    EXPECT_EQ(got.bytes, (std::vector<uint64_t>{10, 20}));
    EXPECT_EQ(log.GetHeld().size(), 1u);
    EXPECT_EQ(log.GetFirstHeld(), 2u);
    // Ids go on counting from where they were.
    EXPECT_EQ(log.Post(Message(0, 2, 40), "y"), 3u);
    log.Deliver(3, MicroSeconds(3));
    EXPECT_EQ(got.ids.size(), 2u); // 2 still in flight
    log.Deliver(2, MicroSeconds(4));
    EXPECT_EQ(got.ids, (std::vector<uint64_t>{0, 1, 2, 3}));
    EXPECT_EQ(got.delivered, (std::vector<bool>{true, true, true, true}));
    EXPECT_TRUE(log.GetHeld().empty());
    EXPECT_EQ(log.GetFirstHeld(), 4u);
}

TEST_F(NboxMessageLogWithSink, FlushHandsOnWhatIsStillInFlight)
{
    log.Post(Message(0, 1, 1), "x");
    log.Post(Message(1, 0, 2), "x");
    log.Deliver(1, MicroSeconds(1));
    log.Flush();
    EXPECT_EQ(got.ids, (std::vector<uint64_t>{0, 1}));
    EXPECT_EQ(got.delivered, (std::vector<bool>{false, true}));
    EXPECT_TRUE(log.GetHeld().empty());
}

// Messages posted four at a time and delivered out of order within each four (the second,
// the fourth, the first, the third), 10,000 in all: the log never holds more than the four.
TEST_F(NboxMessageLogWithSink, ItHoldsOnlyWhatIsInFlight)
{
    constexpr uint64_t kMessages = 10000;
    size_t most_held = 0;
    for (uint64_t first = 0; first < kMessages; first += 4)
    {
        for (uint64_t id = first; id < first + 4; ++id)
        {
            EXPECT_EQ(log.Post(Message(0, 1, id), "x"), id);
        }
        most_held = std::max(most_held, log.GetHeld().size());
        for (uint64_t offset : {1, 3, 0, 2})
        {
            log.Deliver(first + offset, MicroSeconds(first));
        }
        EXPECT_TRUE(log.GetHeld().empty());
    }
    EXPECT_EQ(most_held, 4u);
    ASSERT_EQ(got.ids.size(), kMessages);
    for (uint64_t id = 0; id < kMessages; ++id)
    {
        EXPECT_EQ(got.ids[id], id);
        EXPECT_EQ(got.bytes[id], id);
    }
}

using NboxMessageLogWithSinkDeathTest = NboxMessageLogWithSink;

TEST_F(NboxMessageLogWithSinkDeathTest, ASecondDeliveryIsRefusedEvenAfterTheMessageWasHandedOn)
{
    log.Post(Message(0, 1, 1), "x");
    log.Deliver(0, MicroSeconds(1));
    EXPECT_DEATH(log.Deliver(0, MicroSeconds(2)), "delivered twice or never posted");
    EXPECT_DEATH(log.Deliver(7, MicroSeconds(2)), "delivered twice or never posted");
}

} // namespace
} // namespace test
} // namespace ns3
